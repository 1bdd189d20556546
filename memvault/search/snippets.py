"""What a hit shows: a snippet centred on the first matched term, and `why` lines in the user's own words
("matched: databases", not the stem "databas"). Pure functions on text; imports only tokenize."""

from __future__ import annotations

import re
from collections.abc import Mapping

from memvault.search import tokenize


def pending(text: str, terms: list[str]) -> tuple[str, tuple[str, ...]]:
    """What a hit's snippet will be made from. Ranking scores a few hundred candidates and shows ten: the
    snippet (a normalisation and a regex per term) is made only for the hits shown, by `settle`."""
    return (text, tuple(terms))


def settle(snip: str | tuple[str, tuple[str, ...]], chars: int) -> str:
    """The snippet of a hit that is shown (a finished string stays as it is)."""
    return snip if isinstance(snip, str) else snippet(snip[0], list(snip[1]), chars)


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
