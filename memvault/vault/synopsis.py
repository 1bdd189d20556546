"""One active synopsis per project: a new `synopsis` card supersedes the project's earlier active ones.

A synopsis is "the latest summary of a project" (DESIGN §3), and it is pinned in every context pack, so two
active ones of a project would both be pinned. Every writer of new cards (distill, remember, import,
consolidate) commits
through pages.write_change_set, which calls `link_synopses` there: whoever writes a synopsis, the rule holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from memvault.vault import codec
from memvault.model import Card, supersede
from memvault.vault.store import Vault

KIND = "synopsis"
WRITERS = ("distill", "remember", "import", "consolidate")  # journal line types that create cards


def latest_key(card: Card) -> tuple[str, str]:
    """Which synopsis is the latest: the later world date (valid_from, else created), then the later created."""
    return ((card.valid_from or card.created or "")[:10], card.created or "")


def same_but_links(mine: Card, theirs: Card) -> bool:
    """A synopsis the vault holds and one a bundle brings are the same card when they differ only in the
    supersede links this module adds on import (so importing a bundle twice finds it identical)."""
    if mine == theirs:
        return True
    if mine.kind != KIND or theirs.kind != KIND or {mine.status, theirs.status} - {"active", "superseded"}:
        return False
    links = {"status": theirs.status, "valid_to": theirs.valid_to, "supersedes": theirs.supersedes,
             "superseded_by": theirs.superseded_by}
    return dataclasses.replace(mine, **links) == theirs


def link_synopses(vault: Vault, all_cards: Mapping[str, Card], working: dict[str, Card],
                  before: dict[str, Card | None], record: dict[str, Any]) -> dict[str, Card]:
    """When the change creates an active synopsis, the latest active synopsis of its project supersedes every
    other active one. Adds the cards it changes to `working` (and their before-images to `before` and to the
    journal `record`, so a rollback of a distill batch undoes the link too). Returns the cards, by id, that
    name the entities of the cards it added, for the caller to render those entity pages in full."""
    if record.get("type") not in WRITERS:
        return {}
    fresh = [c for cid, c in working.items() if before.get(cid) is None and c.kind == KIND and c.status == "active"]
    if not fresh:
        return {}
    given = set(working)
    pool = dict(vault.cards_mentioning([f"kind: {KIND}"]))  # callers may hold only the cards they touch
    pool.update(all_cards)
    pool.update(working)
    order = {cid: i for i, cid in enumerate(working)}
    for project in sorted({c.project or "" for c in fresh}):
        active = [c for c in pool.values()
                  if c.kind == KIND and c.status == "active" and (c.project or "") == project]
        if len(active) < 2:
            continue
        # Ties (one distill batch, one remember second) go to the card written last.
        active.sort(key=lambda c: (latest_key(c), c.id in order, order.get(c.id, -1), c.id))
        latest = active[-1]
        for old in active[:-1]:
            for card in (old, latest):
                if card.id not in working:
                    before[card.id] = all_cards.get(card.id, card)
            old2, new2 = supersede(working.get(old.id, old), working.get(latest.id, latest))
            working[old.id], working[latest.id] = old2, new2
    _journal(record, working, before)
    slugs = sorted({s for cid in set(working) - given for s in working[cid].entities})
    return vault.cards_mentioning(slugs) if slugs else {}


def _journal(record: dict[str, Any], working: Mapping[str, Card], before: Mapping[str, Card | None]) -> None:
    """Before-images of the cards the links changed, in the record's own lists (see cards.batch_changes)."""
    listed = {item.get("id") for key in ("updated", "superseded") for item in record.get(key) or []
              if isinstance(item, dict)}
    for cid, old in sorted(before.items()):
        if old is None or cid in listed or working[cid] == old:
            continue
        if working[cid].status != old.status:
            record.setdefault("superseded", []).append(
                {"id": cid, "by": list(working[cid].superseded_by), "before": codec.card_to_text(old)})
        else:
            record.setdefault("updated", []).append({"id": cid, "before": codec.card_to_text(old)})
