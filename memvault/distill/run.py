"""The state of one distill run: its Summary, the Run every batch step reads, the ways a batch stops, and the
fault-injection points of the kill -9 tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memvault.model import Card, Episode
from memvault.vault.pages import EntityTable
from memvault.vault.faults import crash_point  # noqa: F401 - re-exported: the distill steps' points
from memvault.vault.store import Vault

FAILURE_CLASSES = ("llm_error", "truncated", "invalid_output")
CARD_COUNTS = ("created", "updated", "merged", "superseded")
# What code mended or dropped in a model's replies (proposals.REPAIRS, and decide's drops); counted per run.
REPAIR_COUNTS = ("target_dropped", "update_to_create", "noop_dropped", "update_as_new_fact", "keys_dropped",
                 "kind_fixed", "ungrounded_dropped", "quoted_dropped", "question_dropped", "reason_joined",
                 "cut_long", "cards_cut", "old_dropped", "meta_dropped", "speaker_fixed",
                 # a review's (distill/review.py): drafts not kept, corrections taken or refused, added rows
                 # refused, a keep list saved from a reply cut off in its additions
                 "drafts_dropped", "statement_fixed", "fix_dropped", "add_dropped", "add_cut")


@dataclass
class Summary:
    """What a run did, counted; to_json() is what `memvault distill --json` prints."""

    run: str = ""
    dry_run: bool = False
    pending_before: int = 0  # episodes waiting before the run
    pending_after: int = 0  # ... and after it
    batches: int = 0  # batches committed
    calls: int = 0  # model calls, with their tokens:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    episodes_distilled: int = 0
    # cards the batches wrote, by what happened to them (CARD_COUNTS); `empty` counts batches that wrote none
    cards: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CARD_COUNTS, 0))
    empty: int = 0
    # episodes that gave no card, by why (the offline engine): a language it reads only by signs, no statement
    nothing: dict[str, int] = field(default_factory=lambda: {"unread_language": 0, "no_statement": 0})
    failures: dict[str, int] = field(default_factory=lambda: {k: 0 for k in FAILURE_CLASSES})
    errors: list[str] = field(default_factory=list)
    failed_episodes: list[str] = field(default_factory=list)  # of the failed batches: they stay pending
    untried_episodes: list[str] = field(default_factory=list)  # not sent after the endpoint failed: pending too
    suspect: list[dict[str, Any]] = field(default_factory=list)  # empty answers the offline engine disagrees with
    repairs: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REPAIR_COUNTS, 0))
    stopped: str | None = None  # max_calls | llm_error
    engine: str = "llm"  # llm | offline (distill.engine)
    recovered: str | None = None  # batch id rolled back from an interrupted run
    rolled_back: int = 0  # batches undone because a history edit revoked episodes they consumed
    rollback_fallback: list[str] = field(default_factory=list)  # of those, batches re-distilled without undo
    would_write: list[dict[str, Any]] = field(default_factory=list)

    def __getattr__(self, name: str) -> int:
        """`summary.created` and the other CARD_COUNTS read as attributes too."""
        if name in CARD_COUNTS:
            return self.cards[name]
        raise AttributeError(name)

    @property
    def failed(self) -> bool:
        return any(self.failures.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run, "engine": self.engine, "dry_run": self.dry_run, "pending_before": self.pending_before,
            "pending_after": self.pending_after, "batches": self.batches, "calls": self.calls,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "episodes_distilled": self.episodes_distilled,
            "cards": dict(self.cards),
            "empty": self.empty, "nothing": dict(self.nothing), "failures": dict(self.failures),
            "errors": list(self.errors),
            "failed_episodes": list(self.failed_episodes), "untried_episodes": list(self.untried_episodes),
            "suspect": list(self.suspect),
            "repairs": dict(self.repairs),
            "stopped": self.stopped, "recovered": self.recovered, "rolled_back": self.rolled_back,
            "rollback_fallback": list(self.rollback_fallback),
            **({"would_write": self.would_write} if self.dry_run else {}),
        }


class BatchFailed(Exception):
    """A batch failed; `kind` is one of FAILURE_CLASSES. The run counts it, journals it as `distill_failed`
    (its episodes stay pending) and goes on (llm_error stops). `episodes`: the ids of the batch that failed."""

    def __init__(self, kind: str, message: str, episodes: list[str] | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.episodes = list(episodes or [])


class StopRun(Exception):
    """The run ends here (--max-calls reached); batches already committed stay."""


class Truncated(Exception):
    """The engine's answer for this batch was cut off, or did not come in time (`kind` llm_error: a timeout).
    The run splits a batch of several episodes in halves; for a single episode it fails the batch as `kind`
    with this message."""

    def __init__(self, message: str, kind: str = "truncated"):
        super().__init__(message)
        self.message = message
        self.kind = kind


@dataclass
class Run:
    """What every step of one distill run reads (and `cards`, `summary`, `batch_no` it updates)."""

    vault: Vault
    env: Mapping[str, str]
    now: Callable[[], str]
    summary: Summary
    client: Any
    max_calls: int | None
    dry_run: bool
    cards: dict[str, Card]
    entities: EntityTable
    system: str
    user_tpl: str
    kinds: tuple[str, ...]
    rules: Any
    settings: Mapping[str, Any]
    model: str
    batch_no: int = 0
    engine: str = "llm"  # llm | offline
    upgrade: bool = False  # --upgrade: an LLM re-reads what only the offline engine read
    protocol: str = "write"  # the LLM's job: write cards, or review the offline engine's drafts (review.py)
    before: dict[str, Episode] = field(default_factory=dict)  # a pending turn -> the turn before it, same session
    batch_nothing: dict[str, int] = field(default_factory=dict)  # the batch's episodes that gave no card, by why
