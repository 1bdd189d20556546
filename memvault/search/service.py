"""search: BM25F over cards (and raw turns with `episodes`), entity hops, time and status rules.

Pipeline for one query:
1. Analyse: history/current intent from marker words ("before", "originally", "之前", "原来" …), which are then
   removed; the rest is tokenised like the index. CJK bigrams the vault has never seen are dropped, but the
   characters they leave unexplained still count as unmatched query content (query segmentation against the
   indexed vocabulary).
2. Candidates: FTS5 OR-query over the known terms (very common terms pruned when rarer ones exist), plus every
   card of an entity the query names by name or alias.
3. Score: BM25F on title/entities/body/tags, re-computed here on the candidates with bm25.py so that each hit
   knows which terms it matched. Relevance floor: a hit must match at least `floor` of the query's IDF mass;
   a query about something the vault does not hold therefore returns nothing (exit 1, like grep).
4. Entity hops from the best hits, damped for hub entities; superseded cards demoted unless the question asks
   about history; retracted cards only with `include_all`.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from memvault.search import bm25
from memvault.search import tokenize
from memvault.choices import check_choice
from memvault.errors import NoMatch, UsageError
from memvault.search.index import CARD_FIELDS, Index, fts_match, find_root

# Field weights for BM25F, measured on eval/ (see eval/REPORT.md).
CARD_WEIGHTS = {"title": 4.0, "entities": 3.0, "body": 1.0, "tags": 1.5}
EPISODE_WEIGHTS = {"user": 1.0, "assistant": 1.0}
POOL = 150  # BM25 candidates re-scored per query
BIG = 5000  # an OR query matching more cards than this tries the AND of its words first
COMMON = 0.10  # terms in more than this share of documents are left out of the candidate query …
ENTITY_CAP = 200  # … and an entity contributes at most its newest this many cards
SUPERSEDED_NOW = 0.45  # weight of a superseded card for a "what is true now" question
SUPERSEDED_HISTORY = 1.15  # … and for a history question (full weight, and it wins a tie with its successor)
HOP_WEIGHT = 0.35  # a neighbour reached through an entity gets this share of its seed's score …
HUB_DEGREE = 12  # … damped by sqrt(HUB_DEGREE / degree) once the entity is mentioned by more cards than this
ENTITY_NAME_WEIGHT = 1.0
EPISODE_K1, EPISODE_B = bm25.K1, 0.2  # turns are short and alike in length: less length normalisation (REPORT)
NEIGHBOUR, NEIGHBOUR_FETCH = 0.3, 50  # an episode borrows this share of the best adjacent episode's score
SESSION = 0.25  # … and this share of its session's best score
SPREAD, SPREAD_MIN_SESSIONS = 0.7, 5  # burstiness: weight × (1 - SPREAD × share of sessions holding the term)
PRF_DOCS, PRF_TERMS, PRF_WEIGHT = 5, 0, 0.3  # feedback on episodes; off: measured on LoCoMo dev it lowers R@10 (REPORT)

_HISTORY = re.compile(
    r"\b(?:before|originally|original|at first|first|used to|previous|previously|earlier|initially|initial|"
    r"formerly|former|prior|back then|old|older|once)\b|之前|原来|最早|以前|当初|起初|一开始|原先|最初|曾经|早先|先前|过去|旧的"
)
_CURRENT = re.compile(r"\b(?:now|currently|current|latest|today|these days|nowadays|still|at the moment|moment)\b|现在|目前|当前|最新|如今|还在")

# NamedTuple, not dataclass: a dataclass costs ~2.5 ms of code generation at import, on every search call.
class SearchOptions(NamedTuple):
    limit: int = 10
    project: str | None = None
    kind: str | None = None
    include_all: bool = False
    hops: int = 1
    episodes: bool = False
    snippet_chars: int = 160
    floor: float = 0.15
    episode_floor: float = 0.1
    mode: str = "bigram"
    bm25_only: bool = False  # baseline for eval/: no entity names, no hops, no status or intent rules
    stat_all_below: int = 5000


class Hit(NamedTuple):
    id: str
    kind: str
    title: str
    project: str | None
    status: str
    score: float
    snippet: str
    why: tuple[str, ...]
    sources: tuple[str, ...] = ()  # episodes a card came from
    refs: tuple[str, ...] = ()  # input message ids an episode came from
    created: str = ""
    session: str | None = None
    path: str | None = None
    rowid: int | None = None  # internal: the index row, for the freshness check; not shown

    def to_json(self) -> dict[str, Any]:
        out = self._asdict()
        del out["rowid"]
        out["score"] = round(self.score, 4)
        out["why"] = list(self.why)
        out["sources"] = list(self.sources)
        out["refs"] = list(self.refs)
        return out


class SearchResult(NamedTuple):
    query: str
    intent: str  # current | history
    terms: tuple[str, ...]
    hits: tuple[Hit, ...]

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "intent": self.intent, "terms": list(self.terms),
                "count": len(self.hits), "hits": [h.to_json() for h in self.hits]}


class _Query(NamedTuple):
    text: str
    intent: str
    terms: list[str]  # known + unknown ascii terms, in query order
    idfs: dict[str, float]
    extra_mass: float  # IDF mass of CJK content the vault has no bigram for
    tokens: frozenset[str] = frozenset()


# ---------------------------------------------------------------- settings


def settings(root: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """The `search` and `redact.deny` settings, cached in the index keyed by memvault.yaml's stat so that a
    search does not import yaml. Any change to the file re-reads it through the normal config path."""
    cfg_path = root / "memvault.yaml"
    st = os.stat(cfg_path)
    key = f"{st.st_mtime_ns}:{st.st_size}"
    cache = root / ".memvault" / "search-settings.json"
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("key") == key and "kinds" in data:
            return data
    except (OSError, ValueError):
        pass
    from memvault.vault.store import atomic_write, read_config  # slow path: yaml, once per change of the file

    cfg = read_config(root, env)
    data = {"key": key, "search": dict(cfg.section("search")), "deny": list(cfg.section("redact").get("deny") or []),
            "kinds": list(cfg.kinds)}
    try:
        atomic_write(cache, json.dumps(data, ensure_ascii=False, sort_keys=True))
    except OSError:
        pass  # a read-only vault still searches
    return data


def options_from(cfg: Mapping[str, Any], kinds: Sequence[str] | None = None, **overrides: Any) -> SearchOptions:
    """Search settings with the command's overrides. With `kinds` (the vault's card kinds), --kind must be one."""
    if kinds is not None:
        check_choice("kind", overrides.get("kind"), kinds)
    base = {
        "limit": int(cfg.get("limit", 10)), "hops": int(cfg.get("hops", 1)),
        "snippet_chars": int(cfg.get("snippet_chars", 160)), "floor": float(cfg.get("floor", 0.15)),
        "episode_floor": float(cfg.get("episode_floor", 0.1)), "mode": str(cfg.get("chinese", "bigram")),
        "stat_all_below": int(cfg.get("stat_all_below", 5000)),
    }
    base.update({k: v for k, v in overrides.items() if v is not None})
    if base["mode"] not in tokenize.MODES:
        raise UsageError(f"search.chinese must be one of {', '.join(tokenize.MODES)}")
    if base["limit"] < 1:
        raise UsageError("--limit must be at least 1")
    if base["hops"] < 0:
        raise UsageError("--hops must be 0 or more")
    return SearchOptions(**base)


# ---------------------------------------------------------------- entry point


def run_search(root: Path, query: str, opts: SearchOptions, deny: list[str] | None = None) -> SearchResult:
    """Open (and refresh) the index of the vault at `root`, search, and redact what is shown."""
    if not query.strip():
        raise UsageError("empty query")
    with Index(root, opts.mode, opts.stat_all_below) as idx:
        idx.refresh(episodes=opts.episodes)
        result = search_index(idx, query, opts)
        # A hit whose file changed since the index saw it (edited in place): re-index and search again, once.
        rowids = [h.rowid for h in result.hits if h.rowid is not None]
        if rowids and not idx.verify_cards(rowids):
            result = search_index(idx, query, opts)
    hits = tuple(_redacted(h, deny or []) for h in result.hits)
    if not hits:
        raise NoMatch("no match")
    return SearchResult(result.query, result.intent, result.terms, hits)


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


# ---------------------------------------------------------------- query analysis


def analyse(query: str, idx: Index, mode: str, episodes: bool = False, use_intent: bool = True) -> _Query:
    norm = tokenize.normalize(query)
    intent = "current"
    text = norm
    if use_intent:
        if _HISTORY.search(norm):
            intent = "history"
        text = _CURRENT.sub(" ", _HISTORY.sub(" ", norm))
    stemmer = tokenize.EPISODE_STEMMER if episodes else tokenize.CARD_STEMMER
    raw_terms = list(dict.fromkeys(tokenize.tokens(text, mode, stemmer=stemmer)))
    if not raw_terms and text != norm:  # the query was only marker words: search them as words
        text = norm
        raw_terms = list(dict.fromkeys(tokenize.tokens(text, mode, stemmer=stemmer)))
    cjk = [t for t in raw_terms if _is_cjk(t)]
    cjk = [t for t in cjk if not (mode != "jieba" and len(t) == 2 and tokenize.is_function_bigram(t))]
    n_docs = idx.episode_stats()[0] if episodes else idx.card_count()
    df = idx.doc_freq([t for t in raw_terms if t in cjk or not _is_cjk(t)], episodes=episodes)
    terms: list[str] = []
    extra = 0.0
    top = bm25.max_idf(max(n_docs, 1))
    known_cjk = {t for t in cjk if df.get(t)} | _entity_tokens(idx, cjk)
    for t in raw_terms:
        if _is_cjk(t):
            if t in known_cjk:
                terms.append(t)
            elif mode == "jieba" and t in cjk:
                terms.append(t)  # whole words: an unknown one is unmatched content, like an English word
        else:
            terms.append(t)
    if mode != "jieba":
        # CJK characters that no known bigram explains are content the vault does not hold.
        for run in tokenize.cjk_runs(text):
            gap = 0  # consecutive content characters no known bigram explains
            for i, ch in enumerate(run + "的"):
                left = run[i - 1 : i + 1] if 0 < i < len(run) else ""
                right = run[i : i + 2] if i + 1 < len(run) else ""
                unexplained = (i < len(run) and ch not in tokenize.CJK_FUNCTION_CHARS and left not in known_cjk
                               and right not in known_cjk and not (len(run) == 1 and run in known_cjk))
                if unexplained:
                    gap += 1
                    continue
                # A lone unexplained character is mostly glue (死, 哪, 想); two or more make a word we lack.
                if gap >= 2:
                    extra += top * gap / 2
                gap = 0
    idfs = {t: bm25.idf(df.get(t, 0), max(n_docs, 1)) for t in terms}
    return _Query(text=norm, intent=intent, terms=terms, idfs=idfs, extra_mass=extra, tokens=frozenset(raw_terms))


def _entity_tokens(idx: Index, cjk: list[str]) -> set[str]:
    """CJK query tokens that spell an entity name or alias (顾队 for 顾铭): known even if no card text has them."""
    if not cjk:
        return set()
    found: set[str] = set()
    have = set(cjk)
    for (key,) in idx.db.execute(f"SELECT key FROM entity_keys WHERE first IN ({','.join('?' * len(cjk))})", cjk):
        parts = key.split()
        if all(p in have for p in parts):
            found.update(parts)
    return found


def _is_cjk(token: str) -> bool:
    return bool(token) and not token.isascii() and bool(tokenize.cjk_runs(token))


# ---------------------------------------------------------------- card search


def search_index(idx: Index, query: str, opts: SearchOptions) -> SearchResult:
    q = analyse(query, idx, opts.mode, use_intent=not opts.bm25_only)
    hits = _search_cards(idx, q, opts)
    if opts.episodes:
        qe = analyse(query, idx, opts.mode, episodes=True, use_intent=not opts.bm25_only)
        hits += _search_episodes(idx, qe, opts)
    # Ties (cards that match the same way, e.g. every card of an entity the query names): newest first for a
    # question about now, oldest first for a history question.
    older_first = q.intent == "history"
    hits.sort(key=lambda h: (-round(h.score, 6), _age_key(h.created, older_first), h.id))
    words = _surface_words(query, opts.mode, opts.episodes)
    shown = tuple(h._replace(why=tuple(_readable(w, words) for w in h.why)) for h in hits[: opts.limit])
    return SearchResult(query=query, intent=q.intent, terms=tuple(q.terms), hits=shown)


def _surface_words(query: str, mode: str, episodes: bool) -> dict[str, str]:
    """Index term -> the query word it came from, so `why` says "matched: databases", not "databas"."""
    words: dict[str, str] = {}
    stemmers = (tokenize.CARD_STEMMER, tokenize.EPISODE_STEMMER) if episodes else (tokenize.CARD_STEMMER,)
    for word in re.findall(r"[A-Za-z0-9][A-Za-z0-9'._-]*", query):
        for stemmer in stemmers:
            for term in tokenize.tokens(word, mode, stop=False, stemmer=stemmer):
                words.setdefault(term, word.casefold())
    return words


def _readable(why: str, words: Mapping[str, str]) -> str:
    if not why.startswith("matched: "):
        return why
    shown = dict.fromkeys(words.get(t, t) for t in why[len("matched: "):].split(", "))
    return "matched: " + ", ".join(shown)


def _age_key(created: str, older_first: bool) -> tuple:
    if older_first:
        return (created,)
    return (tuple(-ord(c) for c in created),)


def _filters(opts: SearchOptions, alias: str = "c") -> tuple[str, list[Any]]:
    sql, args = [], []
    if not opts.include_all:
        sql.append(f"{alias}.status != 'retracted'")
    if opts.project:
        sql.append(f"{alias}.project = ?")
        args.append(opts.project)
    if opts.kind:
        sql.append(f"{alias}.kind = ?")
        args.append(opts.kind)
    return "".join(f" AND {s}" for s in sql), args


def _search_cards(idx: Index, q: _Query, opts: SearchOptions) -> list[Hit]:
    n_docs, avg = idx.card_stats()
    if not n_docs:
        return []
    stats = bm25.Stats(n_docs=n_docs, avg_len=avg, df={})
    where, args = _filters(opts)
    known = [t for t in q.terms if q.idfs[t] < bm25.max_idf(n_docs) - 1e-9]
    match_terms = _prune(known, q.idfs, n_docs)
    cand: dict[int, None] = {}
    if match_terms:
        sql = (f"SELECT c.rowid FROM cfts JOIN cards c ON c.rowid = cfts.rowid WHERE cfts MATCH ?{where}"
               f" ORDER BY bm25(cfts, {', '.join(str(CARD_WEIGHTS[f]) for f in CARD_FIELDS)}) LIMIT {POOL}")
        rows = []
        if len(match_terms) > 1 and idx.db.execute(
                "SELECT count(*) FROM cfts WHERE cfts MATCH ?", (fts_match(match_terms),)).fetchone()[0] > BIG:
            # Trigger: tens of thousands of cards hold some query word. Why: ranking them all costs ~100 ms at
            # 100k cards, and the cards holding every word are the best-scored anyway. Outcome: rank those
            # first; the OR query runs only when too few cards hold them all.
            rows = idx.db.execute(sql, (" AND ".join(f'"{t}"' for t in match_terms), *args)).fetchall()
        if len(rows) < POOL:
            rows = idx.db.execute(sql, (fts_match(match_terms), *args)).fetchall()
        cand.update((r[0], None) for r in rows)
    named: dict[str, tuple[list[str], int]] = {}  # entity slug -> (query terms naming it, degree)
    if not opts.bm25_only:
        named = _named_entities(idx, q, n_docs)
        for slug in named:
            for (rowid,) in idx.db.execute(
                f"SELECT c.rowid FROM card_entities e JOIN cards c ON c.rowid = e.card WHERE e.entity = ?{where}"
                f" ORDER BY c.created DESC LIMIT {ENTITY_CAP}", (slug, *args)):
                cand.setdefault(rowid, None)
    if not cand:
        return []
    rows = _card_rows(idx, list(cand))
    scored: dict[int, tuple[float, list[str], list[str]]] = {}  # rowid -> (score, matched terms, why)
    for rowid, row in rows.items():
        doc = {f: row["tok"][i].split() for i, f in enumerate(CARD_FIELDS)}
        s = bm25.score(q.terms, doc, stats, CARD_WEIGHTS, idfs=q.idfs, extra_mass=q.extra_mass)
        matched = list(s.matched)
        total = s.score
        why = []
        ents = set(row["entities"])
        for slug, (name_terms, degree) in named.items():
            if slug in ents:
                new = [t for t in name_terms if t not in matched]
                # Counted like a match in the entities field: the card is about the thing the query names.
                total += ENTITY_NAME_WEIGHT * sum(q.idfs[t] for t in new) * _damp(degree) * 0.5
                matched.extend(new)
                why.append(f"names entity {slug}")
        mass = sum(q.idfs.values()) + q.extra_mass
        coverage = sum(q.idfs[t] for t in matched) / mass if mass else 0.0
        if total <= 0 or not _relevant(coverage, matched, doc, len(q.terms), opts.floor, why):
            continue
        scored[rowid] = (total, matched, why)
    if not scored:
        return []
    if opts.hops and not opts.bm25_only:
        _hop(idx, scored, opts, where, args)
    if not opts.bm25_only:
        _follow_chains(idx, scored, rows, q.intent, where, args)
    missing = [r for r in scored if r not in rows]
    if missing:
        rows.update(_card_rows(idx, missing))
    hits = []
    for rowid, (score, matched, why) in scored.items():
        row = rows[rowid]
        status = row["status"]
        why = list(why)
        if matched:
            why.insert(0, "matched: " + ", ".join(matched))
        if status == "superseded" and not opts.bm25_only:
            if q.intent == "history":
                score *= SUPERSEDED_HISTORY
                why.append("history question: superseded card at full weight")
            else:
                score *= SUPERSEDED_NOW
        if row["superseded_by"]:
            why.append("superseded by " + ", ".join(row["superseded_by"]))
        if status == "retracted":
            why.append("retracted")
        hits.append(Hit(
            id=row["id"], kind=row["kind"], title=row["title"], project=row["project"], status=status,
            score=score, snippet=snippet(row["body"] or row["title"], matched, opts.snippet_chars),
            why=tuple(why), sources=tuple(row["episodes"]), created=row["created"],
            path=row["path"], rowid=rowid))
    return hits


def _relevant(coverage: float, matched: list[str], doc: Mapping[str, list[str]], n_terms: int, floor: float,
              why: list[str]) -> bool:
    """The relevance floor. A card must match `floor` of the query's IDF mass, and a single query term that
    the card only mentions in passing (body only, of a query with three or more terms) is not evidence:
    "terraform remote state locking" must not return a card that says "lock" once."""
    if coverage + 1e-9 < floor:
        return False
    if len(matched) >= 2 or n_terms <= 2 or coverage >= 2 * floor or why:
        return True
    strong = {t for f in ("title", "entities", "tags") for t in doc.get(f, ())}
    return any(t in strong for t in matched)


def _prune(terms: list[str], idfs: Mapping[str, float], n_docs: int) -> list[str]:
    """Drop terms found in more than COMMON of the documents when a rarer term remains (PERF-NOTES: a query of
    only common words costs 10x); the dropped terms still score on the candidates that the rare terms find."""
    cutoff = bm25.idf(int(n_docs * COMMON), n_docs)
    rare = [t for t in terms if idfs[t] >= cutoff]
    return rare or terms


def _named_entities(idx: Index, q: _Query, n_docs: int) -> dict[str, tuple[list[str], int]]:
    """Entities whose name or alias appears in the query (all its tokens), or, for a query word the vault has
    never seen, an entity name within a small edit distance (rapidfuzz, imported only then)."""
    toks = [t for t in q.tokens]
    if not toks:
        return {}
    out: dict[str, tuple[list[str], int]] = {}
    rows = idx.db.execute(f"SELECT key, slug FROM entity_keys WHERE first IN ({','.join('?' * len(toks))})",
                          toks).fetchall()
    for key, slug in rows:
        parts = key.split()
        if all(p in q.tokens for p in parts):
            terms = [p for p in parts if p in q.idfs]
            prev = out.get(slug)
            if terms and (prev is None or len(terms) > len(prev[0])):
                out[slug] = (terms, 0)
    unknown = [t for t in q.terms if t.isascii() and len(t) >= 5 and q.idfs[t] >= bm25.max_idf(n_docs) - 1e-9]
    for t in unknown:
        for key, slug in idx.db.execute(
                "SELECT key, slug FROM entity_keys WHERE first >= ? AND first < ? AND key NOT LIKE '% %'",
                (t[0], chr(ord(t[0]) + 1))):
            from rapidfuzz import fuzz  # only when there is a name to compare with (~15 ms to import)

            if fuzz.ratio(t, key) >= 85 and slug not in out:
                out[slug] = ([t], 0)
    for slug in out:
        degree = idx.db.execute("SELECT count(*) FROM card_entities WHERE entity = ?", (slug,)).fetchone()[0]
        out[slug] = (out[slug][0], degree)
    return out


def _damp(degree: int) -> float:
    """1 for a focused entity; shrinks like 1/sqrt(degree) for a hub mentioned by many cards."""
    return 1.0 if degree <= HUB_DEGREE else math.sqrt(HUB_DEGREE / degree)


def _hop(idx: Index, scored: dict, opts: SearchOptions, where: str, args: list[Any]) -> None:
    """Neighbours through shared entities of the best hits: `opts.hops` rounds, each from the round before."""
    frontier = sorted(scored.items(), key=lambda kv: -kv[1][0])[:3]
    for _round in range(opts.hops):
        if not frontier:
            return
        best = frontier[0][1][0]
        found: dict[int, tuple[float, list[str], list[str]]] = {}
        for rowid, (score, _m, _w) in frontier:
            if score < 0.5 * best:
                continue
            seed_id = idx.db.execute("SELECT id FROM cards WHERE rowid = ?", (rowid,)).fetchone()[0]
            for (slug,) in idx.db.execute("SELECT entity FROM card_entities WHERE card = ?", (rowid,)).fetchall():
                degree = idx.db.execute("SELECT count(*) FROM card_entities WHERE entity = ?", (slug,)).fetchone()[0]
                gain = score * HOP_WEIGHT * _damp(degree)
                for (other,) in idx.db.execute(
                        f"SELECT c.rowid FROM card_entities e JOIN cards c ON c.rowid = e.card"
                        f" WHERE e.entity = ?{where} ORDER BY c.created DESC LIMIT {ENTITY_CAP}", (slug, *args)):
                    if other == rowid:
                        continue
                    if other in scored:
                        continue
                    prev = found.get(other)
                    if prev is None or gain > prev[0]:
                        found[other] = (gain, [], [f"via entity {slug} (from {seed_id})"])
        scored.update(found)
        frontier = sorted(found.items(), key=lambda kv: -kv[1][0])[:3]


def _follow_chains(idx: Index, scored: dict, rows: dict, intent: str, where: str, args: list[Any]) -> None:
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
            row = rows[rowid] = _card_rows(idx, [rowid])[rowid]
        if intent == "history":
            links = row["supersedes"]
        else:
            links = row["superseded_by"] if row["status"] == "superseded" else []
        if not links:
            continue
        score = scored[rowid][0]
        for (other, other_id) in idx.db.execute(
                f"SELECT c.rowid, c.id FROM cards c WHERE c.id IN ({','.join('?' * len(links))}){where}",
                (*links, *args)).fetchall():
            prev = scored.get(other)
            if prev is None or prev[0] < score:
                note = f"{'earlier version of' if intent == 'history' else 'replaces'} {row['id']}, which matched"
                scored[other] = (score, prev[1] if prev else [], [*(prev[2] if prev else []), note])
                todo.append(other)
                seen.discard(other)


def _card_rows(idx: Index, rowids: list[int]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    marks = ",".join("?" * len(rowids))
    for r in idx.db.execute(
            f"SELECT c.rowid, c.id, c.kind, c.title, c.project, c.status, c.body, c.entities, c.episodes,"
            f" c.superseded_by, c.created, c.path, f.title, f.entities, f.body, f.tags, c.supersedes"
            f" FROM cards c JOIN cfts f ON f.rowid = c.rowid WHERE c.rowid IN ({marks})", rowids):
        out[r[0]] = {"id": r[1], "kind": r[2], "title": r[3], "project": r[4], "status": r[5], "body": r[6],
                     "entities": json.loads(r[7]), "episodes": json.loads(r[8]),
                     "superseded_by": json.loads(r[9]), "created": r[10], "path": r[11], "tok": r[12:16],
                     "supersedes": json.loads(r[16])}
    return out


# ---------------------------------------------------------------- episode search


def _search_episodes(idx: Index, q: _Query, opts: SearchOptions) -> list[Hit]:
    n_docs, avg = idx.episode_stats()
    known = [t for t in q.terms if q.idfs[t] < bm25.max_idf(max(n_docs, 1)) - 1e-9]
    if not n_docs or not known:
        return []
    stats = bm25.Stats(n_docs=n_docs, avg_len=avg, df={})
    if SPREAD and not opts.bm25_only:
        q = q._replace(idfs=_spread_weights(idx, q.idfs, known))
    scored = _score_episodes(idx, q.terms, q.idfs, q.extra_mass, known, stats, n_docs, opts)
    if PRF_TERMS and scored and not opts.bm25_only:
        # Pseudo-relevance feedback (RM3-like): words the best turns share widen the query a little, so the
        # other turns of a story told over several sessions come up too. Coverage stays on the user's words.
        weights: dict[str, float] = {}
        for _s, _m, row in sorted(scored, key=lambda x: -x[0])[:PRF_DOCS]:
            for tok in set(row[8].split()) | set(row[9].split()):
                if tok not in q.idfs and not tok.isdigit():
                    weights[tok] = weights.get(tok, 0) + 1
        cands = [t for t, c in weights.items() if c >= 2]
        df = idx.doc_freq(cands, episodes=True)
        ranked = sorted(cands, key=lambda t: (-weights[t] * bm25.idf(df.get(t, n_docs), n_docs), t))[:PRF_TERMS]
        if ranked:
            idfs = dict(q.idfs)
            for t in ranked:
                idfs[t] = PRF_WEIGHT * bm25.idf(df.get(t, 0), n_docs)
            terms = [*q.terms, *ranked]
            scored = _score_episodes(idx, terms, idfs, q.extra_mass, known + ranked, stats, n_docs, opts,
                                     coverage_terms=q.idfs)
    if not opts.bm25_only:
        scored = _with_context(idx, scored, opts)
    hits = []
    for score, matched, row, *extra in scored:
        _rowid, ep_id, at, project, session, refs, user, assistant, _tu, _ta, _turn = row
        text = f"{user}\n{assistant}"
        title = " ".join(user.split())[:80] or " ".join(assistant.split())[:80]
        why = (("matched: " + ", ".join(matched),) if matched else ()) + tuple(extra)
        hits.append(Hit(
            id=ep_id, kind="episode", title=title, project=project, status="live", score=score,
            snippet=snippet(text, matched, opts.snippet_chars), why=why,
            refs=tuple(json.loads(refs)), created=at, session=session))
    return hits


_EP_COLS = ("e.rowid, e.id, e.at, e.project, e.session, e.refs, e.user, e.assistant, f.user, f.assistant, e.turn")


def _with_context(idx: Index, scored: list, opts: SearchOptions) -> list:
    """Context within a conversation. A turn is often only understood with its neighbours (the reply to "what's
    your best camping memory?" never says camping; "love the horse!" follows the photo it praises), so each
    episode borrows NEIGHBOUR of the best score next to it in its session; and a session whose turns match
    well lends SESSION of its best score to each of its episodes, which lifts the quieter turns of a story."""
    if not (NEIGHBOUR or SESSION) or not scored:
        return scored
    own = {row[0]: (sc, m, row) for sc, m, row in scored}
    pos = {(row[3], row[4], row[10]): row[0] for _s, _m, row in scored}
    best_session: dict[tuple, float] = {}
    for sc, _m, row in scored:
        key = (row[3], row[4])
        best_session[key] = max(best_session.get(key, 0.0), sc)
    borrowed: dict[tuple, float] = {}
    if NEIGHBOUR:
        for sc, _m, row in scored:
            for d in (-1, 1):
                key = (row[3], row[4], row[10] + d)
                borrowed[key] = max(borrowed.get(key, 0.0), sc)
        missing = [k for k in borrowed if k not in pos]
        for key in missing[:NEIGHBOUR_FETCH]:
            r = idx.db.execute(
                f"SELECT {_EP_COLS} FROM efts f JOIN episodes e ON e.rowid = f.rowid WHERE e.project = ? AND"
                f" e.session = ? AND e.turn = ? AND e.id NOT IN (SELECT id FROM revoked)", key).fetchone()
            if r is not None:
                own[r[0]] = (0.0, [], r)
                pos[key] = r[0]
    out = []
    for rowid, (sc, matched, row) in own.items():
        total = sc + NEIGHBOUR * borrowed.get((row[3], row[4], row[10]), 0.0)
        total += SESSION * best_session.get((row[3], row[4]), 0.0)
        extra = [] if matched else ["next to a matching turn"]
        out.append((total, matched, row, *extra))
    return out


def _spread_weights(idx: Index, idfs: dict[str, float], known: list[str]) -> dict[str, float]:
    """Burstiness: a topic word comes in bursts (camping is talked about in three sessions), while a word used
    in nearly every session (the other person's name, "thanks", the project's name) says little about which
    turn is meant even when its turn-level IDF is moderate. A term's weight shrinks by SPREAD times the share
    of sessions that hold it."""
    n_sessions = idx.db.execute("SELECT count(*) FROM (SELECT DISTINCT project, session FROM episodes)").fetchone()[0]
    if n_sessions < SPREAD_MIN_SESSIONS:
        return idfs
    out = dict(idfs)
    for t in known:
        (k,) = idx.db.execute(
            "SELECT count(*) FROM (SELECT DISTINCT e.project, e.session FROM efts f JOIN episodes e"
            " ON e.rowid = f.rowid WHERE efts MATCH ?)", (fts_match([t]),)).fetchone()
        out[t] = idfs[t] * (1.0 - SPREAD * k / n_sessions)
    return out


def _score_episodes(idx: Index, terms, idfs, extra_mass, match_terms, stats, n_docs, opts, coverage_terms=None):
    where = " AND e.project = ?" if opts.project else ""
    args = [opts.project] if opts.project else []
    rows = idx.db.execute(
        f"SELECT {_EP_COLS}"
        f" FROM efts f JOIN episodes e ON e.rowid = f.rowid WHERE efts MATCH ?{where}"
        f" AND e.id NOT IN (SELECT id FROM revoked) ORDER BY bm25(efts) LIMIT {max(POOL, opts.limit * 3)}",
        (fts_match(_prune(match_terms, idfs, n_docs) if n_docs > BIG else match_terms), *args)).fetchall()
    base = coverage_terms if coverage_terms is not None else idfs
    mass = sum(base.values()) + extra_mass
    out = []
    for row in rows:
        s = bm25.score(terms, {"user": row[8].split(), "assistant": row[9].split()}, stats, EPISODE_WEIGHTS,
                       k1=EPISODE_K1, b=EPISODE_B, idfs=idfs, extra_mass=extra_mass)
        coverage = sum(base[t] for t in s.matched if t in base) / mass if mass else 0.0
        if s.score <= 0 or coverage + 1e-9 < opts.episode_floor:
            continue
        out.append((s.score, [t for t in s.matched if t in base], row))
    return out


# ---------------------------------------------------------------- snippets


def snippet(text: str, terms: list[str], chars: int) -> str:
    """About `chars` characters of `text` centred on the first place a matched term occurs."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    folded = tokenize.normalize(flat)
    if len(folded) != len(flat):  # NFKC changed lengths: show the normalised text so offsets stay true
        flat = folded
    pos = -1
    for t in terms:
        m = re.search(re.escape(t), folded) if not t.isascii() else re.search(r"\b" + re.escape(t), folded)
        if m and (pos < 0 or m.start() < pos):
            pos = m.start()
    if pos < 0:
        return flat[: chars - 1].rstrip() + "…"
    start = max(0, min(pos - chars // 3, len(flat) - chars))
    out = flat[start : start + chars].strip()
    return ("…" if start > 0 else "") + out + ("…" if start + chars < len(flat) else "")


def open_root(explicit: str | os.PathLike | None, env: Mapping[str, str]) -> Path:
    return find_root(explicit, env)
