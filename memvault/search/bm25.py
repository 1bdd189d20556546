"""BM25F scoring of one document against query terms, and the like weight of an entity by how many cards
mention it (hub_damping). Pure: knows nothing of vaults, files or SQLite.

A document is a mapping field -> its tokens joined by single spaces (score_text, as the index keeps them) or
field -> list of tokens (score). Term frequencies of all fields are combined, each weighted and length-normalised
by its own field (BM25F, Robertson et al. 2004), and saturated once with k1.
"""

from __future__ import annotations

import math
from collections import Counter, namedtuple
from collections.abc import Mapping, Sequence

K1 = 1.2
B = 0.75
HUB_DEGREE = 12  # an entity mentioned by more cards than this is a hub: what it lends is damped (hub_damping)


# Named tuples (collections.namedtuple; not typing's: no module a search imports needs `typing`).
# Collection statistics: number of documents (int), average field lengths and document frequency of terms
# (field -> float, term -> int).
Stats = namedtuple("Stats", "n_docs avg_len df")
# score (float), matched (the query terms found in the document, in query order), coverage (the share of the
# query's IDF mass that the document matched, 0..1).
Scored = namedtuple("Scored", "score matched coverage")


def hub_damping(degree: int) -> float:
    """1 for a focused entity; shrinks like 1/sqrt(degree) for a hub mentioned by many cards (an entity's IDF,
    in effect: a card naming a hub, or reached through one, gets less of the credit)."""
    return 1.0 if degree <= HUB_DEGREE else math.sqrt(HUB_DEGREE / degree)


def idf(df: int, n_docs: int) -> float:
    """Okapi IDF, floored at a small positive value so a term in every document still counts a little."""
    return max(0.01, math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)))


def max_idf(n_docs: int) -> float:
    """The IDF of a term no document holds: an unknown query word weighs as much as the rarest known one."""
    return idf(0, n_docs)


def term_weights(terms: Sequence[str], stats: Stats) -> dict[str, float]:
    """IDF of each distinct query term (unknown terms get max IDF)."""
    return {t: idf(stats.df.get(t, 0), stats.n_docs) for t in dict.fromkeys(terms)}


def score(
    terms: Sequence[str],
    doc: Mapping[str, Sequence[str]],
    stats: Stats,
    weights: Mapping[str, float],
    k1: float = K1,
    b: float = B,
    idfs: Mapping[str, float] | None = None,
    extra_mass: float = 0.0,
) -> Scored:
    """BM25F score of `doc` (field -> its tokens) for `terms`: score_text on the tokens joined by one space.

    `extra_mass` adds IDF mass to the coverage denominator for query content that produced no term (for
    example CJK text that matches nothing in the vocabulary), so such content still counts as unmatched.
    """
    return score_text(terms, {f: " ".join(t) for f, t in doc.items()}, stats, weights, k1, b, idfs, extra_mass)


def score_text(
    terms: Sequence[str],
    fields: Mapping[str, str],
    stats: Stats,
    weights: Mapping[str, float],
    k1: float = K1,
    b: float = B,
    idfs: Mapping[str, float] | None = None,
    extra_mass: float = 0.0,
) -> Scored:
    """BM25F score of a document given as field -> its tokens joined by single spaces (what the index stores),
    counted with str.count without splitting it into tokens (a search at 100k cards scores several hundred
    candidates; splitting their bodies was a third of it). Term frequencies of all fields are combined, each
    weighted and length-normalised by its own field, and saturated once with k1."""
    idfs = idfs if idfs is not None else term_weights(terms, stats)
    spaced: dict[str, str] = {}  # field -> " a  b  c ": every token between its own two spaces, for str.count
    total = 0.0
    matched: list[str] = []
    matched_mass = 0.0
    for term, w_idf in idfs.items():
        tf = 0.0
        for field, text in fields.items():
            if not text or term not in text:
                continue
            padded = spaced.get(field)
            if padded is None:
                padded = spaced[field] = " " + text.replace(" ", "  ") + " "
            c = padded.count(" " + term + " ")
            if not c:
                continue
            avg = stats.avg_len.get(field) or 1.0
            norm = 1.0 - b + b * ((text.count(" ") + 1) / avg)
            tf += weights.get(field, 1.0) * c / norm
        if tf > 0:
            total += w_idf * tf / (k1 + tf)
            matched.append(term)
            matched_mass += w_idf
    mass = sum(idfs.values()) + extra_mass
    return Scored(score=total, matched=tuple(matched), coverage=(matched_mass / mass) if mass > 0 else 0.0)


def rank(
    terms: Sequence[str],
    docs: Mapping[str, Mapping[str, Sequence[str]]],
    weights: Mapping[str, float],
    k1: float = K1,
    b: float = B,
) -> list[tuple[str, Scored]]:
    """Score a whole small collection in memory (baselines, tests): statistics come from `docs` itself."""
    n = len(docs)
    fields = {f for d in docs.values() for f in d}
    avg = {f: sum(len(d.get(f, ())) for d in docs.values()) / max(n, 1) for f in fields}
    df: Counter = Counter()
    for d in docs.values():
        df.update({t for tokens in d.values() for t in tokens})
    stats = Stats(n_docs=n, avg_len=avg, df=df)
    idfs = term_weights(terms, stats)
    out = [(doc_id, score(terms, d, stats, weights, k1, b, idfs)) for doc_id, d in docs.items()]
    out = [(i, s) for i, s in out if s.score > 0]
    out.sort(key=lambda x: (-x[1].score, x[0]))
    return out
