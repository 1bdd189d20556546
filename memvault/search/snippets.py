"""The present stage of a search (pipeline.py): what a hit shows. A snippet around the passage that holds the
most matched terms, `why` lines in the user's own words ("matched: databases", not the stem "databas"), and the
SearchResult (its hits, or when every shown hit is weak, its `closest`). Pure functions on text and Hits."""

from __future__ import annotations

import re
from collections.abc import Mapping

from memvault.search import tokenize
from memvault.search.results import SearchOptions, SearchResult

TYPE_CHECKING = False  # typing's own constant, without importing typing
if TYPE_CHECKING:
    from memvault.search.fuse import Fused
    from memvault.search.query import Analysis


def presented(a: Analysis, f: Fused, opts: SearchOptions) -> SearchResult:
    """The present stage."""
    hits = f.hits[: opts.limit]
    words = surface_words(a.text, opts.mode, any(h.kind == "episode" for h in hits))
    shown = tuple(h._replace(why=tuple(readable(w, words) for w in h.why),
                             snippet=settle(h.snippet, opts.snippet_chars)) for h in hits)
    weak = bool(shown) and all(h.weak for h in shown)
    return SearchResult(query=a.text, intent=a.cards.intent, terms=tuple(a.cards.terms), hits=() if weak else shown,
                        warnings=tuple(f.warnings), closest=shown if weak else ())


def settle(snip: str | tuple[str, tuple[str, ...]], chars: int) -> str:
    """The snippet of a hit that is shown (a finished string stays as it is)."""
    return snip if isinstance(snip, str) else snippet(snip[0], list(snip[1]), chars)


def snippet(text: str, terms: list[str], chars: int) -> str:
    """About `chars` characters of `text` around its best-matching passage: the stretch holding the most
    distinct matched terms (the first such stretch on a tie), not merely the first place one occurs."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    folded = tokenize.normalize(flat)
    if len(folded) != len(flat):  # NFKC changed lengths: show the normalised text so offsets stay true
        flat = folded
    found = sorted((m.start(), t) for t in dict.fromkeys(terms)
                   for m in re.finditer(re.escape(t) if not t.isascii() else r"\b" + re.escape(t), folded))
    if not found:
        return flat[: chars - 1].rstrip() + "…"
    span = chars * 3 // 4  # the passage; the rest of the snippet is the lead-in before it
    pos, best, counts, j = found[0][0], 0, {}, 0
    for p, _t in found:  # a window [p, p + span) slid over the matches: distinct terms inside it
        while j < len(found) and found[j][0] < p + span:
            counts[found[j][1]] = counts.get(found[j][1], 0) + 1
            j += 1
        if len(counts) > best:
            pos, best = p, len(counts)
        counts[_t] -= 1
        if not counts[_t]:
            del counts[_t]
    start = max(0, min(pos - chars // 4, len(flat) - chars))
    out = flat[start : start + chars].strip()
    return ("…" if start > 0 else "") + out + ("…" if start + chars < len(flat) else "")


def surface_words(query: str, mode: str, episodes: bool) -> dict[str, str]:
    """Index term -> the query word it came from, so `why` says "matched: databases", not "databas"."""
    words: dict[str, str] = {}
    stemmers = (tokenize.CARD_STEMMER, tokenize.EPISODE_STEMMER) if episodes else (tokenize.CARD_STEMMER,)
    for word in re.findall(r"[A-Za-z0-9][A-Za-z0-9'._-]*", query):
        for stemmer in stemmers:
            for term in tokenize.tokens(word, mode, stop=False, stemmer=stemmer):
                words.setdefault(term, word.casefold())
    return words


def readable(why: str, words: Mapping[str, str]) -> str:
    if not why.startswith("matched: "):
        return why
    shown = dict.fromkeys(words.get(t, t) for t in why[len("matched: "):].split(", "))
    return "matched: " + ", ".join(shown)
