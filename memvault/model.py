"""Plain records shared by every layer. Pure: no I/O, no imports from memvault but errors and voices."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Re-exported: the words of a turn are light to import (the search path never imports this module).
from memvault.voices import speaker_label, turn_text, voiced  # noqa: F401

# Order of keys in a card's front matter. Unknown keys a person added follow, in their own order.
CARD_KEYS = (
    "id", "kind", "title", "project", "entities", "created", "valid_from", "valid_to", "status",
    "confidence", "subject", "field", "value", "source", "supersedes", "superseded_by", "tags",
)
CARD_STATUSES = ("active", "superseded", "retracted")
CONFIDENCES = ("user_stated", "inferred", "tentative", "extracted")  # extracted: the offline engine


@dataclass(frozen=True)
class Message:
    """One message read from a chat log, before it is grouped into a turn.

    `ref` points back to the exact input (a message id, or `name:line`). `harness` marks text that a tool
    injected in the user's name (Claude Code's tool results, command output …), which never opens a turn.
    """

    role: str  # user | assistant | system | tool; rewound, greeting: counted as skipped, never a turn
    text: str
    ref: str
    ts: str | None = None  # ISO-8601 UTC, "YYYY-MM-DDTHH:MM:SSZ"
    session: str | None = None
    project: str | None = None
    tools: int = 0  # tool calls/results carried by this message (counted, never stored)
    harness: bool = False
    start: bool = False  # the input holds the conversation's first message (not a cut): set on that message
    speaker: str | None = None  # the name the log gives whoever said it (a character, a participant), if any
    cwd: str | None = None  # the working folder the log names (agents' logs), for capture.exclude paths


@dataclass(frozen=True)
class InputProblem:
    """A line or record of the input that could not be read. Never carries the input's text."""

    source: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class Episode:
    """One turn: a user message and everything the assistant answered until the next user message."""

    id: str
    at: str
    project: str
    session: str
    turn: int
    user: str
    assistant: str
    tools: int = 0
    source: dict[str, Any] = dataclasses.field(default_factory=dict)
    hash: str = ""
    v: int = 1
    # Who spoke, when the log names them (role-play characters, chat participants): role -> names in order of
    # speaking, e.g. {"user": ["Anna"], "assistant": ["Seraphina", "Kael"]}. Not part of `hash`.
    speakers: dict[str, list[str]] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Revoke:
    """A line that withdraws earlier episodes (history edit or purge). Appended, never rewriting."""

    ids: tuple[str, ...]
    reason: str  # history-edit | purge
    at: str
    session: str | None = None
    v: int = 1


@dataclass(frozen=True)
class Card:
    """A memory card: YAML front matter + a short markdown body.

    `extra` keeps unknown front-matter keys in their original order so a round trip is lossless.
    """

    id: str
    kind: str
    title: str
    body: str = ""
    project: str | None = None
    entities: tuple[str, ...] = ()
    created: str = ""
    valid_from: str | None = None
    valid_to: str | None = None
    status: str = "active"
    confidence: str = "user_stated"
    subject: str | None = None
    field: str | None = None
    value: str | None = None
    source: dict[str, Any] = dataclasses.field(default_factory=dict)
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def episodes(self) -> tuple[str, ...]:
        return tuple(self.source.get("episodes") or ())


@dataclass(frozen=True)
class Entity:
    """An entity page: front matter, free prose a person wrote, and the generated mention block."""

    slug: str
    name: str
    aliases: tuple[str, ...] = ()
    kind: str | None = None
    prose: str = ""
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


# Card links: pure transitions every writer of cards shares (distill, remember, import, synopsis rule).


def union(a: Iterable[str], b: Iterable[str]) -> tuple[str, ...]:
    """Items of `a`, then those of `b` not in `a`, in order."""
    out = list(a)
    out += [x for x in b if x not in out]
    return tuple(out)


def _day(card: Card) -> str:
    return (card.valid_from or card.created or "")[:10]


def supersede(old: Card, new: Card) -> tuple[Card, Card]:
    """Link `new` as the successor of `old`, or, when `new` holds from an earlier date than `old` (learned late
    but true earlier), make `new` born superseded by `old`. Returns (old', new')."""
    if _day(new) and _day(old) and _day(new) < _day(old):
        born = dataclasses.replace(
            new, status="superseded", valid_to=_day(old), superseded_by=union(new.superseded_by, (old.id,)),
        )
        return dataclasses.replace(old, supersedes=union(old.supersedes, (new.id,))), born
    retired = dataclasses.replace(
        old, status="superseded", valid_to=_day(new) or old.valid_to,
        superseded_by=union(old.superseded_by, (new.id,)),
    )
    return retired, dataclasses.replace(new, supersedes=union(new.supersedes, (old.id,)))


FOLD_SOURCE = "fold"  # source.kind of a folded card (memvault.distill.fold writes them)
RULES_SOURCE = "rules"  # source.kind of a card `import-rules` read from an agent's rules file (`ref: FILE:LINE`)


def is_folded(card: Card) -> bool:
    """A card `consolidate` folded other cards into (it lists and supersedes them)."""
    return (card.source or {}).get("kind") == FOLD_SOURCE


def sourceless_label(source: Mapping[str, Any] | None) -> str:
    """What `show` says of a card with no source turns: by hand (`remember`), or built from other cards."""
    kind = (source or {}).get("kind")
    if kind == RULES_SOURCE and isinstance((source or {}).get("ref"), str):
        return f"{source['ref']} (a rules file; memvault import-rules)"
    return {FOLD_SOURCE: "(none: folded from the cards it lists)",
            "consolidate": "(none: a synopsis of the project's cards)"}.get(kind, "(written by hand)")
