"""The candidates stage of a search (pipeline.py): which cards and raw turns get scored. Cards come from the
index's word lists (tantivy, or FTS5 without it: the AND of the words first when very many cards hold some),
from the entities the question names, and (while the pool has room) from expansion terms: the named entities'
other names and aliases, and with search.synonyms the groups of synonyms.py (expand.py). Turns come from the
turns' word lists, after the burstiness weights (a word said in nearly every session says little). Also the
candidate budget (POOL, BIG, pruning of common terms). Reads the index only through named Index methods."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Mapping

from memvault.search import bm25, expand
from memvault.search.index import CARD_FIELDS, CardFilter, Index, fts_match
from memvault.search.query import Analysis
from memvault.search.results import SearchOptions

POOL = 150  # BM25 candidates re-scored per query
BIG = 5000  # an OR query matching more cards than this tries the AND of its words first …
SMALL_BIG, BIG_SHARE = 1000, 20  # … in a vault under 100k cards, more than max(1000, cards / 20)
COMMON = 0.10  # terms in more than this share of documents are left out of the candidate query
# Field weights for BM25F, measured on eval/ (see eval/REPORT.md); the word lists rank candidates with them too.
CARD_WEIGHTS = {"title": 4.0, "entities": 3.0, "body": 1.0, "tags": 1.5}
# A named entity adds its newest ENTITY_CAP cards as candidates (the words of the query find the rest). Measured
# (issue 25): 200 -> 50 keeps the top 10 of bench/search.py's 30 queries at 100k cards and the own eval, and on
# LoCoMo's tuning half (eval/e2e.py) changes only cards' multi-hop recall 0.377 -> 0.380 and context recall
# 0.886 -> 0.887; it saves ~10 ms on a query naming two hubs.
ENTITY_CAP = 50
SPREAD, SPREAD_MIN_SESSIONS = 0.7, 5  # burstiness: weight × (1 - SPREAD × share of sessions holding the term)

# The candidates stage's record: card_stats (number of cards, average field lengths); cards (rowids, in the
# order found); exps (the expansions: the question's synonym groups and the named entities' other names);
# exp_idf (expansion term -> its scoring weight); turn_stats (number of turns, average lengths); turns (the
# turns' Query with the burstiness weights, None when no turn is a candidate); turn_rows (the turns' rows).
Candidates = namedtuple("Candidates", "card_stats cards exps exp_idf turn_stats turns turn_rows")


def and_first_above(n_docs: int) -> int:
    """How many cards an OR query may match before ranking tries the AND of its words first: 5% of the vault,
    within 1,000..5,000 (at 10k cards a two-word query of common words matches ~2,500 cards, whose BM25
    ranking was half of a search's time; the cards holding every word are the best-scored anyway)."""
    return max(SMALL_BIG, min(BIG, n_docs // BIG_SHARE))


def prune(terms: list[str], idfs: Mapping[str, float], n_docs: int) -> list[str]:
    """Drop terms found in more than COMMON of the documents when a rarer term remains (PERF-NOTES: a query of
    only common words costs 10x); the dropped terms still score on the candidates that the rare terms find."""
    cutoff = bm25.idf(int(n_docs * COMMON), n_docs)
    rare = [t for t in terms if idfs[t] >= cutoff]
    return rare or terms


def gathered(idx: Index, a: Analysis, opts: SearchOptions) -> Candidates:
    """The candidates stage."""
    stats = idx.card_stats()
    cards, exps, exp_idf = _cards(idx, a, opts, stats[0]) if stats[0] else ([], [], {})
    turn_stats, turns, rows = (0, {}), None, []
    if a.turns is not None:
        turn_stats = idx.episode_stats()
        n_docs = turn_stats[0]
        known = [t for t in a.turns.terms if a.turns.idfs[t] < bm25.max_idf(max(n_docs, 1)) - 1e-9]
        if n_docs and known:
            turns = a.turns
            if SPREAD and not opts.bm25_only:
                turns = turns._replace(idfs=_spread_weights(idx, turns.idfs, known))
            rows = turn_rows(idx, known, turns.idfs, n_docs, opts)
    return Candidates(stats, cards, exps, exp_idf, turn_stats, turns, rows)


def _cards(idx: Index, a: Analysis, opts: SearchOptions, n_docs: int) -> tuple[list[int], list, dict[str, float]]:
    q, named = a.cards, a.named
    flt = CardFilter(opts.include_all, opts.project, opts.kind)
    known = [t for t in q.terms if q.idfs[t] < bm25.max_idf(n_docs) - 1e-9]
    match_terms = prune(known, q.idfs, n_docs)
    cand: dict[int, None] = {}
    weights = [CARD_WEIGHTS[f] for f in CARD_FIELDS]
    if match_terms:
        rows: list[int] = []
        if len(match_terms) > 1 and idx.card_matches_above(match_terms, and_first_above(n_docs), q.dfs):
            # Trigger: tens of thousands of cards hold some query word. Why: ranking them all costs ~100 ms at
            # 100k cards with FTS5, and the cards holding every word are the best-scored anyway. Outcome: rank
            # those first; the OR query runs only when too few cards hold them all.
            rows = idx.card_candidates(match_terms, True, weights, flt, POOL)
        if len(rows) < POOL:
            rows = idx.card_candidates(match_terms, False, weights, flt, POOL)
        cand.update((r, None) for r in rows)
    if not opts.bm25_only:
        for slug in named:
            for rowid in idx.entity_card_rowids(slug, flt, ENTITY_CAP):
                cand.setdefault(rowid, None)
    exps = list(q.expansions)
    if opts.expand and named and not opts.bm25_only:
        srcs = expand.entity_sources([idx.entity_page(s) for s in named], {s: v[0] for s, v in named.items()},
                                     opts.mode)
        exps += expand.weigh(srcs, idx, n_docs, q.idfs, bm25.max_idf(n_docs))
    exp_idf: dict[str, float] = {}  # expansion term -> its scoring weight (below the query's own words)
    for _src, _mass, terms in exps:
        for t, i in terms.items():
            if t not in q.idfs:
                exp_idf[t] = max(exp_idf.get(t, 0.0), expand.EXPANSION_WEIGHT * i)
    if exp_idf and len(cand) < POOL:
        # Expansion terms widen the candidates only while the query's own words leave room in the pool: a
        # second FTS query over common words would cost as much again (bench/search.py), and a card found by
        # the query's own words outranks one found by a synonym anyway.
        extra = prune(sorted(exp_idf), {t: exp_idf[t] / expand.EXPANSION_WEIGHT for t in exp_idf}, n_docs)
        cand.update((r, None) for r in idx.card_candidates(extra, False, weights, flt, POOL - len(cand)))
    return list(cand), exps, exp_idf


def turn_rows(idx: Index, match_terms: list[str], idfs: Mapping[str, float], n_docs: int,
              opts: SearchOptions) -> list:
    """The turns holding the words (the common ones pruned in a big vault), best first by the word lists."""
    return idx.episode_matches(fts_match(prune(match_terms, idfs, n_docs) if n_docs > BIG else match_terms),
                               opts.project, max(POOL, opts.limit * 3))


def _spread_weights(idx: Index, idfs: dict[str, float], known: list[str]) -> dict[str, float]:
    """Burstiness: a topic word comes in bursts (camping is talked about in three sessions), while a word used
    in nearly every session (the other person's name, "thanks", the project's name) says little about which
    turn is meant even when its turn-level IDF is moderate. A term's weight shrinks by SPREAD times the share
    of sessions that hold it."""
    n_sessions = idx.session_count()
    if n_sessions < SPREAD_MIN_SESSIONS:
        return idfs
    out = dict(idfs)
    for t in known:
        k = idx.sessions_matching(fts_match([t]))
        out[t] = idfs[t] * (1.0 - SPREAD * k / n_sessions)
    return out

