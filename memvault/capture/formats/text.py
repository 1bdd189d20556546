"""The text format: a plain transcript split on speaker lines (`User:`, `**Assistant:**`, `[2026-03-02 09:15]
用户：`); lines before the first speaker belong to nobody.

A transcript kept as notes has sections: a dated heading (`## 2026-03-06 - Seed order`, `### 2026/03/12`,
`# 2026年3月6日`, `## March 6, 2026`) dates the turns below it, and a speaker line's own stamp (a full one, or
`[09:15]` under a dated heading) wins. Headings and rules (`---`, `***`) that stand between a message and the
next speaker line are the transcript's structure, never message text; a heading followed by more text inside a
message (an answer with sections) stays in it.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Iterator

from memvault.model import Message

from .lines import iter_lines
from .records import Item
from .times import normalize_ts


SPEAKERS = {
    "user": "user", "human": "user", "用户": "user", "人类": "user",
    "assistant": "assistant", "ai": "assistant", "chatgpt": "assistant", "gpt": "assistant",
    "claude": "assistant", "bot": "assistant", "助手": "assistant", "ai助手": "assistant",
    "system": "system", "系统": "system",
}
# `**User:**`, `User：`, `[2026-03-02 09:15] Assistant: …`, `[09:15] User: …`. "You"/"Me"/"我" are left out on
# purpose: they start ordinary sentences too often to split on.
SPEAKER_LINE = re.compile(
    r"^\s*(?:\[(?:(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)"
    r"|(?P<tm>\d{1,2}:\d{2}(?::\d{2})?))\]\s*)?"
    r"(?:\*\*|__)?"
    r"(?P<who>user|human|assistant|ai|chatgpt|gpt|claude|bot|system|用户|人类|助手|ai助手|系统)"
    r"\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?[ \t]?(?P<rest>.*)$",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_RULE = re.compile(r"^\s{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
# The dates a heading may hold: 2026-03-06, 2026/3/6, 2026.03.06, 2026年3月6日, March 6, 2026, 6 March 2026.
_DATES = (
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), (1, 2, 3)),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), (1, 2, 3)),
    (re.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b"), (3, 1, 2)),
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})\b"), (3, 2, 1)),
)


def read(stream: typing.BinaryIO, name: str, max_line_bytes: int) -> Iterator[Item]:
    """The messages of a transcript, one per speaker line and the lines that follow it."""
    current: dict | None = None
    held: list[str] = []  # blank and structure lines after the current message's last text line
    held_date: str | None = None  # the date of a dated heading among them
    day: str | None = None  # "YYYY-MM-DD" of the last dated heading that stood as structure
    fence = False
    for lineno, line, problems in iter_lines(stream, name, max_line_bytes):
        yield from problems
        if line is None:
            continue
        m = SPEAKER_LINE.match(line)
        if m:
            if current:
                yield _message(current)
            day = held_date or day
            held, held_date, fence = [], None, False
            current = {"role": SPEAKERS[m.group("who").lower()], "lines": [m.group("rest")],
                       "ref": f"{name}:{lineno}", "ts": _stamp(m.group("ts"), m.group("tm"), day)}
            continue
        lead = line.lstrip()[:1]  # most lines are text: only these first characters can start structure
        if lead in ("`", "~") and _FENCE.match(line):
            fence = not fence
        elif not fence and (not lead or (lead in "#-*_" and (_HEADING.match(line) or _RULE.match(line)))):
            # Trigger: a heading, a rule or a blank line. Why: it is the transcript's structure when only more
            # of the same lies before the next speaker line, and text of the message when text follows.
            # Outcome: held back; joined to the message when text follows, dropped at the next speaker.
            date = _heading_date(line) if _HEADING.match(line) else None
            if current is None:
                day = date or day  # before the first speaker (or after a section's end): nobody's line
            else:
                held.append(line)
                held_date = date or held_date
            continue
        if current is not None:
            current["lines"].extend(held)
            current["lines"].append(line)
        held, held_date = [], None
        # Lines before the first speaker (a title, a note) belong to nobody.
    if current:
        yield _message(current)


def _message(cur: dict) -> Message:
    return Message(role=cur["role"], text="\n".join(cur["lines"]).strip(), ref=cur["ref"], ts=cur["ts"])


@functools.lru_cache(maxsize=1024)  # a transcript repeats its day on every speaker line below a heading
def _stamp(full: str | None, time_only: str | None, day: str | None) -> str | None:
    """A speaker line's time: its own full stamp, else its time on the day of the heading above, else that day."""
    if full:
        return normalize_ts(full)
    if day and time_only:
        hms = [int(x) for x in time_only.split(":")] + [0]
        return normalize_ts(f"{day}T{hms[0]:02d}:{hms[1]:02d}:{hms[2]:02d}Z") or normalize_ts(day)
    return normalize_ts(day) if day else None


def _heading_date(line: str) -> str | None:
    """"YYYY-MM-DD" of the first real date in a heading, or None."""
    for pattern, (yi, mi, di) in _DATES:
        for m in pattern.finditer(line):
            year, month, day = m.group(yi), m.group(mi), m.group(di)
            month_no = int(month) if month.isdigit() else _MONTHS.get(month[:3].lower())
            if month_no is None:
                continue
            iso = f"{int(year):04d}-{month_no:02d}-{int(day):02d}"
            if normalize_ts(iso):
                return iso
    return None
