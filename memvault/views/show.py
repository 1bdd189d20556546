"""show: one card or entity in full, with its sources, its supersede chain, and (for an entity) its cards."""

from __future__ import annotations

import json
import re
from typing import Any

from memvault.redact import engine as redact
from memvault.errors import NoMatch, UsageError
from memvault.search.index import Index, resolve_entity
from memvault.vault.store import Vault

SOURCE_CHARS = 300  # per side of a source turn: enough to recognise it, short enough to scan a card
CUT = " […]"
_EPISODE_ID = re.compile(r"ep-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6,}(?:[0-9a-f]*)")
_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]{1,64}\]|\[email\]")  # what redact writes in place of a finding


def show(vault: Vault, ident: str, mode: str = "bigram", *, with_sources: bool = True,
         source_chars: int = SOURCE_CHARS) -> dict[str, Any]:
    """A card by id, else an entity by slug, name or alias. Raises NoMatch (exit 1) when neither exists.
    A card also gets `source_episodes`, the redacted, capped text of each turn it came from, unless
    `with_sources` is False."""
    ident = ident.strip()
    if not ident:
        raise UsageError("an id is needed")
    if _EPISODE_ID.fullmatch(ident):
        return show_episode(vault, ident, mode)
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
        out.update(_fold_links(vault, card))
        if with_sources:
            out["source_episodes"] = source_episodes(vault, card.episodes, source_chars)
        return out
    with Index(vault.root, mode) as idx:
        idx.refresh()
        slug = resolve_entity(idx, ident)
        if slug is None:
            raise NoMatch(f"no card or entity named {ident!r}")
        row = idx.entity_page(slug)
        names = {slug}
        if row:
            names.update((row[0], row[1]))
        cards = [
            {"id": r[0], "kind": r[1], "title": r[2], "project": r[3], "status": r[4], "created": r[5]}
            for r in idx.cards_naming(sorted(names), created=True)
        ]
    return {"type": "entity", "id": row[0] if row else slug, "name": row[1] if row else slug,
            "aliases": json.loads(row[2]) if row else [], "kind": row[3] if row else None,
            "prose": row[4] if row else "", "path": f"entities/{row[0]}.md" if row else None, "cards": cards}


def show_episode(vault: Vault, ep_id: str, mode: str = "bigram") -> dict[str, Any]:
    """One conversation turn by its id (what `search --episodes` finds), its whole redacted text, and the cards
    that name it as a source. Raises NoMatch when no turn has that id; a revoked or purged turn says so."""
    found, revoked = vault.episodes_by_id([ep_id])
    ep = found.get(ep_id)
    if ep is None and ep_id not in revoked:
        raise NoMatch("no turn with that id")
    rules = vault.rules
    out: dict[str, Any] = {"type": "episode", "id": ep_id, "status": "revoked" if ep_id in revoked else "live",
                           "revoked_reason": revoked.get(ep_id), "at": None, "project": None, "session": None,
                           "turn": None, "user": None, "assistant": None, "speakers": {}, "source": None,
                           "cards": []}
    if ep is not None:
        out.update(at=ep.at, project=ep.project, session=ep.session, turn=ep.turn,
                   user=redact.redact(ep.user, rules).text, assistant=redact.redact(ep.assistant, rules).text,
                   speakers={r: [redact.redact(n, rules).text for n in names] for r, names in ep.speakers.items()},
                   source={k: v for k, v in ep.source.items() if k in ("kind", "host", "ref")})
    with Index(vault.root, mode) as idx:
        idx.refresh()
        out["cards"] = [{"id": r[0], "kind": r[1], "title": r[2], "status": r[3]} for r in idx.cards_citing(ep_id)]
    return out


def _fold_links(vault: Vault, card) -> dict[str, Any]:
    """`folds` (a folded card: the cards it lists, each id, title, date, status) and `folded_into` (a card a
    folded card lists: that card's id), both empty for other cards (memvault.distill.fold)."""
    from memvault.model import is_folded

    def read(cid: str):
        path = vault.find_card_path(cid)
        try:
            return vault.read_card(path) if path is not None else None
        except Exception:  # noqa: BLE001 - a damaged neighbour must not hide the card asked for
            return None

    folds = []
    if is_folded(card):
        for cid in card.supersedes:
            other = read(cid)
            folds.append({"id": cid, "title": other.title if other else None, "status": other.status if other else
                          "missing", "date": ((other.valid_from or other.created or "")[:10]) if other else None})
    into = [cid for cid in card.superseded_by if (succ := read(cid)) is not None and is_folded(succ)]
    return {"folds": folds, "folded_into": into}


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


def source_episodes(vault: Vault, ids, limit: int = SOURCE_CHARS) -> list[dict[str, Any]]:
    """Each source turn in the card's order: where it is, whether it still stands, and its redacted text cut
    to `limit` characters a side (`cut` says whether any side was). A turn withdrawn by a history edit keeps
    its text, marked `revoked`; a purged or unknown one has no text (`missing`, or `revoked` with the reason)."""
    ids = list(dict.fromkeys(ids))
    found, revoked = vault.episodes_by_id(ids)
    rules = vault.rules
    out = []
    for ep_id in ids:
        ep = found.get(ep_id)
        reason = revoked.get(ep_id)
        item: dict[str, Any] = {"id": ep_id, "status": "revoked" if reason else ("live" if ep else "missing"),
                                "revoked_reason": reason, "at": None, "project": None, "session": None,
                                "turn": None, "user": None, "assistant": None, "speakers": {}, "cut": False}
        if ep is not None:
            # Redact the whole text before cutting it, so a cut never leaves half a secret unrecognised.
            user, cut_u = _cap(redact.redact(ep.user, rules).text, limit)
            assistant, cut_a = _cap(redact.redact(ep.assistant, rules).text, limit)
            speakers = {role: [redact.redact(n, rules).text for n in names] for role, names in ep.speakers.items()}
            item.update(at=ep.at, project=ep.project, session=ep.session, turn=ep.turn, user=user,
                        assistant=assistant, speakers=speakers, cut=cut_u or cut_a)
        out.append(item)
    return out


def _cap(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    for m in _MARKER.finditer(text, max(0, limit - 80), limit + 80):
        if m.start() < limit < m.end():
            limit = m.end()  # a placeholder is kept whole: "[RE […]" would say nothing
    if limit >= len(text):
        return text, False
    return text[:limit].rstrip() + CUT, True
