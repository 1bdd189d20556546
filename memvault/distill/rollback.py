"""Planning the undo of one distill batch from its journal line (DESIGN §4): which batches a history edit made
stale, which cards later lines touched, and the RollbackPlan (remove, restore, trim, keep) of one batch.

Pure: nothing here touches files; history.roll_back_history_edits writes what plan_rollback returns.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable

from memvault.distill.journal import journal_order, rolled_back_batches
from memvault.model import Card


def card_touches(rec: dict[str, Any]) -> set[str]:
    """Ids of the cards a distill / remember / forget line wrote (created, changed, or the card it forgot)."""
    out: set[str] = set()
    for cid in rec.get("created") or []:
        if isinstance(cid, str):
            out.add(cid)
    for key in ("updated", "superseded"):
        for item in rec.get(key) or []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                out.add(item["id"])
    if isinstance(rec.get("card"), str):
        out.add(rec["card"])
    return out


def stale_batches(journal: list[dict[str, Any]], revoked: set[str] | frozenset[str]) -> list[dict[str, Any]]:
    """Live distill lines (no rollback names them) that consumed a revoked episode, newest first, so a
    batch is undone only after every later batch that built on it."""
    undone = rolled_back_batches(journal)
    out = [rec for rec in journal_order(journal)
           if rec.get("type") == "distill" and isinstance(rec.get("episodes"), list)
           and str(rec.get("batch")) not in undone and any(str(e) in revoked for e in rec["episodes"])]
    out.reverse()
    return out


def later_touches(journal: list[dict[str, Any]], rec: dict[str, Any], undone: set[str]) -> set[str]:
    """Cards written after `rec` by lines that still count: distill batches not rolled back, remember and
    forget lines. Rollback lines themselves do not count: they only ever move a card back."""
    ordered = journal_order(journal)
    pos = next(i for i, r in enumerate(ordered) if r is rec)
    out: set[str] = set()
    for r in ordered[pos + 1:]:
        kind = r.get("type")
        if kind == "rollback" or (kind == "distill" and str(r.get("batch")) in undone):
            continue
        out |= card_touches(r)
    return out


def batch_changes(rec: dict[str, Any]) -> tuple[list[str], dict[str, Any]] | None:
    """(created ids, changed id -> before-image) of a distill line, or None when its lists are malformed."""
    created = rec.get("created", [])
    if not isinstance(created, list) or not all(isinstance(c, str) for c in created):
        return None
    changed: dict[str, Any] = {}
    for key in ("updated", "superseded"):
        items = rec.get(key, [])
        if not isinstance(items, list):
            return None
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                return None
            changed.setdefault(item["id"], item.get("before"))
    return list(created), changed


@dataclass
class RollbackPlan:
    """What undoing one batch does. `cards` holds the new version of every card that changes."""

    removed: list[str] = dataclasses.field(default_factory=list)  # created by the batch, touched by no one since
    restored: list[str] = dataclasses.field(default_factory=list)  # back to the batch's before-image
    trimmed: list[str] = dataclasses.field(default_factory=list)  # kept (later work), revoked sources/links cut
    kept: list[str] = dataclasses.field(default_factory=list)  # touched later: the later version stays
    cards: dict[str, Card] = dataclasses.field(default_factory=dict)


def plan_rollback(created: list[str], befores: dict[str, Card], changed: Iterable[str],
                  current: dict[str, Card], later: set[str], revoked: set[str] | frozenset[str]) -> RollbackPlan:
    """Undo one batch. The rule:

    - a card the batch created and no later line touched is removed;
    - a card the batch changed and no later line touched is restored to its before-image;
    - a card a later line touched (merged into, updated, superseded, retracted, purged) keeps the later
      version, minus the revoked episodes in its sources;
    - then every supersede link between the cards above, or to a removed card, must hold on both sides or
      it goes; a card left `superseded` with no successor is active again (valid_to from its before-image).
    `befores` must hold a parsed before-image for every changed id not in `later` (see batch_changes).
    A card missing from `current` that no later line touched (deleted by hand) is not brought back.
    """
    plan = RollbackPlan()
    changed = list(dict.fromkeys(changed))
    touched = set(created) | set(changed)
    new: dict[str, Card] = {}
    for cid in created:
        if cid in changed:
            continue
        if cid in later:
            if cid in current:
                new[cid] = current[cid]
                plan.kept.append(cid)
        elif cid in current:
            plan.removed.append(cid)
    for cid in changed:
        if cid in later:
            if cid in current:
                new[cid] = current[cid]
                plan.kept.append(cid)
        elif cid in current:
            new[cid] = befores[cid]
            plan.restored.append(cid)
    gone = set(plan.removed)
    # Cards outside the batch should never link to one it created alone, but a hand edit may; cut those too.
    for cid, card in current.items():
        if cid not in touched and gone & set(card.supersedes + card.superseded_by):
            new[cid] = card
    snap = dict(new)

    def holds(other: str, back: str, mine: str) -> bool:
        if other in gone:
            return False
        if other not in touched:
            return True  # not ours to judge: a link the batch did not make
        card = snap.get(other)
        return card is not None and mine in getattr(card, back)

    for cid, card in snap.items():
        sup = tuple(x for x in card.supersedes if holds(x, "superseded_by", cid))
        by = tuple(x for x in card.superseded_by if holds(x, "supersedes", cid))
        changes: dict[str, Any] = {}
        if sup != card.supersedes:
            changes["supersedes"] = sup
        if by != card.superseded_by:
            changes["superseded_by"] = by
            if not by and card.status == "superseded":
                prior = befores.get(cid)
                changes["status"] = "active"
                changes["valid_to"] = prior.valid_to if prior is not None and prior.status != "superseded" else None
        eps = [e for e in card.episodes if e not in revoked]
        if len(eps) != len(card.episodes):
            changes["source"] = {**card.source, "episodes": eps}
        if changes:
            new[cid] = dataclasses.replace(card, **changes)
    for cid, card in sorted(new.items()):
        if current.get(cid) != card:
            plan.cards[cid] = card
            if cid not in plan.restored:
                plan.trimmed.append(cid)
    plan.kept = sorted(set(plan.kept))
    plan.removed.sort()
    plan.restored = sorted(c for c in plan.restored if c in plan.cards)
    plan.trimmed.sort()
    return plan
