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
title's tokens are covered by the other's (equal, or one a 4+ character prefix of the other, as merge._covered
says), so the covered title's rarest token is covered in the other title. Each card is compared only with the
cards covering its rarest token, and pairs whose lengths alone rule out the score are skipped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.distill.merge import _tokens, is_near_duplicate, norm_title, same_value, state_key
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


def detect(cards: Iterable[Card], *, threshold: float = 85.0, project: str | None = None) -> list[Conflict]:
    """Every conflict among the active cards of `cards` (of `project` only, when given), sorted."""
    active = [c for c in cards if c.status == "active" and (project is None or c.project == project)]
    found: dict[tuple[str, str], Conflict] = {}
    values = [_pair(x, y, "value", f"facts about {slug} that differ in one value")
              for x, y, slug in value_pairs(active)]
    for pair in [*_state_pairs(active), *values, *_duplicate_pairs(active, threshold)]:
        found.setdefault((pair.a, pair.b), pair)
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


def _duplicate_pairs(active: Sequence[Card], threshold: float) -> list[Conflict]:
    groups: dict[tuple[str, str], list[Card]] = defaultdict(list)
    for c in active:
        if c.kind != "state":
            groups[(c.project or "", c.kind)].append(c)
    out = []
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

        def holders(t: str) -> set[int]:
            """Cards with a token that covers `t` (equal, or one starts with the other, both 4+ long)."""
            found = set(longer[t])
            for p in _prefixes(t)[:-1]:
                found |= exact.get(p, set())
            return found

        compared: set[tuple[int, int]] = set()
        for i, ts in enumerate(tokens):
            if not ts:
                continue
            # When no content word is swapped, one title's words are all covered by the other's; looking up
            # the rarest word of each title finds the pair from the covered side.
            rarest = min(ts, key=lambda t: (len(longer[t]) + len(exact.get(t[:4], ())), t))
            x = group[i]
            for j in holders(rarest):
                pair = (min(i, j), max(i, j))
                if j == i or pair in compared:
                    continue
                compared.add(pair)
                low, high = sorted((sizes[i], sizes[j]))
                if high and 200.0 * low / (low + high) < threshold:
                    continue  # fuzz.ratio and token_sort_ratio are at most 2*min/(sum) of the lengths
                y = group[j]
                if is_near_duplicate(x.title, y.title, threshold):
                    out.append(_pair(x, y, "duplicate", f"near-duplicate {x.kind} titles that should have merged"))
    return out


def by_card(found: Iterable[Conflict]) -> dict[str, list[str]]:
    """card id -> the ids it conflicts with, sorted."""
    out: dict[str, set[str]] = defaultdict(set)
    for c in found:
        out[c.a].add(c.b)
        out[c.b].add(c.a)
    return {cid: sorted(ids) for cid, ids in out.items()}
