"""Query expansion without a model: synonym groups (synonyms.py) and the other names of entities the query names.

A "source" is the query words that triggered an expansion (a synonym group member found in the query, or an
entity name or alias); its expansion terms are the other members' tokens, tokenised like the index. Ranking
scores an expansion term at EXPANSION_WEIGHT of its IDF (below the query's own words) and credits a card that
matches one with COVERAGE_SHARE of the source's mass toward the relevance floor, only when the card does not
match the source's own words. Pure apart from the Index reads it is handed; never imports yaml or jieba (the
jieba mode tokenises members with jieba only because the query is tokenised with it already).
"""

from __future__ import annotations

from collections.abc import Iterable

from memvault.search import tokenize
from memvault.search.index.reads import json_list
from memvault.search.synonyms import GROUPS

EXPANSION_WEIGHT = 0.5  # an expansion term scores this share of its IDF
COVERAGE_SHARE = 0.7  # a card matching only a source's expansions covers this share of the source's mass

_MEMBERS: dict[tuple[int, str, str], list[tuple[str, ...]]] = {}


def _members(gi: int, mode: str, stemmer: str) -> list[tuple[str, ...]]:
    """Group `gi` with each member as its tokens (stop words kept, so "go live" needs both words), cached.
    Only groups a query may hit are tokenised: doing all of them costs ~5 ms per process."""
    key = (gi, mode, stemmer)
    if key not in _MEMBERS:
        members = [tuple(tokenize.tokens(tokenize.normalize(m), mode, stop=False, stemmer=stemmer))
                   for m in GROUPS[gi]]
        _MEMBERS[key] = [m for m in dict.fromkeys(members) if m]
    return _MEMBERS[key]


_KEYS: dict[str, list[int]] = {}  # first four letters of a member's first word, or its first CJK character -> groups


def _keys() -> dict[str, list[int]]:
    if not _KEYS:
        for gi, group in enumerate(GROUPS):
            for m in group:
                key = m.split()[0][:4] if m.isascii() else m[0]
                if gi not in _KEYS.setdefault(key, []):
                    _KEYS[key].append(gi)
    return _KEYS


def _candidate_groups(text: str) -> list[int]:
    """Groups a query may hit, by a cheap look-up (the stemmer only trims endings, so a word's first four
    letters are kept); only those are tokenised."""
    keys = _keys()
    found: set[int] = set()
    for word in text.split():
        if word.isascii():
            found.update(keys.get(word[:4], ()))
    for ch in set(text):
        if not ch.isascii():
            found.update(keys.get(ch, ()))
    return sorted(found)


def synonym_sources(text: str, mode: str, stemmer: str) -> dict[tuple[str, ...], set[str]]:
    """Source (tokens of a member found in `text`, which is normalised) -> tokens of the group's other members."""
    have: set[str] | None = None
    out: dict[tuple[str, ...], set[str]] = {}
    for gi in _candidate_groups(text):
        if have is None:
            have = set(tokenize.tokens(text, mode, stop=False, stemmer=stemmer))
        members = _members(gi, mode, stemmer)
        hits = [m for m in members if all(t in have for t in m)]
        if not hits:
            continue
        # Every member found is the source (its words' mass is what a synonym match stands in for).
        src = tuple(dict.fromkeys(t for m in hits for t in m))
        terms = {t for m in members for t in m if not (set(m) <= have)}
        stop = {t for t in terms if not tokenize.tokens(t, mode, stemmer=stemmer)}
        terms -= stop | have
        if terms:
            out.setdefault(src, set()).update(terms)
    return out


def entity_sources(pages: Iterable[tuple | None], name_terms: dict[str, list[str]],
                   mode: str) -> dict[tuple[str, ...], set[str]]:
    """Source (the query's tokens naming an entity) -> tokens of the entity's other names and aliases.
    `pages` are Index.entity_page rows (slug, name, aliases JSON, ...) of the entities in `name_terms`."""
    out: dict[tuple[str, ...], set[str]] = {}
    for page in pages:
        if page is None or page[0] not in name_terms:
            continue
        src = tuple(name_terms[page[0]])
        names = [page[0].replace("-", " "), page[1] or "", *json_list(page[2] or "[]")]
        terms = {t for n in names for t in tokenize.tokens(tokenize.normalize(str(n)), mode)} - set(src)
        if terms:
            out.setdefault(src, set()).update(terms)
    return out


class Expansion(tuple):
    """(source tokens, source IDF mass, {expansion term: its IDF}) for the terms the index holds."""

    __slots__ = ()

    def __new__(cls, src: tuple[str, ...], mass: float, terms: dict[str, float]):
        return super().__new__(cls, (src, mass, terms))


def weigh(sources: dict[tuple[str, ...], set[str]], idx, n_docs: int, idfs: dict[str, float],
          top: float, episodes: bool = False) -> tuple[Expansion, ...]:
    """Keep the expansion terms the index holds, with their IDF; a source weighs its own words' IDF (a word the
    vault lacks weighs the maximum, as it does in the coverage denominator)."""
    if not sources:
        return ()
    from memvault.search import bm25

    wanted = sorted({t for terms in sources.values() for t in terms})
    df = idx.doc_freq(wanted, episodes=episodes)
    out = []
    for src, terms in sources.items():
        known = {t: bm25.idf(df[t], n_docs) for t in sorted(terms) if df.get(t)}
        if known:
            out.append(Expansion(src, sum(idfs.get(t, top) for t in src), known))
    return tuple(out)
