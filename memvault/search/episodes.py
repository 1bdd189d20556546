"""Episode search (`search --episodes`): BM25 over raw turns with less length normalisation, burstiness
weights across sessions, and context spreading within a conversation (neighbour turns, session scores).
Reads the index only through named Index methods (no SQL here)."""

from __future__ import annotations


from memvault.voices import turn_text
from memvault.search import bm25
from memvault.search.index import Index, fts_match
from memvault.search.index.reads import json_list
from memvault.search.query import BIG, POOL, Query, prune
from memvault.search.results import Hit, SearchOptions
from memvault.search.snippets import pending

EPISODE_WEIGHTS = {"user": 1.0, "assistant": 1.0}
EPISODE_K1, EPISODE_B = bm25.K1, 0.2  # turns are short and alike in length: less length normalisation (REPORT)
NEIGHBOUR, NEIGHBOUR_FETCH = 0.3, 50  # an episode borrows this share of the best adjacent episode's score
SESSION = 0.25  # … and this share of its session's best score
SPREAD, SPREAD_MIN_SESSIONS = 0.7, 5  # burstiness: weight × (1 - SPREAD × share of sessions holding the term)
PRF_DOCS, PRF_TERMS, PRF_WEIGHT = 5, 0, 0.3  # feedback on episodes; off: measured on LoCoMo dev it lowers R@10 (REPORT)


def search_episodes(idx: Index, q: Query, opts: SearchOptions, names: frozenset[str] = frozenset()) -> list[Hit]:
    """Episodes (raw turns) for the query analysed with the episode stemmer, scored, unsorted. `names`: the
    query terms that name an entity; each hit's `cover` is (share of the query's IDF mass it matched, share of
    the rest of the query, without those names)."""
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
    mass = sum(q.idfs.values()) + q.extra_mass
    free_mass = mass - sum(v for t, v in q.idfs.items() if t in names)
    for score, matched, row, *extra in scored:
        _rowid, ep_id, at, project, session, refs, user, assistant, _tu, _ta, _turn, speakers = row
        text = turn_text(user, assistant, _speakers(speakers))
        title = " ".join(user.split())[:80] or " ".join(assistant.split())[:80]
        why = (("matched: " + ", ".join(matched),) if matched else ()) + tuple(extra)
        hits.append(Hit(
            id=ep_id, kind="episode", title=title, project=project, status="live", score=score,
            snippet=pending(text, matched), why=why,
            refs=tuple(json_list(refs)), created=at, session=session, world=at or "",
            cover=_cover(q.idfs, matched, names, mass, free_mass)))
    return hits


def _cover(idfs: dict[str, float], matched: list[str], names: frozenset[str], mass: float,
           free_mass: float) -> tuple[float, float]:
    whole = sum(idfs.get(t, 0.0) for t in matched) / mass if mass else 0.0
    if free_mass <= 1e-9:
        return whole, whole
    return whole, sum(idfs.get(t, 0.0) for t in matched if t not in names) / free_mass


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
            r = idx.episode_at(*key)
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
    n_sessions = idx.session_count()
    if n_sessions < SPREAD_MIN_SESSIONS:
        return idfs
    out = dict(idfs)
    for t in known:
        k = idx.sessions_matching(fts_match([t]))
        out[t] = idfs[t] * (1.0 - SPREAD * k / n_sessions)
    return out


def _score_episodes(idx: Index, terms, idfs, extra_mass, match_terms, stats, n_docs, opts, coverage_terms=None):
    rows = idx.episode_matches(fts_match(prune(match_terms, idfs, n_docs) if n_docs > BIG else match_terms),
                               opts.project, max(POOL, opts.limit * 3))
    base = coverage_terms if coverage_terms is not None else idfs
    mass = sum(base.values()) + extra_mass
    out = []
    for row in rows:
        s = bm25.score_text(terms, {"user": row[8], "assistant": row[9]}, stats, EPISODE_WEIGHTS,
                            k1=EPISODE_K1, b=EPISODE_B, idfs=idfs, extra_mass=extra_mass)
        coverage = sum(base[t] for t in s.matched if t in base) / mass if mass else 0.0
        if s.score <= 0 or coverage + 1e-9 < opts.episode_floor:
            continue
        out.append((s.score, [t for t in s.matched if t in base], row))
    return out


def _speakers(text: str | None) -> dict | None:
    if not text or text == "{}":
        return None
    import json  # turns with speakers' names only

    return json.loads(text)
