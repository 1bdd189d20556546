"""search service: the entry point of a search. BM25F over cards (and raw turns with `episodes`), entity hops, time and status rules.

Pipeline for one query:
1. Analyse: history/current intent from marker words ("before", "originally", "之前", "原来" …), which are then
   removed; the rest is tokenised like the index. CJK bigrams the vault has never seen are dropped, but the
   characters they leave unexplained still count as unmatched query content (query segmentation against the
   indexed vocabulary).
2. Candidates: FTS5 OR-query over the known terms (very common terms pruned when rarer ones exist), plus every
   card of an entity the query names by name or alias, plus (while the pool has room) cards holding expansion
   terms: the named entities' other names and aliases, and with search.synonyms the groups of synonyms.py
   (expand.py), weighted below the query's own words.
3. Score: BM25F on title/entities/body/tags, re-computed here on the candidates with bm25.py so that each hit
   knows which terms it matched. Relevance floor: a hit must match at least `floor` of the query's IDF mass;
   a query about something the vault does not hold therefore returns nothing (exit 1, like grep). A hit resting
   on one word that is an entity name, or on expansions only, may be asked to cover more (search.name_floor,
   search.expansion_floor; off by default).
4. Entity hops from the best hits, damped for hub entities; superseded cards demoted unless the question asks
   about history; retracted cards only with `include_all`.
5. Only with `embeddings:` configured (opts.embeddings): the dense layer (search/dense/hybrid.py) embeds the
   question, adds its nearest cards (and turns) under the same filters, and fusion.fuse orders both; a dead
   endpoint leaves the lexical order and a warning in SearchResult.warnings. With embeddings off nothing of
   search/dense is imported (no numpy, no httpx).

Modules: intent (marker words), query (analysis, candidate budget), ranking (cards: BM25F, hops, supersede
chains, status rules), episodes (turns and their context), snippets (what a hit shows), results (the tuples),
fusion (lexical + dense order), dense/ (the optional embeddings layer), index/ (all SQL). This module: settings, options, run_search (refresh, search, freshness re-check, redaction).
A query flows service -> query/ranking/episodes -> index, never back. Kept cheap to import for the search fast
path (cli/fast.py): no module-level yaml, rapidfuzz, snowballstemmer or jieba; redact is imported at use.
Re-exports the names other packages import from here (run_search, options_from, settings, SearchOptions, Hit,
SearchResult, snippet, open_root, CARD_WEIGHTS, analyse, search_index).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from pathlib import Path  # annotations only: a search's process imports no pathlib (vault.local)
    from typing import Any

from memvault.choices import check_choice
from memvault.errors import NoMatch, UsageError
from memvault.search import tokenize
from memvault.search.episodes import EPISODE_WEIGHTS, search_episodes
from memvault.search.index import Index, find_root
from memvault.search.intent import asks_now, split_intent
from memvault.search.query import POOL, Query, analyse, episode_names, unknown_share
from memvault.search.ranking import (CARD_WEIGHTS, final_order, name_terms, named_entities, recency, search_cards,
                                     with_details)
from memvault.search.results import Hit, SearchOptions, SearchResult
from memvault.search.snippets import readable, settle, snippet, surface_words
from memvault.vault.local import derived_path
from memvault.vault.locate import locate_root

__all__ = ["CARD_WEIGHTS", "EPISODE_WEIGHTS", "POOL", "Hit", "Query", "SearchOptions", "SearchResult", "analyse",
           "open_root", "options_from", "run_search", "search_index", "settings", "snippet"]


# ---------------------------------------------------------------- settings


def settings(root: str | os.PathLike, env: Mapping[str, str]) -> dict[str, Any]:
    """The `search` and `redact.deny` settings, cached in the index keyed by memvault.yaml's stat so that a
    search does not import yaml. Any change to the file re-reads it through the normal config path. The cache
    is JSON: marshal, which spares a search importing json, saved 3-4 % of a whole search's CPU time (~1.2 ms;
    issue 37: three same-hour A/Bs at 10k cards; wall p50 -0.1 % in two, +8 % in one on a loaded machine),
    under the 5 % that would pay for a format of its own. Derived, like the rest of .memvault/."""
    cfg_path = os.path.join(root, "memvault.yaml")
    st = os.stat(cfg_path)
    key = f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"
    local = derived_path(root)
    cache = os.path.join(local or os.path.join(root, ".memvault"), "search-settings.json")
    racy = time.time_ns() - st.st_mtime_ns < 2_000_000_000  # as vault.store._settings: a fresh stat proves nothing
    try:
        if not racy:
            with open(cache, "rb") as fh:
                data = json.loads(fh.read())
            if data.get("key") == key and data.get("v") == 3:
                return data
    except (OSError, ValueError, EOFError, TypeError, AttributeError):
        pass  # none yet, another version's, or damaged: read memvault.yaml
    from pathlib import Path  # slow path: yaml, once per change of the file

    from memvault.vault.store import atomic_write, read_config

    cache = Path(cache)
    cfg = read_config(Path(root), env)
    deny = list(cfg.section("redact").get("deny") or [])
    # The embeddings section carries redact.deny too: what goes to the embeddings endpoint is redacted with it.
    data = {"v": 3, "key": key, "search": dict(cfg.section("search")), "deny": deny, "kinds": list(cfg.kinds),
            "embeddings": {**dict(cfg.section("embeddings")), "deny": deny}}
    try:
        if not racy:
            atomic_write(cache, json.dumps(data).encode())
    except (OSError, ValueError, TypeError):
        pass  # a read-only vault still searches; a value JSON cannot write (a YAML date) is read each time
    return data


# The shipped default of search.recency_half_life_days. Measured (docs/search.md, "Recency"): 365 days, on questions that
# say "now", changes neither the own eval nor LoCoMo's temporal questions; 30 and 90 cost LoCoMo temporal
# session R@5 (0.903 -> 0.896) and 30 the own eval; on every question without a history word, all cost a lot.
RECENCY_HALF_LIFE_DAYS = 365.0


def _asks_now(query: str) -> bool:
    return asks_now(tokenize.normalize(query))


def _not_history(query: str) -> bool:
    return split_intent(tokenize.normalize(query))[0] == "current"


# The shipped default of search.answer_floor, and the share of a question's IDF mass in words the vault has never
# seen (UNKNOWN_SHARE) from which it applies. Measured (docs/search.md, "No match"): the own eval's negative
# questions answered 32/48 -> 4/48; see there what it costs.
ANSWER_FLOOR = 0.55
UNKNOWN_SHARE = 0.2

RECENCY_SCOPE = _asks_now  # which questions get the prior (_not_history: every question, measured worse)


def options_from(cfg: Mapping[str, Any], kinds: Sequence[str] | None = None, **overrides: Any) -> SearchOptions:
    """Search settings with the command's overrides. With `kinds` (the vault's card kinds), --kind must be one."""
    if kinds is not None:
        check_choice("kind", overrides.get("kind"), kinds)
    base = {
        "limit": int(cfg.get("limit", 10)), "hops": int(cfg.get("hops", 1)),
        "snippet_chars": int(cfg.get("snippet_chars", 160)), "floor": float(cfg.get("floor", 0.15)),
        "episode_floor": float(cfg.get("episode_floor", 0.1)), "mode": str(cfg.get("chinese", "bigram")),
        "stat_all_below": int(cfg.get("stat_all_below", 5000)), "synonyms": bool(cfg.get("synonyms", False)),
        "name_floor": float(cfg.get("name_floor", 0.0)), "expansion_floor": float(cfg.get("expansion_floor", 0.0)),
        "recency_half_life_days": float(cfg.get("recency_half_life_days", RECENCY_HALF_LIFE_DAYS)),
        "episodes": bool(cfg.get("episodes", True)),
        "answer_floor": float(cfg.get("answer_floor", ANSWER_FLOOR)),
    }
    emb = overrides.pop("embeddings", None)
    if emb is not None and not isinstance(emb, tuple):  # the `embeddings:` section (a tuple: already parsed)
        if emb.get("base_url"):
            from memvault.search.dense.settings import from_section  # only when the dense layer is on

            emb = from_section(emb)
        else:
            emb = None
    base["embeddings"] = emb
    base.update({k: v for k, v in overrides.items() if v is not None})
    if base["mode"] not in tokenize.MODES:
        raise UsageError(f"search.chinese must be one of {', '.join(tokenize.MODES)}")
    if base["limit"] < 1:
        raise UsageError("--limit must be at least 1")
    if base["hops"] < 0:
        raise UsageError("--hops must be 0 or more")
    if base["recency_half_life_days"] < 0:
        raise UsageError("search.recency_half_life_days must be 0 (off) or more")
    return SearchOptions(**base)


def run_search(root: str | os.PathLike, query: str, opts: SearchOptions, deny: list[str] | None = None,
               env: Mapping[str, str] | None = None) -> SearchResult:
    """Open (and refresh) the index of the vault at `root`, search, and redact what is shown. With
    `opts.embeddings` the dense layer joins in (its key comes from `env`, default os.environ); what it has to
    say (fell back to words, cards without vectors) comes back in `warnings`, also with NoMatch."""
    if not query.strip():
        raise UsageError("empty query")
    env = os.environ if env is None else env
    with Index(root, opts.mode, opts.stat_all_below) as idx:
        idx.refresh(episodes=opts.episodes)
        result = search_index(idx, query, opts, env)
        # A hit whose file changed since the index saw it (edited in place): re-index and search again, once.
        rowids = [h.rowid for h in (*result.hits, *result.closest) if h.rowid is not None]
        if rowids and not idx.verify_cards(rowids):
            result = search_index(idx, query, opts, env)
    result = result._replace(hits=tuple(_redacted(h, deny or []) for h in result.hits),
                             closest=tuple(_redacted(h, deny or []) for h in result.closest))
    if not result.hits:
        # Exit 1 like grep; what came closest (if anything) travels with the error for the reader to show.
        exc = NoMatch("no match")
        exc.warnings = result.warnings  # type: ignore[attr-defined]
        exc.result = result  # type: ignore[attr-defined]
        raise exc
    return result


def _redacted(hit: Hit, deny: list[str]) -> Hit:
    """Defence in depth: what search shows passes the same filter as capture."""
    from memvault.redact import engine as redact

    rules = _rules(tuple(deny))
    return hit._replace(title=redact.redact(hit.title, rules).text, snippet=redact.redact(hit.snippet, rules).text)


_RULES: dict[tuple[str, ...], Any] = {}


def _rules(deny: tuple[str, ...]):
    from memvault.redact import engine as redact

    if deny not in _RULES:
        _RULES[deny] = redact.compile_rules(list(deny))
    return _RULES[deny]


# ---------------------------------------------------------------- one search


def search_index(idx: Index, query: str, opts: SearchOptions, env: Mapping[str, str] | None = None) -> SearchResult:
    """One search on an open, fresh index: analyse, rank cards (and episodes), order (fused with the dense
    ranking when `opts.embeddings` is set), keep `opts.limit`."""
    q = analyse(query, idx, opts.mode, use_intent=not opts.bm25_only, synonyms=opts.expand and opts.synonyms and not opts.bm25_only)
    hits, turns, unknown = _ranked(idx, query, q, opts)
    # With the dense layer on, meaning stands in for the words the vault never saw: answer_floor is not applied.
    floor = opts.answer_floor if opts.embeddings is None else 0.0
    if not opts.bm25_only and not _answers(hits + turns, unknown, floor):
        # Trigger: no hit answers the question: nothing reaches the relevance floor ("set up the job queue for
        # alerts" shares one word of five with the vault), or every hit rests on the names of what the question
        # is about, or the question holds words the vault has never seen and no hit matches answer_floor of it
        # ("what port does the Postgres replica listen on"). Why: a script or an agent must be able to tell "no
        # answer" from an answer (exit 1, like grep), yet a person still sees what came closest.
        # Outcome: the closest hits (without the floor when nothing reached it), each marked weak; hits that
        # match none of the question's words (hops, neighbouring turns) are left out.
        if not hits and not turns:
            hits, turns, _u = _ranked(idx, query, q, opts._replace(floor=0.0, episode_floor=0.0))
        # A card something replaced is no "closest" answer to a question about now (only to a history one).
        old_ok = not _not_history(query)
        hits, turns = ([_weak(h, q.terms) for h in xs if h.cover[0] > 0 and (old_ok or h.status != "superseded")]
                       for xs in (hits, turns))
    warnings: list[str] = []
    if opts.embeddings is not None and not opts.bm25_only:
        from memvault.search.dense.hybrid import fuse_hits  # only when the dense layer is on: numpy, httpx

        fused, warnings = fuse_hits(idx, query, opts, hits + turns, os.environ if env is None else env)
        hits = [h for h in fused if h.kind != "episode"]
        turns = [h for h in fused if h.kind == "episode"]
    hits = with_details(idx, hits, opts.limit)  # merge_turns takes at most `limit` cards
    hits = merge_turns(hits, turns, opts.limit) if opts.episodes else hits[: opts.limit]
    words = surface_words(query, opts.mode, any(h.kind == "episode" for h in hits[: opts.limit]))
    shown = tuple(h._replace(why=tuple(readable(w, words) for w in h.why),
                             snippet=settle(h.snippet, opts.snippet_chars)) for h in hits[: opts.limit])
    weak = bool(shown) and all(h.weak for h in shown)
    return SearchResult(query=query, intent=q.intent, terms=tuple(q.terms), hits=() if weak else shown,
                        warnings=tuple(warnings), closest=shown if weak else ())


def _ranked(idx: Index, query: str, q: Query, opts: SearchOptions) -> tuple[list[Hit], list[Hit], float]:
    """Cards and raw turns for the analysed query, each list in its own order (score, then the tie rules), and
    the share of the question in words the vault has never seen (the smaller of the cards' and the turns')."""
    prior = opts.recency_half_life_days > 0 and not opts.bm25_only and RECENCY_SCOPE(query)
    fused = opts.embeddings is not None and not opts.bm25_only
    # Hits are then ordered by score, date and id alone and at most `limit` cards shown, unless the recency
    # prior (its weights depend on the newest hit) or the dense fusion re-orders them.
    named = {} if opts.bm25_only else named_entities(idx, q)
    hits = search_cards(idx, q, opts, keep=None if prior or fused else opts.limit, named=named)
    unknown = unknown_share(q, idx.card_count())
    turns: list[Hit] = []
    if opts.episodes and idx.episode_stats()[0]:  # a vault of cards alone never loads the turns' stemmer
        qe = analyse(query, idx, opts.mode, episodes=True, use_intent=not opts.bm25_only)
        turns = search_episodes(idx, qe, opts, episode_names(query, opts.mode, name_terms(named)))
        unknown = min(unknown, unknown_share(qe, idx.episode_stats()[0]))
    hits, turns = (_ordered(recency(xs, opts.recency_half_life_days) if prior else xs, q.intent)
                   for xs in (hits, turns))
    return hits, turns, unknown


def _answers(hits: list[Hit], unknown: float, floor: float) -> bool:
    """Whether some hit answers the question: it matches a word besides the names of what the question is
    about, and, when UNKNOWN_SHARE or more of the question is words the vault has never seen, `floor` of it."""
    return any(free > 0 and (unknown < UNKNOWN_SHARE or whole + 1e-9 >= floor) for whole, free in
               (h.cover for h in hits))


def _ordered(hits: list[Hit], intent: str) -> list[Hit]:
    # Ties (cards that match the same way, e.g. every card of an entity the query names): newest first for a
    # question about now, oldest first for a history question (ranking.final_order, which the hops' cut uses too).
    return final_order(hits, intent, lambda h: h.score, lambda h: h.created, lambda h: h.id)


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


def _weak(hit: Hit, terms: Sequence[str]) -> Hit:
    matched = [w for w in hit.why if w.startswith("matched: ")]
    n = len(matched[0].split(", ")) if matched else 0
    return hit._replace(weak=True, why=(f"weak match: {n} of the question's {len(terms)} words", *hit.why))


def open_root(explicit: str | os.PathLike | None, env: Mapping[str, str]) -> Path:
    return find_root(explicit, env)


def root_path(explicit: str | os.PathLike | None, env: Mapping[str, str]) -> str:
    """open_root as a string path (the search's fast path does without pathlib)."""
    return locate_root(explicit, env)
