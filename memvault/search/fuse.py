"""The fuse stage of a search (pipeline.py): the lists become the one list a search shows. Only with
`embeddings:` configured (opts.embeddings), the dense layer (search/dense/hybrid.py) embeds the question, adds
its nearest cards (and turns) under the same filters, and fusion.fuse orders both; a dead endpoint leaves the
lexical order and a warning. Then the shown cards' details are read, and cards and raw turns are merged by rank.
With embeddings off nothing of search/dense is imported (no numpy, no httpx). Reads the index only through named
Index methods (no SQL here)."""

from __future__ import annotations

import os
from collections import namedtuple
from collections.abc import Mapping

from memvault.search.index import Index
from memvault.search.order import Ordered
from memvault.search.results import Hit, SearchOptions, pending

# The fuse stage's record: hits (cards and turns in the order shown, at most `limit`; the cards' details read);
# warnings (what the dense layer had to say, one line each).
Fused = namedtuple("Fused", "hits warnings")


def fused(idx: Index, query: str, o: Ordered, opts: SearchOptions, env: Mapping[str, str] | None) -> Fused:
    """The fuse stage."""
    hits, turns = o.cards, o.turns
    warnings: list[str] = []
    if opts.embeddings is not None and not opts.bm25_only:
        from memvault.search.dense.hybrid import fuse_hits  # only when the dense layer is on: numpy, httpx

        both, warnings = fuse_hits(idx, query, opts, hits + turns, os.environ if env is None else env)
        hits = [h for h in both if h.kind != "episode"]
        turns = [h for h in both if h.kind == "episode"]
    hits = with_details(idx, hits, opts.limit)  # merge_turns takes at most `limit` cards
    hits = merge_turns(hits, turns, opts.limit) if opts.episodes else hits[: opts.limit]
    return Fused(hits, warnings)


def with_details(idx: Index, hits: list[Hit], n: int) -> list[Hit]:
    """`hits` with the first `n` cards' title, snippet text, sources and path read (the hops stage leaves them
    out: of several hundred candidates at 100k cards, ten are shown). A card gone from the index since it was
    ranked (another process refreshed it) is left out."""
    need = [h.rowid for h in hits[:n] if h.title is None and h.rowid is not None]
    if not need:
        return hits
    details = idx.card_details(need)
    out = []
    for i, h in enumerate(hits):
        if i < n and h.title is None and h.rowid is not None:
            if h.rowid not in details:
                continue
            title, body, episodes, path = details[h.rowid]
            h = h._replace(title=title, snippet=pending(body or title, list(h.snippet[1])), sources=tuple(episodes),
                           path=path)
        out.append(h)
    return out


def merge_turns(cards: list[Hit], turns: list[Hit], limit: int | None = None) -> list[Hit]:
    """One ranked list of cards and raw turns: by rank, a card then a turn (reciprocal-rank fusion of the two
    lists, whose scores are not on one scale); a turn that a card above it already cites is not repeated (the
    card stands for it, and `show` gives its words). Measured on LoCoMo's tuning half (eval/REPORT.md): as good
    as the turns alone at any@10 and better than a merge by score or by scores scaled to each list's best.
    With `limit`, the first `limit` of that list (at 100k cards a search ranks hundreds of candidates)."""
    if not turns:
        return cards[:limit]
    out: list[Hit] = []
    cited: set[str] = set()
    for i in range(max(len(cards), len(turns))):
        for hit in (cards[i] if i < len(cards) else None, turns[i] if i < len(turns) else None):
            if hit is None or (hit.kind == "episode" and hit.id in cited):
                continue
            cited.update(hit.sources)
            out.append(hit)
        if limit is not None and len(out) >= limit:
            return out[:limit]
    return out
