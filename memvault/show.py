"""show: one card or entity in full, with its sources, its supersede chain, and (for an entity) its cards."""

from __future__ import annotations

import json
from typing import Any

from memvault.errors import NoMatch, UsageError
from memvault.index import Index, resolve_entity
from memvault.vault import Vault


def show(vault: Vault, ident: str, mode: str = "bigram") -> dict[str, Any]:
    """A card by id, else an entity by slug, name or alias. Raises NoMatch (exit 1) when neither exists."""
    ident = ident.strip()
    if not ident:
        raise UsageError("an id is needed")
    path = vault.find_card_path(ident)
    if path is not None:
        card = vault.read_card(path)
        out = {"type": "card", "id": card.id, "kind": card.kind, "title": card.title, "project": card.project,
               "status": card.status, "confidence": card.confidence, "entities": list(card.entities),
               "created": card.created, "valid_from": card.valid_from, "valid_to": card.valid_to,
               "subject": card.subject, "field": card.field, "value": card.value, "tags": list(card.tags),
               "path": vault.rel(path), "body": card.body, "source": card.source,
               "sources": list(card.episodes), "supersedes": list(card.supersedes),
               "superseded_by": list(card.superseded_by), "chain": chain(vault, card.id)}
        return out
    with Index(vault.root, mode) as idx:
        idx.refresh()
        slug = resolve_entity(idx, ident)
        if slug is None:
            raise NoMatch(f"no card or entity named {ident!r}")
        row = idx.db.execute("SELECT slug, name, aliases, kind, prose FROM entities WHERE slug = ? OR name = ?",
                             (slug, slug)).fetchone()
        names = {slug}
        if row:
            names.update((row[0], row[1]))
        cards = [
            {"id": r[0], "kind": r[1], "title": r[2], "project": r[3], "status": r[4], "created": r[5]}
            for r in idx.db.execute(
                f"SELECT DISTINCT c.id, c.kind, c.title, c.project, c.status, c.created FROM card_entities e"
                f" JOIN cards c ON c.rowid = e.card WHERE e.entity IN ({','.join('?' * len(names))})"
                f" ORDER BY c.created DESC, c.id", sorted(names))
        ]
    return {"type": "entity", "id": row[0] if row else slug, "name": row[1] if row else slug,
            "aliases": json.loads(row[2]) if row else [], "kind": row[3] if row else None,
            "prose": row[4] if row else "", "path": f"entities/{row[0]}.md" if row else None, "cards": cards}


def chain(vault: Vault, card_id: str, limit: int = 50) -> list[dict[str, Any]]:
    """The whole supersede chain a card belongs to, oldest first (each step: id, title, status, created)."""
    seen: dict[str, dict[str, Any]] = {}
    todo = [card_id]
    while todo and len(seen) < limit:
        cid = todo.pop()
        if cid in seen:
            continue
        path = vault.find_card_path(cid)
        if path is None:
            seen[cid] = {"id": cid, "title": None, "status": "missing", "created": ""}
            continue
        try:
            card = vault.read_card(path)
        except Exception:  # noqa: BLE001 - a damaged neighbour must not hide the card asked for
            seen[cid] = {"id": cid, "title": None, "status": "unreadable", "created": ""}
            continue
        seen[cid] = {"id": card.id, "title": card.title, "status": card.status, "created": card.created,
                     "supersedes": list(card.supersedes), "superseded_by": list(card.superseded_by)}
        todo.extend(card.supersedes)
        todo.extend(card.superseded_by)
    if len(seen) == 1:
        return []
    return sorted(seen.values(), key=lambda c: (c["created"] or "", c["id"]))
