"""A query analysed against the index: intent, terms (as the index spells them), their IDF weights, and the
IDF mass of CJK content the vault has no bigram for; plus the candidate budget ranking shares (POOL, BIG,
pruning of common terms). Reads the index only through named Index methods (no SQL here)."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Mapping

from memvault.search import bm25, expand
from memvault.search import tokenize
from memvault.search.index import Index
from memvault.search.intent import split_intent

POOL = 150  # BM25 candidates re-scored per query
BIG = 5000  # an OR query matching more cards than this tries the AND of its words first …
SMALL_BIG, BIG_SHARE = 1000, 20  # … in a vault under 100k cards, more than max(1000, cards / 20)


def and_first_above(n_docs: int) -> int:
    """How many cards an OR query may match before ranking tries the AND of its words first: 5% of the vault,
    within 1,000..5,000 (at 10k cards a two-word query of common words matches ~2,500 cards, whose BM25
    ranking was half of a search's time; the cards holding every word are the best-scored anyway)."""
    return max(SMALL_BIG, min(BIG, n_docs // BIG_SHARE))
COMMON = 0.10  # terms in more than this share of documents are left out of the candidate query


# An analysed query: text and intent (str); terms (known + unknown ascii terms, in query order); idfs (term ->
# float); extra_mass (IDF mass of CJK content the vault has no bigram for); tokens (frozenset); expansions
# (expand.Expansion of the synonym groups the query hits; cards only); dfs (term -> how many documents hold it, for
# the terms looked up; None when not known).
Query = namedtuple("Query", "text intent terms idfs extra_mass tokens expansions dfs",
                   defaults=(frozenset(), (), None))


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


def prune(terms: list[str], idfs: Mapping[str, float], n_docs: int) -> list[str]:
    """Drop terms found in more than COMMON of the documents when a rarer term remains (PERF-NOTES: a query of
    only common words costs 10x); the dropped terms still score on the candidates that the rare terms find."""
    cutoff = bm25.idf(int(n_docs * COMMON), n_docs)
    rare = [t for t in terms if idfs[t] >= cutoff]
    return rare or terms


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
