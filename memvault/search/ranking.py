"""Card ranking: candidates from the index's word lists (tantivy, or FTS5 without it), from the entities a query names and from expansion terms (expand.py),
BM25F re-scored on them, the relevance floor (and the one-word floor for a hit resting on a name or on synonyms
only), entity hops damped for hubs, supersede chains, and the status rules (superseded cards demoted unless the
question asks about history). Reads the index only through named Index methods (no SQL here); imports no other
search module above query.py, expand.py and snippets.py."""

from __future__ import annotations

import math
from collections.abc import Mapping

from memvault.search import bm25, expand
from memvault.search.index import CARD_FIELDS, CardFilter, Index
from memvault.search.query import POOL, Query, and_first_above, prune
from memvault.search.results import Hit, SearchOptions
from memvault.search.snippets import pending

# Field weights for BM25F, measured on eval/ (see eval/REPORT.md).
CARD_WEIGHTS = {"title": 4.0, "entities": 3.0, "body": 1.0, "tags": 1.5}
# A named entity adds its newest ENTITY_CAP cards as candidates (the words of the query find the rest); a hop
# through an entity brings its newest HOP_CAP neighbours (shown, not re-scored). Measured (issue 25): ENTITY_CAP
# 200 -> 50 keeps the top 10 of bench/search.py's 30 queries at 100k cards and the own eval, and on LoCoMo's
# tuning half (eval/e2e.py) changes only cards' multi-hop recall 0.377 -> 0.380 and context recall 0.886 ->
# 0.887; it saves ~10 ms on a query naming two hubs. HOP_CAP 50 cost the tuning half's search any@10 (0.861 ->
# 0.859): a hop's neighbours tie, and a history question shows the oldest of them first.
ENTITY_CAP = 50
HOP_CAP = 200
SUPERSEDED_NOW = 0.45  # weight of a superseded card for a "what is true now" question
SUPERSEDED_HISTORY = 1.15  # … and for a history question (full weight, and it wins a tie with its successor)
HOP_WEIGHT = 0.35  # a neighbour reached through an entity gets this share of its seed's score …
HUB_DEGREE = 12  # … damped by sqrt(HUB_DEGREE / degree) once the entity is mentioned by more cards than this
ENTITY_NAME_WEIGHT = 1.0
# A hit resting on one query word that is an entity name must cover search.name_floor of the question's IDF
# mass, and one resting on expansions only search.expansion_floor. Both default to 0 (off): the measured
# setting 0.4 / 0.25 (eval/lexical.py) stops a few hard negatives but costs the old eval set R@5 0.988 -> 0.963.


def search_cards(idx: Index, q: Query, opts: SearchOptions, keep: int | None = None,
                 named: dict[str, tuple[list[str], int]] | None = None) -> list[Hit]:
    """Cards for the analysed query, scored, unsorted; `why` still in index terms (service makes it readable).
    With `keep`, of the cards reached only through hops and chains (shown, not re-scored: ~600 at 100k cards)
    only the `keep` best in the order service gives hits (score, date, id) become hits; the caller then shows no
    more than `keep` cards and orders them by nothing else (no recency prior, no dense fusion). `named`: the
    entities the query names (named_entities), found here when not given. Each hit's `cover` is (share of the
    question's IDF mass it matched, share of the part of the question that is not the names of what it names)."""
    n_docs, avg = idx.card_stats()
    if not n_docs:
        return []
    stats = bm25.Stats(n_docs=n_docs, avg_len=avg, df={})
    flt = CardFilter(opts.include_all, opts.project, opts.kind)
    known = [t for t in q.terms if q.idfs[t] < bm25.max_idf(n_docs) - 1e-9]
    match_terms = prune(known, q.idfs, n_docs)
    cand: dict[int, None] = {}
    if match_terms:
        weights = [CARD_WEIGHTS[f] for f in CARD_FIELDS]
        rows: list[int] = []
        if len(match_terms) > 1 and idx.card_matches_above(match_terms, and_first_above(n_docs), q.dfs):
            # Trigger: tens of thousands of cards hold some query word. Why: ranking them all costs ~100 ms at
            # 100k cards with FTS5, and the cards holding every word are the best-scored anyway. Outcome: rank
            # those first; the OR query runs only when too few cards hold them all.
            rows = idx.card_candidates(match_terms, True, weights, flt, POOL)
        if len(rows) < POOL:
            rows = idx.card_candidates(match_terms, False, weights, flt, POOL)
        cand.update((r, None) for r in rows)
    if named is None:  # entity slug -> (query terms naming it, degree)
        named = {} if opts.bm25_only else _named_entities(idx, q, n_docs)
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
        weights = [CARD_WEIGHTS[f] for f in CARD_FIELDS]
        cand.update((r, None) for r in idx.card_candidates(extra, False, weights, flt, POOL - len(cand)))
    if not cand:
        return []
    rows = idx.card_heads(list(cand))
    all_idfs = {**exp_idf, **q.idfs}
    scored: dict[int, tuple[float, list[str], list[str]]] = {}  # rowid -> (score, matched terms, why)
    covers: dict[int, tuple[float, float]] = {}  # rowid -> (coverage, coverage beyond the names): Hit.cover
    mass = sum(q.idfs.values()) + q.extra_mass
    names = name_terms(named)
    free_mass = mass - sum(q.idfs.get(t, 0.0) for t in names)
    for rowid, row in rows.items():
        doc = dict(zip(CARD_FIELDS, row["tok"]))  # field -> its tokens, space-separated (as the index keeps them)
        s = bm25.score_text(q.terms, doc, stats, CARD_WEIGHTS, idfs=all_idfs, extra_mass=q.extra_mass)
        matched = [t for t in s.matched if t in q.idfs]
        total = s.score
        why = []
        credit, via, n_src = _expansion_credit(exps, matched, set(s.matched) - set(matched))
        ents = set(row["entities"])
        for slug, (naming, degree) in named.items():
            if slug in ents:
                new = [t for t in naming if t not in matched]
                # Counted like a match in the entities field: the card is about the thing the query names.
                total += ENTITY_NAME_WEIGHT * sum(q.idfs[t] for t in new) * _damp(degree) * 0.5
                matched.extend(new)
                why.append(f"names entity {slug}")
        coverage = min(1.0, (sum(q.idfs[t] for t in matched) + credit) / mass) if mass else 0.0
        # Other things the query names are alternatives ("sqlite postgres markdown"), not words this card fails
        # to answer: the anchor floor weighs the card against the rest of the question only.
        others = {t for slug, (ts, _d) in named.items() if slug not in ents for t in ts} - set(matched)
        rest = mass - sum(q.idfs.get(t, 0.0) for t in others)
        anchored = min(1.0, (sum(q.idfs[t] for t in matched) + credit) / rest) if rest > 0 else coverage
        if total <= 0 or ((why or not matched) and anchored + 1e-9 < (opts.name_floor if matched else opts.expansion_floor)
                          and _units(q.text, matched, named, ents) + n_src < 2):
            continue  # the hit rests on one topic word (often a name) and the question's other words are not in it
        if not _relevant(coverage, matched + via, doc, len(q.terms), opts.floor, why):
            continue
        scored[rowid] = (total, matched + via, why)
        free = sum(q.idfs[t] for t in matched if t not in names) + credit
        covers[rowid] = (coverage, min(1.0, free / free_mass) if free_mass > 1e-9 else coverage)
    if not scored:
        return []
    keys: dict[int, tuple[int, str, str, str]] = {}  # rowid -> (rowid, id, status, created) of hop neighbours
    if opts.hops and not opts.bm25_only:
        _hop(idx, scored, opts, flt, keys)
    if not opts.bm25_only:
        _follow_chains(idx, scored, rows, q.intent, flt)
    missing = [r for r in scored if r not in rows]
    if keep is not None and len(missing) > keep:
        # Trigger: hops reached more cards than can be shown. Why: reading and building each costs ~15 us, and
        # at most `keep` of them can rank in the first `keep`. Outcome: the `keep` best by the final order.
        best = set(_best_unscored(idx, scored, missing, keys, q.intent, opts.bm25_only, keep))
        for rowid in missing:
            if rowid not in best:
                del scored[rowid]
        missing = [r for r in missing if r in best]
    if missing:  # reached through hops and chains only: shown, not re-scored
        rows.update(idx.card_heads(missing, tokens=False))
    hits = []
    for rowid, (score, matched, why) in scored.items():
        row = rows[rowid]
        status = row["status"]
        why = list(why)
        if matched:
            why.insert(0, "matched: " + ", ".join(matched))
        score *= status_weight(status, q.intent, opts.bm25_only)
        if status == "superseded" and not opts.bm25_only and q.intent == "history":
            why.append("history question: superseded card at full weight")
        if row["superseded_by"]:
            why.append("superseded by " + ", ".join(row["superseded_by"]))
        if status == "retracted":
            why.append("retracted")
        # title None: the title, snippet text, sources and path are read only for the hits shown (with_details).
        hits.append(Hit(
            id=row["id"], kind=row["kind"], title=None, project=row["project"], status=status,  # type: ignore[arg-type]
            score=score, snippet=pending("", matched), why=tuple(why), created=row["created"], rowid=rowid,
            world=row.get("valid_from") or row["created"] or "", cover=covers.get(rowid, (0.0, 0.0))))
    return hits


def _best_unscored(idx: Index, scored: dict, rowids: list[int], known: dict, intent: str, bm25_only: bool,
                   keep: int) -> list[int]:
    """The `keep` first of `rowids` in the order service._ordered gives hits: the score after the status rule
    below (rounded to 6 places), then the date (newest first unless a history question), then the id. `known`:
    rowid -> (rowid, id, status, created) already read (the hops'); the others are read here."""
    read = [known[r] for r in rowids if r in known]
    rest = [r for r in rowids if r not in known]  # reached through a supersede chain only
    if rest:
        read += idx.card_keys(rest)
    keys = [(scored[rowid][0] * status_weight(status, intent, bm25_only), created, card_id, rowid)
            for rowid, card_id, status, created in read]
    return [k[3] for k in final_order(keys, intent, lambda k: k[0], lambda k: k[1], lambda k: k[2])[:keep]]


def status_weight(status: str, intent: str, bm25_only: bool) -> float:
    """What a card's score is multiplied by for its status: a superseded card counts less for a question about
    now and full for a history question."""
    if status != "superseded" or bm25_only:
        return 1.0
    return SUPERSEDED_HISTORY if intent == "history" else SUPERSEDED_NOW


def final_order(items: list, intent: str, score, created, ident) -> list:
    """`items` in the order a search shows them: score (rounded to 6 places), then ties by date (newest first,
    oldest first for a history question), then id. Three stable sorts, least significant key first: the same
    order as one tuple key, without building a per-character key for every candidate's date."""
    items.sort(key=ident)
    items.sort(key=created, reverse=intent != "history")
    items.sort(key=lambda x: -round(score(x), 6))
    return items


def with_details(idx: Index, hits: list[Hit], n: int) -> list[Hit]:
    """`hits` with the first `n` cards' title, snippet text, sources and path read (search_cards leaves them
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


def _units(text: str, matched: list[str], named: Mapping[str, tuple[list[str], int]], ents: set[str]) -> int:
    """How many separate query words `matched` holds: the tokens of one entity name count once, and CJK bigrams
    that overlap in the query (林晚 晚的, 公众 众号) are one word."""
    parent = {t: t for t in matched}

    def root(t: str) -> str:
        while parent[t] != t:
            t = parent[t]
        return t

    groups = [[t for t in terms if t in parent] for slug, (terms, _d) in named.items() if slug in ents]
    pos = {t: text.find(t) for t in matched if not t.isascii()}
    groups += [[a, b] for a in pos for b in pos if pos[a] >= 0 and pos[b] == pos[a] + 1]
    for g in groups:
        for t in g[1:]:
            parent[root(t)] = root(g[0])
    return len({root(t) for t in matched})


def _expansion_credit(exps: list, matched: list[str], exp_matched: set[str]) -> tuple[float, list[str], int]:
    """Coverage credit of the sources whose own words the card lacks but whose expansions it holds, the
    expansion terms that earned it (shown in `why` as matched words), and how many sources earned it."""
    n = 0
    credit = 0.0
    via: list[str] = []
    for src, mass, terms in exps:
        if mass <= 0 or any(t in matched for t in src):
            continue  # an expansion without mass (eval/prf.py feedback terms) only re-ranks
        hit = [t for t in terms if t in exp_matched]
        if hit:
            credit += expand.COVERAGE_SHARE * mass
            n += 1
            via.extend(t for t in hit if t not in via)
    return credit, via, n


def _relevant(coverage: float, matched: list[str], doc: Mapping[str, str], n_terms: int, floor: float,
              why: list[str]) -> bool:
    """The relevance floor. A card must match `floor` of the query's IDF mass, and a single query term that
    the card only mentions in passing (body only, of a query with three or more terms) is not evidence:
    "terraform remote state locking" must not return a card that says "lock" once."""
    if coverage + 1e-9 < floor:
        return False
    if len(matched) >= 2 or n_terms <= 2 or coverage >= 2 * floor or why:
        return True
    strong = " " + " ".join(doc.get(f) or "" for f in ("title", "entities", "tags")) + " "
    return any(" " + t + " " in strong for t in matched)


def named_entities(idx: Index, q: Query) -> dict[str, tuple[list[str], int]]:
    """Entity slug -> (the query terms naming it, its degree), for the entities the query names."""
    n_docs = idx.card_stats()[0]
    return _named_entities(idx, q, n_docs) if n_docs else {}


def name_terms(named: Mapping[str, tuple[list[str], int]]) -> set[str]:
    """The query terms that name an entity (`named`)."""
    return {t for terms, _degree in named.values() for t in terms}


def _named_entities(idx: Index, q: Query, n_docs: int) -> dict[str, tuple[list[str], int]]:
    """Entities whose name or alias appears in the query (all its tokens), or, for a query word the vault has
    never seen, an entity name within a small edit distance (rapidfuzz, imported only then)."""
    toks = [t for t in q.tokens]
    if not toks:
        return {}
    out: dict[str, tuple[list[str], int]] = {}
    rows = idx.entity_keys(toks)
    for key, slug in rows:
        parts = key.split()
        if all(p in q.tokens for p in parts):
            terms = [p for p in parts if p in q.idfs]
            prev = out.get(slug)
            if terms and (prev is None or len(terms) > len(prev[0])):
                out[slug] = (terms, 0)
    unknown = [t for t in q.terms if t.isascii() and len(t) >= 5 and q.idfs[t] >= bm25.max_idf(n_docs) - 1e-9]
    for t in unknown:
        for key, slug in idx.entity_keys_starting(t[0]):
            from rapidfuzz import fuzz  # only when there is a name to compare with (~15 ms to import)

            if fuzz.ratio(t, key) >= 85 and slug not in out:
                out[slug] = ([t], 0)
    for slug in out:
        out[slug] = (out[slug][0], idx.entity_degree(slug))
    return out


def _damp(degree: int) -> float:
    """1 for a focused entity; shrinks like 1/sqrt(degree) for a hub mentioned by many cards."""
    return 1.0 if degree <= HUB_DEGREE else math.sqrt(HUB_DEGREE / degree)


def _hop(idx: Index, scored: dict, opts: SearchOptions, flt: CardFilter, keys: dict) -> None:
    """Neighbours through shared entities of the best hits: `opts.hops` rounds, each from the round before.
    `keys` gets each neighbour's (rowid, id, status, created), read with it."""
    frontier = sorted(scored.items(), key=lambda kv: -kv[1][0])[:3]
    seen: dict[str, tuple[float, list]] = {}  # slug -> (damping, its newest cards): seeds share entities
    for _round in range(opts.hops):
        if not frontier:
            return
        best = frontier[0][1][0]
        found: dict[int, tuple[float, list[str], list[str]]] = {}
        for rowid, (score, _m, _w) in frontier:
            if score < 0.5 * best:
                continue
            seed_id = idx.card_id(rowid)
            for slug in idx.card_entity_slugs(rowid):
                if slug not in seen:
                    seen[slug] = (_damp(idx.entity_degree(slug)), idx.entity_card_keys(slug, flt, HOP_CAP))
                damp, neighbours = seen[slug]
                gain = score * HOP_WEIGHT * damp
                for key in neighbours:
                    other = key[0]
                    if other == rowid:
                        continue
                    if other in scored:
                        continue
                    keys[other] = key
                    prev = found.get(other)
                    if prev is None or gain > prev[0]:
                        found[other] = (gain, [], [f"via entity {slug} (from {seed_id})"])
        scored.update(found)
        frontier = sorted(found.items(), key=lambda kv: -kv[1][0])[:3]


def _follow_chains(idx: Index, scored: dict, rows: dict, intent: str, flt: CardFilter) -> None:
    """Supersede chains carry relevance along: a history question about "before we moved to X" finds the card
    X superseded even when that card never names X; a "now" question that matched an old card finds the card
    that replaced it. The carried score is the source's (the status rule then orders the pair)."""
    todo = [rowid for rowid, (_s, matched, why) in scored.items() if matched]  # not from hop-only hits
    seen = set()
    while todo:
        rowid = todo.pop()
        if rowid in seen:
            continue
        seen.add(rowid)
        row = rows.get(rowid)
        if row is None:
            row = rows[rowid] = idx.card_heads([rowid], tokens=False)[rowid]
        if intent == "history":
            links = row["supersedes"]
        else:
            links = row["superseded_by"] if row["status"] == "superseded" else []
        if not links:
            continue
        score = scored[rowid][0]
        for (other, _other_id) in idx.cards_with_ids(links, flt):
            prev = scored.get(other)
            if prev is None or prev[0] < score:
                note = f"{'earlier version of' if intent == 'history' else 'replaces'} {row['id']}, which matched"
                scored[other] = (score, prev[1] if prev else [], [*(prev[2] if prev else []), note])
                todo.append(other)
                seen.discard(other)
