"""Timestamps: any stamp met in a chat log (epoch seconds or ms, ISO 8601, SillyTavern's human and `@` stamps)
-> "YYYY-MM-DDTHH:MM:SSZ" in UTC, or None when unknown.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone


_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
# SillyTavern's older message stamp: "May 1, 2024 12:34pm" (local time, no zone — read as UTC).
_HUMAN_TS = re.compile(
    r"^([A-Za-z]{3,9})\.? (\d{1,2}), (\d{4}),? (\d{1,2}):(\d{2})(?::(\d{2}))? ?([AaPp][Mm])?$")
# SillyTavern's chat create_date / file-name stamp: "2024-05-01@12h34m56s" (optionally with ms).
_AT_TS = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s(?:\s*\d+ms)?$")


def normalize_ts(value: object) -> str | None:
    """Any timestamp we meet in a chat log -> "YYYY-MM-DDTHH:MM:SSZ" (UTC), or None when unknown."""
    dt = _parse_ts(value)
    if dt is None or not 1971 <= dt.year <= 2200:
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_ts(value: object) -> datetime | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return _from_epoch(float(value))
    if not isinstance(value, str):
        return None
    s = value.strip()
    if not s:
        return None
    if re.fullmatch(r"\d+(\.\d+)?", s):
        return _from_epoch(float(s))
    m = _AT_TS.match(s)
    if m:
        y, mo, d, h, mi, se = map(int, m.groups())
        return _safe_dt(y, mo, d, h, mi, se)
    m = _HUMAN_TS.match(s)
    if m:
        mon = _MONTHS.get(m.group(1)[:3].lower())
        if mon is None:
            return None
        hour, minute, sec = int(m.group(4)), int(m.group(5)), int(m.group(6) or 0)
        ampm = (m.group(7) or "").lower()
        if ampm:
            if not 1 <= hour <= 12:
                return None
            hour = hour % 12 + (12 if ampm == "pm" else 0)
        return _safe_dt(int(m.group(3)), mon, int(m.group(2)), hour, minute, sec)
    iso = s[:-1] + "+00:00" if s[-1:] in "Zz" else s
    # fromisoformat (3.11) takes 1-6 fraction digits only; some writers emit 7 or 9.
    iso = re.sub(r"(\.\d{6})\d+", r"\1", iso)
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def _from_epoch(x: float) -> datetime | None:
    if x != x or x <= 0:  # NaN or not a real moment
        return None
    if x > 1e11:  # milliseconds (1e11 s would be the year 5138)
        x /= 1000.0
    try:
        return datetime.fromtimestamp(x, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _safe_dt(y: int, mo: int, d: int, h: int, mi: int, s: int) -> datetime | None:
    try:
        return datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc)
    except ValueError:
        return None
