"""Applying a batch's proposals: create, update, merge into a near-duplicate, supersede a conflicting state;
then commit the batch as one change set whose journal line is the commit point (or, in a dry run, list it)."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from memvault.distill.merge import card_id, find_duplicate, find_same_fact, merge_into, same_value
from memvault.distill.merge import retell, state_conflicts, supersede
from memvault.distill.proposals import BODY_MAX
from memvault.distill.merge import union
from memvault.distill.proposals import Proposal
from memvault.distill.run import CARD_COUNTS, Run, crash_point
from memvault.model import Card, Episode
from memvault.vault import codec
from memvault.vault.pages import write_change_set


def apply(run: Run, batch: list[Episode], related: list[Card], proposals: list[Proposal],
          usage: dict[str, int]) -> None:
    """Turn one batch's proposals into card versions and commit them (a dry run only lists them)."""
    s = run.summary
    at = run.now()
    ids = [e.id for e in batch]
    batch_id = "b-" + hashlib.sha256("\n".join([run.summary.run, *ids]).encode()).hexdigest()[:12]
    working: dict[str, Card] = {}  # id -> new version, for every card this batch writes
    before: dict[str, Card | None] = {}  # id -> version before the batch (None = created here)
    counts = dict.fromkeys(CARD_COUNTS, 0)
    taken = set(run.cards)

    def current(cid: str) -> Card:
        return working.get(cid) or run.cards[cid]

    def put(card: Card) -> None:
        if card.id not in before:
            before[card.id] = run.cards.get(card.id)
        working[card.id] = card

    def live() -> list[Card]:
        merged = dict(run.cards)
        merged.update(working)
        return list(merged.values())

    for i, p in enumerate(proposals):
        if p.action == "noop":
            continue
        src = [ids[j] for j in p.episodes] or ids
        first_day = min(e.at for e in batch if e.id in src)[:10]
        slugs = tuple(dict.fromkeys(run.entities.resolve(n) for n in p.entities))
        if p.action == "update":
            old = current(related[p.target].id)
            source = dict(old.source)
            if source.get("kind") == "distill":
                source["episodes"] = list(dict.fromkeys([*old.episodes, *src]))
            put(dataclasses.replace(
                old, title=p.title, body=p.body or old.body, entities=union(old.entities, slugs),
                tags=union(old.tags, p.tags), source=source,
                **({"subject": p.subject, "field": p.field, "value": p.value} if old.kind == "state" else {}),
            ))
            counts["updated"] += 1
            continue
        cid = card_id(at, f"{batch_id}:{i}", taken)
        taken.add(cid)
        new = Card(
            id=cid, kind=p.kind, title=p.title, body=p.body,
            project=None if p.personal else batch[0].project, entities=slugs, created=at,
            valid_from=p.valid_from or first_day, confidence=p.confidence,
            subject=p.subject if p.kind == "state" else None, field=p.field if p.kind == "state" else None,
            value=p.value if p.kind == "state" else None,
            source={"kind": "distill", "run": run.summary.run, "episodes": src}, tags=p.tags,
        )
        targets: list[Card] = []
        if p.action == "supersede":
            targets = [current(related[p.target].id)]
        else:
            conflicts = state_conflicts(new, live())
            same = [c for c in conflicts if same_value(c, new)]
            if same:
                # The same value again: not news, the sources join the card that already says it.
                put(merge_into(same[0], new))
                counts["merged"] += 1
                continue
            targets = conflicts
            if not targets:
                dup = find_duplicate(new, live(), float(run.settings.get("merge_threshold", 85)))
                offline = p.extracted or run.engine == "offline"  # a draft a review kept merges as offline
                if dup is None and offline:  # the same fact told again, in other words
                    dup = find_same_fact(new, live())
                if dup is not None:  # an extracted card keeps each telling's words (a model's card is whole)
                    put(retell(current(dup.id), new, BODY_MAX) if offline else merge_into(current(dup.id), new))
                    counts["merged"] += 1
                    continue
        for old in sorted(targets, key=lambda c: c.id):
            old2, new = supersede(current(old.id), new)
            put(old2)
            counts["superseded"] += 1
        put(new)
        counts["created"] += 1

    if run.dry_run:
        for cid, card in working.items():
            s.would_write.append({"id": cid, "action": "create" if before[cid] is None else "update",
                                  "kind": card.kind, "title": card.title, "project": card.project,
                                  "status": card.status, "entities": list(card.entities)})
        s.batches += 1
        return
    commit(run, batch_id, at, ids, working, before, usage, counts)
    for key, n in counts.items():
        s.cards[key] += n
    s.batches += 1
    s.episodes_distilled += len(batch)
    if not working:
        s.empty += 1


def commit(run: Run, batch_id: str, at: str, ids: list[str], working: dict[str, Card],
           before: dict[str, Card | None], usage: dict[str, int], counts: dict[str, int]) -> None:
    """Write the batch as one change set; its journal line (with the before-images) is the commit point."""
    run.batch_no += 1
    n = run.batch_no
    created = sorted(cid for cid, b in before.items() if b is None)
    updated = [{"id": cid, "before": codec.card_to_text(b, run.rules)} for cid, b in sorted(before.items())
               if b is not None and working[cid].status == b.status]
    superseded = [{"id": cid, "by": list(working[cid].superseded_by), "before": codec.card_to_text(b, run.rules)}
                  for cid, b in sorted(before.items()) if b is not None and working[cid].status != b.status]
    born = sorted(cid for cid, b in before.items() if b is None and working[cid].status == "superseded")
    record: dict[str, Any] = {
        "v": 1, "type": "distill", "at": at, "run": run.summary.run, "batch": batch_id, "episodes": ids,
        "engine": run.engine, "model": run.model, "usage": usage, "status": "ok" if working else "empty",
        "created": created, "updated": updated, "superseded": superseded, "counts": counts,
    }
    if born:
        record["born_superseded"] = born
    if any(run.batch_nothing.values()):
        record["nothing"] = dict(run.batch_nothing)
    written = write_change_set(run.vault, run.cards, working, before, run.entities.names, record,
                               hook=lambda point: crash_point(f"{point}:{n}"))
    run.cards.update(written)
