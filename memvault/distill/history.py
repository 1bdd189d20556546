"""Rollback after a history edit (DESIGN §4): undo every live batch that consumed a revoked episode, writing
what rollback.plan_rollback returns, or marking the batch for re-distillation when it cannot be undone
exactly."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from memvault.distill.journal import rolled_back_batches
from memvault.distill.rollback import RollbackPlan, batch_changes, later_touches, plan_rollback, stale_batches
from memvault.distill.run import Summary, crash_point
from memvault.errors import VaultFormatError
from memvault.model import Card
from memvault.vault import codec
from memvault.vault.pages import EntityTable, write_change_set
from memvault.vault.store import Vault, revoked_ids


def roll_back_history_edits(vault: Vault, summary: Summary, now: Callable[[], str]) -> None:
    """Undo every live batch that consumed an episode revoked by a history edit, newest first, one change
    set and one `rollback` journal line per batch; its live episodes become pending again.

    Purge revokes are not handled here: `forget --purge` already removed what it had to.
    """
    revoked = revoked_ids(vault, "history-edit")
    if not revoked:
        return
    journal = vault.journal(problems=[])
    stale = stale_batches(journal, revoked)
    if not stale:
        return
    current = {c.id: c for c in vault.cards(problems=[])}
    table = EntityTable.load(vault)
    undone = rolled_back_batches(journal)
    for n, rec in enumerate(stale, 1):
        batch = str(rec.get("batch"))
        later = later_touches(journal, rec, undone)
        at = now()
        record: dict[str, Any] = {
            "v": 1, "type": "rollback", "at": at, "run": summary.run,
            "change": "rb-" + hashlib.sha256(f"rollback\x1f{batch}".encode()).hexdigest()[:12],
            "batches": [batch], "reason": "history-edit",
            "episodes": sorted(str(e) for e in rec["episodes"] if str(e) in revoked),
        }
        plan, problem = _plan(rec, current, later, revoked)
        hook = lambda point, n=n: crash_point(f"rollback-{point}:{n}")  # noqa: E731
        if plan is None:
            # Trigger: the batch's journal line cannot be undone (a before-image purged, damaged or missing).
            # Why: guessing would rewrite cards nobody can audit. Outcome: its cards stay as they are and its
            # live episodes, with the session's new turns, are distilled again (near-duplicates merge).
            record.update(mode="redistill", problem=problem, removed=[], restored=[], trimmed=[], kept=[],
                          updated=[])
            write_change_set(vault, current, {}, {}, table.names, record, hook=hook)
            summary.rollback_fallback.append(batch)
        else:
            # Before-images of what the rollback itself changes sit under `updated` (with `undo`), where
            # `forget --purge` already blanks a purged card's text.
            changes = [{"id": cid, "undo": "remove", "before": codec.card_to_text(current[cid], vault.rules)}
                       for cid in plan.removed]
            changes += [{"id": cid, "undo": "restore" if cid in plan.restored else "trim",
                         "before": codec.card_to_text(current[cid], vault.rules)} for cid in sorted(plan.cards)]
            record.update(mode="journal", removed=plan.removed, restored=plan.restored, trimmed=plan.trimmed,
                          kept=plan.kept, updated=changes)
            before = {cid: current[cid] for cid in [*plan.removed, *plan.cards]}
            write_change_set(vault, current, plan.cards, before, table.names, record, removed=plan.removed,
                             hook=hook)
            for cid in plan.removed:
                current.pop(cid, None)
            current.update(plan.cards)
        undone.add(batch)
        summary.rolled_back += 1


def _plan(rec: dict[str, Any], current: dict[str, Card], later: set[str],
          revoked: set[str]) -> tuple[RollbackPlan | None, str]:
    """The rollback plan of one journal line, or (None, why) when the line does not allow an exact undo."""
    changes = batch_changes(rec)
    if changes is None:
        return None, "journal line has malformed card lists"
    created, changed = changes
    befores: dict[str, Card] = {}
    for cid, text in changed.items():
        card = None
        if isinstance(text, str):
            try:
                card = codec.parse_card(text, f"journal before-image of {cid}")
            except VaultFormatError:
                card = None
        if card is not None and card.id == cid:
            befores[cid] = card
        elif cid not in later and cid in current:
            return None, f"no usable before-image of {cid}"
    return plan_rollback(created, befores, changed, current, later, revoked), ""
