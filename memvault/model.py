"""Plain records shared by every layer. Pure: no I/O, no imports from memvault but errors."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

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

    role: str  # user | assistant | system | tool
    text: str
    ref: str
    ts: str | None = None  # ISO-8601 UTC, "YYYY-MM-DDTHH:MM:SSZ"
    session: str | None = None
    project: str | None = None
    tools: int = 0  # tool calls/results carried by this message (counted, never stored)
    harness: bool = False
    start: bool = False  # the input holds the conversation's first message (not a cut): set on that message


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
