"""Cron rules for `distill --auto`: pure arithmetic on times and counts, no model call, no file access.

Order: min_gap_minutes (since the last attempt) is checked first, then quiet_hours, then whether anything
waits, then min_episodes, then every_minutes (since the last successful distill, or since the oldest waiting
episode when there was none). quiet_hours "HH:MM-HH:MM" is local time and may wrap midnight ("23:00-07:00"); an unparseable value is
ignored with a warning, never fatal (a cron job must not die on a typo).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_HM = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")


@dataclass(frozen=True)
class Decision:
    run: bool
    reason: str
    warnings: tuple[str, ...] = field(default_factory=tuple)
    held: bool = False  # min_gap_minutes or quiet_hours said no: nothing else --auto does runs now either

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "reason": self.reason, "warnings": list(self.warnings)}


def parse_quiet_hours(text: str) -> tuple[int, int] | None:
    """'23:00-07:00' -> (1380, 420) minutes after midnight. None when empty; ValueError when unparseable."""
    if not text or not str(text).strip():
        return None
    m = _HM.match(str(text))
    if not m:
        raise ValueError(f"quiet_hours {text!r} is not HH:MM-HH:MM")
    h1, m1, h2, m2 = (int(x) for x in m.groups())
    if h1 > 23 or h2 > 23 or m1 > 59 or m2 > 59:
        raise ValueError(f"quiet_hours {text!r} has an impossible time")
    return h1 * 60 + m1, h2 * 60 + m2


def in_quiet_hours(minute_of_day: int, window: tuple[int, int]) -> bool:
    start, end = window
    if start == end:
        return False
    if start < end:
        return start <= minute_of_day < end
    return minute_of_day >= start or minute_of_day < end  # wraps midnight


def _utc(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return None


def decide(
    rules: Mapping[str, Any],
    *,
    now_utc: str,
    local_minute: int,
    pending: int,
    last_attempt: str | None,
    last_success: str | None,
    oldest_pending: str | None = None,
) -> Decision:
    """Should `distill --auto` run now? `local_minute` is minutes after local midnight (quiet hours are local)."""
    warnings: list[str] = []
    now = _utc(now_utc)
    if now is None:
        raise ValueError("now_utc must be YYYY-MM-DDTHH:MM:SSZ")
    gap = float(rules.get("min_gap_minutes") or 0)
    attempt = _utc(last_attempt)
    if attempt is not None and gap > 0:
        since = (now - attempt).total_seconds() / 60
        if 0 <= since < gap:
            return Decision(False, f"last attempt {since:.0f} min ago, min_gap_minutes is {gap:g}", held=True)
    try:
        window = parse_quiet_hours(str(rules.get("quiet_hours") or ""))
    except ValueError as exc:
        warnings.append(f"auto.{exc}; ignored")
        window = None
    if window is not None and in_quiet_hours(local_minute, window):
        return Decision(False, f"inside quiet_hours {rules.get('quiet_hours')}", tuple(warnings), held=True)
    if pending <= 0:
        return Decision(False, "no episodes waiting", tuple(warnings))
    need = int(rules.get("min_episodes") or 0)
    if pending >= need:
        return Decision(True, f"{pending} episodes waiting (min_episodes {need})", tuple(warnings))
    every = float(rules.get("every_minutes") or 0)
    # Never distilled: the clock starts with the oldest waiting episode instead.
    ref = _utc(last_success) or _utc(oldest_pending)
    what = "last distill" if _utc(last_success) else "oldest waiting episode"
    if ref is None:
        return Decision(True, f"{pending} episodes waiting, no earlier distill", tuple(warnings))
    since = (now - ref).total_seconds() / 60
    if every > 0 and since >= every:
        return Decision(True, f"{pending} episodes waiting, {what} {since:.0f} min ago "
                        f"(every_minutes {every:g})", tuple(warnings))
    return Decision(False, f"{pending} of min_episodes {need} waiting, {what} {since:.0f} min ago "
                    f"(every_minutes {every:g})", tuple(warnings))
