"""Pseudo-relevance feedback (measured in eval/REPORT.md; off unless SearchOptions.prf > 0): the words that the
best first-pass hits share become extra query terms for a second pass. The feedback terms only re-rank: they
score at WEIGHT of their IDF and never count toward the relevance floor, so they cannot turn a question the vault
does not answer into a hit. Reads the index only through named Index methods; imports nothing heavy.
"""

from __future__ import annotations

from collections import Counter

from memvault.search import bm25
from memvault.search.expand import EXPANSION_WEIGHT, Expansion
from memvault.search.index import CARD_FIELDS, Index
from memvault.search.query import Query
from memvault.search.results import Hit

WEIGHT = 0.3  # a feedback term scores this share of its IDF
SOURCE = ("\x00feedback",)  # never a query token: feedback is never credited toward the floor


def feedback(idx: Index, q: Query, hits: list[Hit], docs: int = 3, terms: int = 5) -> Expansion | None:
    """An expansion of the `terms` words found in at least two of the `docs` best hits, by count and IDF."""
    top = sorted((h for h in hits if h.rowid is not None), key=lambda h: -h.score)[:docs]
    if len(top) < 2:
        return None
    rows = idx.card_rows([h.rowid for h in top])
    counts: Counter = Counter()
    for row in rows.values():
        counts.update({t for i, _f in enumerate(CARD_FIELDS) for t in row["tok"][i].split()} - q.tokens)
    shared = [t for t, c in counts.items() if c >= 2 and t not in q.idfs]
    if not shared:
        return None
    n_docs = idx.card_count()
    df = idx.doc_freq(shared)
    idf = {t: bm25.idf(df.get(t, 0), n_docs) for t in shared}
    best = sorted(shared, key=lambda t: (-counts[t] * idf[t], t))[:terms]
    return Expansion(SOURCE, 0.0, {t: idf[t] * WEIGHT / EXPANSION_WEIGHT for t in best})
