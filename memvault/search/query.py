"""The analyse stage of a search (pipeline.py): the question as the index sees it. A Query holds the intent,
the terms (as the index spells them), their IDF weights and the IDF mass of CJK content the vault has no bigram
for; the stage's Analysis adds the entities the question names, the turns' own Query, how much of the question
is words the vault has never seen, and which order rules apply (recency prior, history). Reads the index only
through named Index methods (no SQL here)."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Mapping

from memvault.search import bm25, expand
from memvault.search import tokenize
from memvault.search.index import Index
from memvault.search.intent import asks_now, split_intent
from memvault.search.results import SearchOptions

# An analysed query: text and intent (str); terms (known + unknown ascii terms, in query order); idfs (term ->
# float); extra_mass (IDF mass of CJK content the vault has no bigram for); tokens (frozenset); expansions
# (expand.Expansion of the synonym groups the query hits; cards only); dfs (term -> how many documents hold it, for
# the terms looked up; None when not known).
Query = namedtuple("Query", "text intent terms idfs extra_mass tokens expansions dfs",
                   defaults=(frozenset(), (), None))


# The analyse stage's record: text (the question as typed); cards (its Query for cards) and turns (for raw turns,
# None without them); named (entity slug -> (the query terms naming it, its degree)); names (the query terms that
# name an entity); turn_names (the turns' terms of those names); unknown (share of the question in words the
# vault has never seen, the smaller of the cards' and the turns'); prior (the recency prior applies); history (a
# history question); keep (how many cards the hops stage turns into hits, None: all).
Analysis = namedtuple("Analysis", "text cards turns named names turn_names unknown prior history keep")


# Which questions get the recency prior, on the normalised question: those that ask about now (every question
# that is not about history, `split_intent(text)[0] == "current"`, was measured worse).
RECENCY_SCOPE = asks_now


def analysed(idx: Index, query: str, opts: SearchOptions, cards: Query | None = None) -> Analysis:
    """The analyse stage. `cards`: the cards' Query when the caller made it (eval/prf.py widens it)."""
    norm = tokenize.normalize(query)
    prior = opts.recency_half_life_days > 0 and not opts.bm25_only and RECENCY_SCOPE(norm)
    history = split_intent(norm)[0] != "current"
    q = cards or analyse(query, idx, opts.mode, use_intent=not opts.bm25_only,
                         synonyms=opts.expand and opts.synonyms and not opts.bm25_only)
    fused = opts.embeddings is not None and not opts.bm25_only
    # Hits are then ordered by score, date and id alone and at most `limit` cards shown, unless the recency
    # prior (its weights depend on the newest hit) or the dense fusion re-orders them.
    keep = None if prior or fused else opts.limit
    named = {} if opts.bm25_only else named_entities(idx, q)
    unknown = unknown_share(q, idx.card_count())
    names = name_terms(named)
    qe, turn_names = None, frozenset()
    if opts.episodes and idx.episode_stats()[0]:  # a vault of cards alone never loads the turns' stemmer
        qe = analyse(query, idx, opts.mode, episodes=True, use_intent=not opts.bm25_only)
        turn_names = episode_names(query, opts.mode, names)
        unknown = min(unknown, unknown_share(qe, idx.episode_stats()[0]))
    return Analysis(query, q, qe, named, names, turn_names, unknown, prior, history, keep)


def analyse(query: str, idx: Index, mode: str, episodes: bool = False, use_intent: bool = True,
            synonyms: bool = True) -> Query:
    norm = tokenize.normalize(query)
    intent = "current"
    text = norm
    if use_intent:
        intent, text = split_intent(norm)
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
    expansions: tuple = ()
    if synonyms and not episodes:
        sources = expand.synonym_sources(text, mode, stemmer)
        expansions = expand.weigh(sources, idx, max(n_docs, 1), idfs, top)
    return Query(text=norm, intent=intent, terms=terms, idfs=idfs, extra_mass=extra, tokens=frozenset(raw_terms),
                 expansions=expansions, dfs=df)


def _entity_tokens(idx: Index, cjk: list[str]) -> set[str]:
    """CJK query tokens that spell an entity name or alias (顾队 for 顾铭): known even if no card text has them."""
    if not cjk:
        return set()
    found: set[str] = set()
    have = set(cjk)
    for key, _slug in idx.entity_keys(cjk):
        parts = key.split()
        if all(p in have for p in parts):
            found.update(parts)
    return found


def _is_cjk(token: str) -> bool:
    return bool(token) and not token.isascii() and bool(tokenize.cjk_runs(token))


def unknown_share(q: Query, n_docs: int) -> float:
    """The share of the question's IDF mass in words the index has never seen (CJK content without a known
    bigram included): 1.0 for a question of such words only."""
    mass = sum(q.idfs.values()) + q.extra_mass
    if mass <= 0:
        return 1.0
    top = bm25.max_idf(max(n_docs, 1))
    return (sum(v for v in q.idfs.values() if v >= top - 1e-9) + q.extra_mass) / mass


def episode_names(query: str, mode: str, names: set[str]) -> frozenset[str]:
    """The raw turns' terms (episode stemmer) of the query words whose card terms name an entity (`names`)."""
    if not names:
        return frozenset()
    out = {t for t in names if not t.isascii()}  # CJK bigrams are the same for both stemmers
    for word in tokenize.normalize(query).split():
        if set(tokenize.tokens(word, mode, stop=False, stemmer=tokenize.CARD_STEMMER)) & names:
            out.update(tokenize.tokens(word, mode, stop=False, stemmer=tokenize.EPISODE_STEMMER))
    return frozenset(out)


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

