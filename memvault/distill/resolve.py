"""resolve: a person settles a conflict (memvault.distill.conflicts): card A wins, card B is superseded by it.

Under the distill lock, as one change set (vault.pages.write_change_set: cards, entity pages, then one journal
line `type: resolve`, with a write intent that `recover` undoes after a kill -9). A rerun once B is superseded by
A is a no-op. Unlike distill's date rule (model.supersede), the person's choice stands: A stays active even when
it holds from an earlier date than B.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memvault.distill.run import crash_point
from memvault.errors import NoMatch, UsageError
from memvault.model import Card, union
from memvault.vault import codec
from memvault.vault.pages import EntityTable, recover, write_change_set
from memvault.vault.store import Vault

LOCK_WHAT = "distill or another card change"


@dataclass(frozen=True)
class ResolveResult:
    winner: str
    loser: str
    changed: bool
    dry_run: bool
    change: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"winner": self.winner, "superseded": self.loser, "changed": self.changed, "dry_run": self.dry_run,
                "change": self.change or None}


def _day(card: Card) -> str:
    return (card.valid_from or card.created or "")[:10]


def plan(winner: Card, loser: Card) -> tuple[Card, Card] | None:
    """(winner', loser') or None when B is already superseded by A. Raises UsageError when the pair cannot be
    resolved that way (A not active, B retracted or superseded by another card)."""
    if winner.id == loser.id:
        raise UsageError("a card cannot be resolved over itself")
    if loser.status == "superseded" and winner.id in loser.superseded_by:
        return None
    if winner.status != "active":
        raise UsageError(f"{winner.id} is {winner.status}; only an active card can win")
    if loser.status != "active":
        raise UsageError(f"{loser.id} is {loser.status}" + (f" (by {', '.join(loser.superseded_by)})"
                                                             if loser.superseded_by else ""))
    retired = dataclasses.replace(loser, status="superseded", valid_to=max(_day(winner), _day(loser)) or None,
                                  superseded_by=union(loser.superseded_by, (winner.id,)))
    return dataclasses.replace(winner, supersedes=union(winner.supersedes, (loser.id,))), retired


def resolve(vault: Vault, winner_id: str, loser_id: str, *, now: Callable[[], str],
            dry_run: bool = False) -> ResolveResult:
    """Supersede `loser_id` with `winner_id`. NoMatch for an unknown id, Busy while a distill runs."""
    for cid in (winner_id, loser_id):
        if not codec.SAFE_ID.match(cid or ""):
            raise UsageError("a card id has only the characters A-Z a-z 0-9 . _ -")
    if dry_run:
        winner, loser = _load(vault, winner_id, loser_id)
        return ResolveResult(winner_id, loser_id, changed=plan(winner, loser) is not None, dry_run=True)
    with vault.exclusive("distill", LOCK_WHAT):
        recover(vault)
        winner, loser = _load(vault, winner_id, loser_id)
        planned = plan(winner, loser)
        if planned is None:
            return ResolveResult(winner_id, loser_id, changed=False, dry_run=False)
        new_winner, new_loser = planned
        all_cards = vault.cards_mentioning([*winner.entities, *loser.entities])
        all_cards.update({winner.id: winner, loser.id: loser})
        at = now()
        change = "r-" + hashlib.sha256(f"{winner_id}\x1f{loser_id}\x1f{at}".encode()).hexdigest()[:12]
        record = {"v": 1, "type": "resolve", "at": at, "change": change, "card": winner_id, "over": loser_id,
                  "updated": [{"id": winner_id, "before": codec.card_to_text(winner, vault.rules)}],
                  "superseded": [{"id": loser_id, "by": [winner_id],
                                  "before": codec.card_to_text(loser, vault.rules)}]}
        write_change_set(vault, all_cards, {winner_id: new_winner, loser_id: new_loser},
                         {winner_id: winner, loser_id: loser}, EntityTable.load(vault).names, record,
                         hook=lambda name: crash_point(f"resolve:{name}"))
        return ResolveResult(winner_id, loser_id, changed=True, dry_run=False, change=change)


def _load(vault: Vault, *ids: str) -> list[Card]:
    out = []
    for cid in ids:
        path = vault.find_card_path(cid)
        if path is None:
            raise NoMatch(f"no card {cid!r}")
        out.append(vault.read_card(path))
    return out
