"""One search on an open, fresh index, as a pipeline of stages that a query passes once, in this order, each
stage a function of its own module that takes the records of the stages before it and returns its own:

1. analyse (query.py: Analysis): history/current intent from marker words ("before", "originally", "之前",
   "原来" …), which are then removed; the rest is tokenised like the index. CJK bigrams the vault has never seen
   are dropped, but the characters they leave unexplained still count as unmatched query content. Also the
   entities the question names, the turns' own terms, and how much of the question the vault has never seen.
2. candidates (candidates.py: Candidates): the cards and raw turns worth scoring.
3. score (scoring.py: Scored): BM25F on cards, BM25 on turns, the relevance floor; a question about something
   the vault does not hold therefore has no hit that reaches it (exit 1, like grep).
4. hops (hops.py: Reached): entity hops from the best hits, supersede chains, status rules; turns' context.
5. order (order.py: Ordered): recency prior, score, date, id; whether anything answers (else all weak).
6. fuse (fuse.py: Fused): the dense ranking joins when configured, and cards and turns become one list; both
   work on ranks, so the lists are ordered first.
7. present (snippets.py: SearchResult): snippets, `why` in the user's words, hits or closest.

A stage imports only the stages before it (the hops stage's cut uses order.final_order, the order a search
shows hits in), never this module or service (tests/unit/test_search_layout.py); bench/search_walk.py counts how
often one query's walk goes back to a module it has left, tests/services/test_search_pipeline.py traces it.
"""

from __future__ import annotations

from collections.abc import Mapping

from memvault.search.candidates import gathered
from memvault.search.fuse import fused
from memvault.search.hops import reached
from memvault.search.index import Index
from memvault.search.order import ordered
from memvault.search.query import Query, analysed
from memvault.search.results import Hit, SearchOptions, SearchResult
from memvault.search.scoring import scored
from memvault.search.snippets import presented


def search_index(idx: Index, query: str, opts: SearchOptions, env: Mapping[str, str] | None = None) -> SearchResult:
    """One search on an open, fresh index (`env`: where the dense layer's key comes from, default os.environ)."""
    a = analysed(idx, query, opts)
    c = gathered(idx, a, opts)
    s = scored(idx, a, c, opts)
    r = reached(idx, a, c, s, opts)
    o = ordered(a, r, opts)
    f = fused(idx, query, o, opts, env)
    return presented(a, f, opts)


def card_hits(idx: Index, q: Query, opts: SearchOptions) -> list[Hit]:
    """The cards alone for an analysed query `q`, unordered, their `why` in index terms; none when nothing
    reaches the relevance floor (eval/prf.py, which widens `q` with feedback terms)."""
    a = analysed(idx, q.text, opts._replace(episodes=False), cards=q)._replace(keep=None)
    c = gathered(idx, a, opts)
    s = scored(idx, a, c, opts)
    return [] if s.below else reached(idx, a, c, s, opts).cards
