"""Conflicts: pairs of active cards that cannot both be true, found by pure code (no LLM, no I/O).

Three sorts, always within one project (a project's card never conflicts with another project's or a personal
one: each holds in its own scope):
- `state`: two state cards with the same state key (merge.state_key: project, subject, field) and other values.
  Distill and remember supersede these as they write, so they come from git merges, imports and hand edits.
- `restated`: the same subject and field written differently (`Deploy Target` / `DeployTarget`, `部署目标` /
  `部署 目标`), on any card kind that carries subject, field and value, with other values.
- `value`: two `fact` cards sharing an entity that say the same but for one value (an IP, a port, a version, a
  name): memvault.distill.values.
- `duplicate`: two cards of one kind whose titles are near-duplicates by merge.py's own rule (title_score at the
  merge threshold, and no swapped content word), which distill would have merged. Not state cards.

Fast on large vaults: candidate pairs come from grouping by key, never from comparing all pairs. Near-duplicates
are looked up through an inverted index of title tokens: a near-duplicate pair swaps no content word, so one
title's tokens are all covered by the other's (equal, or one a 4+ character prefix of the other, as
merge._covered says). Each card is compared only with the cards covering every one of its tokens (the
intersection of their holder sets, smallest first), and pairs whose lengths alone rule out the score are
skipped: the work grows with the pairs that share all their words, not with the square of the cards.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.distill.merge import _tokens, norm_title, same_value, state_key, title_score
from memvault.distill.values import value_pairs
from memvault.model import Card

SORTS = ("state", "restated", "value", "duplicate")


@dataclass(frozen=True)
class Conflict:
    """Two active cards that disagree; `a` < `b` by id, so a pair has one spelling."""

    a: str
    b: str
    sort: str  # state | restated | value | duplicate
    project: str | None
    reason: str  # one line naming the key, never the cards' text beyond subject and field

    def other(self, cid: str) -> str:
        return self.b if cid == self.a else self.a

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "sort": self.sort, "project": self.project, "reason": self.reason}


def _loose(text: str | None) -> str:
    """norm_title without any spaces: `Deploy Target`, `deploy-target` and `DeployTarget` are one field."""
    return norm_title(text or "").replace(" ", "")


def _pair(x: Card, y: Card, sort: str, reason: str) -> Conflict:
    a, b = sorted((x.id, y.id))
    return Conflict(a=a, b=b, sort=sort, project=x.project, reason=reason)


def detect(cards: Iterable[Card], *, threshold: float = 85.0, project: str | None = None,
           limit: int | None = None) -> list[Conflict]:
    """Every conflict among the active cards of `cards` (of `project` only, when given), sorted. With `limit`,
    the scan stops at that many pairs (which ones is fixed by the cards' order): a vault whose titles are mostly
    near-duplicates of each other has pairs in the square of its cards (a generated 10k vault: 342k)."""
    active = [c for c in cards if c.status == "active" and (project is None or c.project == project)]
    found: dict[tuple[str, str], Conflict] = {}
    values = (_pair(x, y, "value", f"facts about {slug} that differ in one value")
              for x, y, slug in value_pairs(active))
    for pair in itertools.chain(_state_pairs(active), values, _duplicate_pairs(active, threshold)):
        found.setdefault((pair.a, pair.b), pair)
        if limit is not None and len(found) >= limit:
            break
    return sorted(found.values(), key=lambda c: (c.project or "", c.a, c.b))


def _state_pairs(active: Sequence[Card]) -> list[Conflict]:
    exact: dict[tuple, list[Card]] = defaultdict(list)
    loose: dict[tuple, list[Card]] = defaultdict(list)
    for c in active:
        key = state_key(c)
        if key is not None:
            exact[key].append(c)
        if c.subject and c.field and c.value:
            loose[(c.project or "", _loose(c.subject), _loose(c.field))].append(c)
    out = []
    for key, group in exact.items():
        for i, x in enumerate(group):
            out += [_pair(x, y, "state", f"same state key {key[1]} / {key[2]}, other value")
                    for y in group[i + 1:] if not same_value(x, y)]
    seen = {(p.a, p.b) for p in out}
    for key, group in loose.items():
        for i, x in enumerate(group):
            for y in group[i + 1:]:
                if _loose(x.value) == _loose(y.value) or tuple(sorted((x.id, y.id))) in seen:
                    continue
                out.append(_pair(x, y, "restated", f"same subject and field ({norm_title(x.subject)} / "
                                                   f"{norm_title(x.field)}) stated differently"))
    return out


def _prefixes(token: str) -> list[str]:
    """The token and its prefixes of 4+ characters: merge._covered counts `postgres` as covered by
    `postgresql` (one starts with the other, both 4+ characters long)."""
    return [token[:n] for n in range(4, len(token))] + [token] if len(token) > 4 else [token]


def _duplicate_pairs(active: Sequence[Card], threshold: float) -> Iterator[Conflict]:
    groups: dict[tuple[str, str], list[Card]] = defaultdict(list)
    for c in active:
        if c.kind != "state":
            groups[(c.project or "", c.kind)].append(c)
    for group in groups.values():
        tokens = [_tokens(c.title) for c in group]
        sizes = [len(norm_title(c.title)) for c in group]
        exact: dict[str, set[int]] = defaultdict(set)  # token -> cards holding it
        longer: dict[str, set[int]] = defaultdict(set)  # token or 4+ prefix -> cards holding a token it starts
        for i, ts in enumerate(tokens):
            for t in ts:
                exact[t].add(i)
                for p in _prefixes(t):
                    longer[p].add(i)

        memo: dict[str, set[int]] = {}

        def holders(t: str) -> set[int]:
            """Cards with a token that covers `t` (equal, or one starts with the other, both 4+ long)."""
            found = memo.get(t)
            if found is None:
                found = set(longer[t])
                for p in _prefixes(t)[:-1]:
                    found |= exact.get(p, set())
                memo[t] = found
            return found

        compared: set[tuple[int, int]] = set()
        for i, ts in enumerate(tokens):
            if not ts:
                continue
            # When no content word is swapped, one title's words are all covered by the other's: from the
            # covered side, the partner is among the cards covering every word of this title.
            sets = sorted((holders(t) for t in ts), key=len)
            x = group[i]
            for j in sets[0].intersection(*sets[1:]):
                pair = (min(i, j), max(i, j))
                if j == i or pair in compared:
                    continue
                compared.add(pair)
                low, high = sorted((sizes[i], sizes[j]))
                if high and 200.0 * low / (low + high) < threshold:
                    continue  # fuzz.ratio and token_sort_ratio are at most 2*min/(sum) of the lengths
                # merge.is_near_duplicate, whose swapped-word test is passed (every word here is covered there)
                if threshold <= 0 or title_score(x.title, group[j].title, threshold):
                    yield _pair(x, group[j], "duplicate", f"near-duplicate {x.kind} titles that should have merged")


def by_card(found: Iterable[Conflict]) -> dict[str, list[str]]:
    """card id -> the ids it conflicts with, sorted."""
    out: dict[str, set[str]] = defaultdict(set)
    for c in found:
        out[c.a].add(c.b)
        out[c.b].add(c.a)
    return {cid: sorted(ids) for cid, ids in out.items()}
