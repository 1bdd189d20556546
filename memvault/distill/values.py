"""Facts that differ in one value: two active `fact` cards of one project that share an entity and say the
same thing but for one value ("The NAS answers on 10.0.0.5" / "… on 10.0.0.9") cannot both be true. Pure.

A text is split into tokens (ASCII words, numbers and addresses, single CJK characters, punctuation). A token is
a *value* when it holds a digit, or is an e-mail address or a path; a *name* when it is a capitalised ASCII
word. Two cards pair when their titles (or, with equal titles, their bodies' first sentences) have the same
tokens but at exactly one position, where both tokens are values, or both names.
Kept out, to keep false alarms low (tests/data/conflicts/fact-pairs.yaml):
- a number that names the thing rather than stating its value: after chapter, step, room, season … or between
  第 and 章/卷/集 … ("Chapter 1 is finished" / "Chapter 2 is finished");
- a name before the first mention of the shared entity, which is the subject, not a value ("Alice owns the
  Figma file" / "Bob owns the Figma file"); without such a mention names never pair;
- numbers written as words (六年 / 八年): left to a model or a state card.
Candidates come from grouping by (project, token pattern), never from comparing all pairs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Sequence

from memvault.model import Card

_TOKEN = re.compile(
    r"[A-Za-z0-9_.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"  # e-mail address
    r"|(?:/[A-Za-z0-9_.-]+)+/?"  # path
    r"|[A-Za-z0-9](?:[A-Za-z0-9_.:/%+-]*[A-Za-z0-9_%/])?"  # word, number, version, address, host:port
    r"|[\u3400-\u9fff\uf900-\ufaff]"  # one CJK character
    r"|[^\sA-Za-z0-9\u3400-\u9fff\uf900-\ufaff]"  # punctuation
)
# Words after which a number names the thing (chapter 2) instead of stating a value of it.
_ORDINAL_NOUNS = {
    "chapter", "chapters", "ch", "volume", "vol", "part", "step", "phase", "stage", "milestone", "episode",
    "ep", "season", "room", "sprint", "issue", "ticket", "pr", "bug", "no", "number", "level", "floor", "track",
    "lesson", "unit", "book", "act", "scene", "round", "page", "item", "task", "section", "figure", "table",
    "case", "test", "week", "day", "question", "q", "#",
}
_CJK_BEFORE = {"第"}
_CJK_AFTER = set("章卷集季步期楼层号节回部篇题幕")
_FIRST_SENTENCE = re.compile(r"[^\n。！？!?]*")


def value_pairs(active: Sequence[Card]) -> Iterator[tuple[Card, Card, str]]:
    """(card, card, shared entity) for every pair of active fact cards that differ in one value."""
    groups: dict[tuple, list[tuple[Card, list[str]]]] = defaultdict(list)
    facts = [c for c in active if c.kind == "fact" and c.entities]
    titles: dict[tuple[str, str], int] = defaultdict(int)
    for c in facts:
        titles[(c.project or "", _fold(c.title))] += 1
    for c in facts:
        # Equal titles ("NAS address" twice): the value sits in the body, so its first sentence is compared.
        text = c.title if titles[(c.project or "", _fold(c.title))] == 1 else _first_sentence(c.body)
        tokens = [m.group(0) for m in _TOKEN.finditer(text)]
        if tokens:
            groups[(c.project or "", _fold(c.title) if text is not c.title else "", _pattern(tokens))].append(
                (c, tokens))
    for members in groups.values():
        by_entity: dict[str, list[tuple[Card, list[str]]]] = defaultdict(list)
        for item in members:
            for slug in item[0].entities:
                by_entity[slug].append(item)
        seen: set[tuple[str, str]] = set()
        for slug in sorted(by_entity):
            items = by_entity[slug]
            for i, (x, xt) in enumerate(items):
                for y, yt in items[i + 1:]:
                    key = (min(x.id, y.id), max(x.id, y.id))
                    if key in seen:
                        continue
                    seen.add(key)
                    shared = sorted(set(x.entities) & set(y.entities))
                    if _one_value_apart(xt, yt, shared):
                        yield x, y, shared[0]


def _fold(text: str) -> str:
    return " ".join(text.lower().split())


def _first_sentence(body: str) -> str:
    m = _FIRST_SENTENCE.match(body.strip())
    return m.group(0)[:300] if m else ""


def _kind(token: str) -> str:
    if any(ch.isdigit() for ch in token) or "@" in token or token.startswith("/"):
        return "value"
    if token.isascii() and len(token) > 1 and token[0].isupper() and token.isalpha():
        return "name"
    return "word"


def _pattern(tokens: list[str]) -> tuple[str, ...]:
    """The tokens with every value and name as a placeholder: cards one value apart share it."""
    return tuple("\0" + k if (k := _kind(t)) != "word" else t.lower() for t in tokens)


def _one_value_apart(a: list[str], b: list[str], shared: list[str]) -> bool:
    if not shared or len(a) != len(b):
        return False
    differ = [i for i, (s, t) in enumerate(zip(a, b)) if s.lower() != t.lower()]
    if len(differ) != 1:
        return False
    i = differ[0]
    kind = _kind(a[i])
    if kind != _kind(b[i]) or kind == "word":
        return False
    if kind == "value":
        before = a[i - 1].lower() if i else ""
        after = a[i + 1] if i + 1 < len(a) else ""
        return before not in _ORDINAL_NOUNS and before not in _CJK_BEFORE and after not in _CJK_AFTER
    return _after_mention(a, i, shared)


def _after_mention(tokens: list[str], i: int, shared: list[str]) -> bool:
    """Whether token i comes after a mention of one of the shared entities (so it is not the subject)."""
    words = [t.lower() for t in tokens]
    for slug in shared:
        parts = [p for p in re.split(r"[-_\s]+", slug.lower()) if p]
        if not parts:
            continue
        n = len(parts)
        for start in range(0, i - n + 1):
            if all(_same_word(words[start + k], parts[k]) for k in range(n)):
                return True
        if "".join(words[:i]).find("".join(parts)) >= 0:  # a CJK name: one token per character
            return True
    return False


def _same_word(word: str, part: str) -> bool:
    """`emails` mentions `email`: equal, or one a plural of the other."""
    return word == part or word.rstrip("s") == part.rstrip("s")
