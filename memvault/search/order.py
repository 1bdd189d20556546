"""The order stage of a search (pipeline.py): cards and turns, each list in the order a search shows them (the
recency prior for a question about now, then score, date and id), and whether anything answers the question.
When nothing does, what came closest is marked weak and hits that match none of the question's words (hops,
neighbouring turns) are left out. Pure functions on Hits: no index, no I/O."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

from memvault.search.query import Analysis
from memvault.search.results import Hit, SearchOptions

# The share of a question's IDF mass in words the vault has never seen from which search.answer_floor applies
# (measured, docs/search.md "No match").
UNKNOWN_SHARE = 0.2

# The order stage's record: cards and turns (Hits, each list in its order; all weak when nothing answers).
Ordered = namedtuple("Ordered", "cards turns")


def ordered(a: Analysis, r, opts: SearchOptions) -> Ordered:
    """The order stage, on the hops stage's Reached."""
    intent = a.cards.intent
    hits, turns = (_ordered(recency(xs, opts.recency_half_life_days) if a.prior else xs, intent)
                   for xs in (r.cards, r.turns))
    # With the dense layer on, meaning stands in for the words the vault never saw: answer_floor is not applied.
    floor = opts.answer_floor if opts.embeddings is None else 0.0
    if not opts.bm25_only and (r.below or not answers(hits + turns, a.unknown, floor)):
        # Trigger: no hit answers the question: nothing reaches the relevance floor ("set up the job queue for
        # alerts" shares one word of five with the vault), or every hit rests on the names of what the question
        # is about, or the question holds words the vault has never seen and no hit matches answer_floor of it
        # ("what port does the Postgres replica listen on"). Why: a script or an agent must be able to tell "no
        # answer" from an answer (exit 1, like grep), yet a person still sees what came closest.
        # Outcome: the closest hits (without the floor when nothing reached it: the score stage's `below`), each
        # marked weak; hits that match none of the question's words (hops, neighbouring turns) are left out, and
        # a card something replaced is no "closest" answer to a question about now (only to a history one).
        hits, turns = ([_weak(h, a.cards.terms) for h in xs
                        if h.cover[0] > 0 and (a.history or h.status != "superseded")] for xs in (hits, turns))
    return Ordered(hits, turns)


def answers(hits: list[Hit], unknown: float, floor: float) -> bool:
    """Whether some hit answers the question: it matches a word besides the names of what the question is
    about, and, when UNKNOWN_SHARE or more of the question is words the vault has never seen, `floor` of it."""
    return any(free > 0 and (unknown < UNKNOWN_SHARE or whole + 1e-9 >= floor) for whole, free in
               (h.cover for h in hits))


def _ordered(hits: list[Hit], intent: str) -> list[Hit]:
    # Ties (cards that match the same way, e.g. every card of an entity the query names): newest first for a
    # question about now, oldest first for a history question (final_order, which the hops' cut uses too).
    return final_order(hits, intent, lambda h: h.score, lambda h: h.created, lambda h: h.id)


def final_order(items: list, intent: str, score, created, ident) -> list:
    """`items` in the order a search shows them: score (rounded to 6 places), then ties by date (newest first,
    oldest first for a history question), then id. Three stable sorts, least significant key first: the same
    order as one tuple key, without building a per-character key for every candidate's date."""
    items.sort(key=ident)
    items.sort(key=created, reverse=intent != "history")
    items.sort(key=lambda x: -round(score(x), 6))
    return items


def recency(hits: list[Hit], half_life_days: float) -> list[Hit]:
    """The recency prior of a question about now: each hit's score times 0.5 ** (age / half-life), its age in
    days counted back from the newest hit's date (a card's valid_from, an episode's time), so the prior orders
    hits by date without depending on the clock. A hit without a date keeps its score."""
    if half_life_days <= 0 or not hits:
        return hits
    days = [_ordinal(h.world or h.created) for h in hits]
    newest = max((d for d in days if d is not None), default=None)
    if newest is None:
        return hits
    out = []
    for h, d in zip(hits, days):
        if d is None or d >= newest:
            out.append(h)
            continue
        weight = 0.5 ** ((newest - d) / half_life_days)
        out.append(h._replace(score=h.score * weight, why=(*h.why, f"recency prior x{weight:.2f}")))
    return out


def _ordinal(text: str) -> int | None:
    import datetime as dt

    try:
        return dt.date.fromisoformat((text or "")[:10]).toordinal()
    except ValueError:
        return None


def _weak(hit: Hit, terms: Sequence[str]) -> Hit:
    matched = [w for w in hit.why if w.startswith("matched: ")]
    n = len(matched[0].split(", ")) if matched else 0
    return hit._replace(weak=True, why=(f"weak match: {n} of the question's {len(terms)} words", *hit.why))
