"""`distill --upgrade` (issue 10 item 2): episodes only the offline engine has read go to the LLM, and the model's
cards replace the extracted cards of the same turns.

Which episodes: those consumed by a live (not rolled back) journal batch with `engine: offline` and by no live
batch of the LLM (a line without `engine` is the LLM's: it predates the key). The journal is the truth, so a
rerun, or another machine that synced the vault, finds nothing left to upgrade.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from memvault.distill.cards import Proposal
from memvault.distill.offline import CONFIDENCE
from memvault.model import Card, Episode


def offline_only(journal: Iterable[dict[str, Any]]) -> set[str]:
    """Episode ids read by the offline engine and never by the LLM (live batches only)."""
    batches: dict[str, tuple[str, list[str]]] = {}
    undone: set[str] = set()
    for rec in journal:
        if rec.get("type") == "distill" and isinstance(rec.get("episodes"), list):
            batches[str(rec.get("batch"))] = (str(rec.get("engine") or "llm"), [str(e) for e in rec["episodes"]])
        elif rec.get("type") == "rollback" and isinstance(rec.get("batches"), list):
            undone.update(str(b) for b in rec["batches"])
    offline: set[str] = set()
    llm: set[str] = set()
    for bid, (engine, eps) in batches.items():
        if bid not in undone:
            (offline if engine == "offline" else llm).update(eps)
    return offline - llm


def link(proposals: list[Proposal], related: list[Card], batch: list[Episode],
         cards: Iterable[Card]) -> tuple[list[Proposal], list[Card]]:
    """Point the model's new cards at the extracted cards of the same turns: a model card supersedes the active
    extracted card of its episode with the same kind (or the only one of that episode when the model also wrote
    only one for it). When that extracted card was already superseded (a later turn changed it), the model's
    card merges into it instead (`update`: it keeps its place in history) rather than bringing the old value
    back as current. Extracted cards the model did not restate stay as they are: nothing is lost."""
    ids = [e.id for e in batch]
    extracted: dict[str, list[Card]] = {}
    for c in sorted(cards, key=lambda c: c.id):
        if c.status in ("active", "superseded") and c.confidence == CONFIDENCE:
            for e in c.episodes:
                if e in ids:
                    extracted.setdefault(e, []).append(c)
    if not extracted:
        return proposals, related
    related = list(related)
    per_episode: dict[str, int] = {}
    for p in proposals:
        if p.action in ("create", "update", "supersede"):
            for e in (ids[j] for j in p.episodes or range(len(ids))):
                per_episode[e] = per_episode.get(e, 0) + 1
    taken: set[str] = set()
    out: list[Proposal] = []
    for p in proposals:
        target_id = related[p.target].id if p.target is not None and p.action != "noop" else None
        aimed_at_extracted = target_id is not None and any(target_id == c.id for cs in extracted.values() for c in cs)
        if p.action == "create" or (p.action == "update" and aimed_at_extracted):
            mine = [ids[j] for j in p.episodes] or ids
            pool = [c for e in mine for c in extracted.get(e, []) if c.id not in taken]
            same = [c for c in pool if c.kind == p.kind]
            only = [c for c in pool if len(extracted.get(c.episodes[0], [])) == 1 and per_episode.get(c.episodes[0]) == 1]
            pick = next(iter([c for c in same if c.status == "active"] or [c for c in only if c.status == "active"]
                             or same or only), None)
            if pick is None and aimed_at_extracted:
                pick = next(c for cs in extracted.values() for c in cs if c.id == target_id)
            if pick is not None:
                taken.add(pick.id)
                if pick not in related:
                    related.append(pick)
                action = "supersede" if pick.status == "active" else "update"
                p = dataclasses.replace(p, action=action, target=related.index(pick))
        out.append(p)
    return out, related


def pending(vault, project: str | None = None) -> list[Episode]:
    """Live episodes only the offline engine has read, batched per project in time order (as distill's)."""
    todo = offline_only(vault.journal(problems=[]))
    eps = [e for e in vault.episodes(problems=[]) if e.id in todo and (project is None or e.project == project)]
    eps.sort(key=lambda e: (e.project, e.at, e.session, e.turn, e.id))
    return eps
