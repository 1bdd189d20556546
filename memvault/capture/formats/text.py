"""The text format: a plain transcript split on speaker lines (`User:`, `**Assistant:**`, `[2026-03-02 09:15]
用户：`); lines before the first speaker belong to nobody.
"""

from __future__ import annotations

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
# `**User:**`, `User：`, `[2026-03-02 09:15] Assistant: …`. "You"/"Me"/"我" are left out on purpose: they
# start ordinary sentences too often to split on.
SPEAKER_LINE = re.compile(
    r"^\s*(?:\[(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)\]\s*)?"
    r"(?:\*\*|__)?"
    r"(?P<who>user|human|assistant|ai|chatgpt|gpt|claude|bot|system|用户|人类|助手|ai助手|系统)"
    r"\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?[ \t]?(?P<rest>.*)$",
    re.IGNORECASE,
)


def read(stream: typing.BinaryIO, name: str, max_line_bytes: int) -> Iterator[Item]:
    """The messages of a transcript, one per speaker line and the lines that follow it."""
    current: dict | None = None
    for lineno, line, problems in iter_lines(stream, name, max_line_bytes):
        yield from problems
        if line is None:
            continue
        m = SPEAKER_LINE.match(line)
        if m:
            if current:
                yield _message(current)
            current = {"role": SPEAKERS[m.group("who").lower()], "lines": [m.group("rest")],
                       "ref": f"{name}:{lineno}", "ts": normalize_ts(m.group("ts"))}
        elif current is not None:
            current["lines"].append(line)
        # Lines before the first speaker (a title, a date) belong to nobody.
    if current:
        yield _message(current)


def _message(cur: dict) -> Message:
    return Message(role=cur["role"], text="\n".join(cur["lines"]).strip(), ref=cur["ref"], ts=cur["ts"])
