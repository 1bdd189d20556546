"""What every format reader shares: the format names, the items a reader yields, the `Shape` error, and
small field readers (a trimmed string or None, a line reference, the last part of a path).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from memvault.model import InputProblem, Message


FORMATS = ("jsonl", "openai", "chatgpt", "claude-code", "codex", "sillytavern", "cursor", "gemini",
           "antigravity", "claude-ai", "opencode", "text")

Item = Message | InputProblem


class Shape(Exception):
    """A record that parsed as JSON but is not what the format promises. The message names fields only."""


def line_ref(state: dict, lineno: int) -> str:
    return f"{state['name']}:{lineno}"


def str_or_none(v: object) -> str | None:
    if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip():
        return str(v).strip()
    return None


SPEAKER_CHARS = 80


def speaker_or_none(v: object) -> str | None:
    """A speaker's name as the log gives it: one line, at most SPEAKER_CHARS characters, or None."""
    name = str_or_none(v) if isinstance(v, str) else None
    if name is None:
        return None
    name = " ".join(name.split())
    return name[:SPEAKER_CHARS] or None


def session_from_name(name: str) -> str | None:
    """A session named by its file (SillyTavern's "<character> - <date>.jsonl", Cursor's "<id>.jsonl"): the
    name without its folder and `.jsonl`; None on stdin (capture then derives one from the opening)."""
    if name.startswith("<"):
        return None
    base = basename(name) or ""
    stem = base[:-6] if base.lower().endswith(".jsonl") else base
    return stem or None


def started(items: Iterable[Item]) -> Iterator[Item]:
    """The items of a conversation that a document holds from its first message: that message marked `start`."""
    first = True
    for item in items:
        if first and isinstance(item, Message) and item.role != "rewound":
            item = Message(**{**item.__dict__, "start": True})
            first = False
        yield item


def basename(path: object) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return None
    parts = [p for p in re.split(r"[\\/]+", path.strip()) if p]
    return parts[-1] if parts else None
