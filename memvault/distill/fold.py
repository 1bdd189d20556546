"""fold: old, small cards about the same entity and kind (one project) fold into one card that lists and
supersedes them (issue 14 item 3: the compression a growing vault needs). Pure and deterministic: no LLM, no I/O.

The rule (settings under `consolidate:` in memvault.yaml):
- a card can fold when it is active, of a kind in `fold_kinds`, names at least one entity, holds no state key
  (subject + field: those are current values, the conflict detector reads them), is not itself a folded card,
  is older than `fold_after_days` (valid_from, else created, against the run's clock) and small (a body of at most
  `fold_max_chars` characters);
- each such card goes to one group (project, kind, entity): of its entities, the one most of the foldable cards
  of its project and kind name (ties: the first it names);
- a group of at least `fold_min_cards` cards folds, oldest first, in near-equal chunks of at most
  `fold_max_cards` (a chunk smaller than `fold_min_cards` stays as it is).
A folded card has the kind of its cards, lists each one on a line (its title, with its body when short, and its
id), names the union of their entities, episodes and tags (plus the tag `folded`), holds from the earliest of
them (`valid_from`; `source.from` / `source.to` give the span) and supersedes them; they stay on disk as
superseded (their `valid_to` unchanged: a folded fact is still true, it is only listed elsewhere).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memvault.distill.llm import estimate_tokens
from memvault.distill.merge import card_id
from memvault.model import FOLD_SOURCE, Card, is_folded, union
from memvault.vault.config import DEFAULTS as CONFIG_DEFAULTS

SOURCE_KIND = FOLD_SOURCE
TAG = "folded"
DEFAULTS = CONFIG_DEFAULTS["consolidate"]
LINE_CHARS = 120  # a folded line: the title (cut at this many characters) …
LINE_TOKENS = 30  # … and the body while the two stay this short (estimated tokens: the same for zh and en)
TITLE = {"en": "{name}: {n} {kind} cards, {first} to {last}", "zh": "{name}：{n} 条{kind}（{first} 至 {last}）"}
KIND_ZH = {"fact": "事实", "event": "事件", "decision": "决定", "preference": "偏好", "rule": "规则",
           "question": "问题", "thread": "线索", "reflection": "反思"}
_CJK = re.compile(r"[\u3400-\u9fff]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class FoldRules:
    after_days: int = 90
    min_cards: int = 4
    max_cards: int = 8
    max_chars: int = 280
    kinds: tuple[str, ...] = tuple(DEFAULTS["fold_kinds"])

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> "FoldRules":
        get = {**DEFAULTS, **dict(section or {})}
        return cls(after_days=max(0, int(get["fold_after_days"])), min_cards=max(2, int(get["fold_min_cards"])),
                   max_cards=max(2, int(get["fold_max_cards"])), max_chars=max(0, int(get["fold_max_chars"])),
                   kinds=tuple(str(k) for k in get["fold_kinds"] or ()))


@dataclass
class FoldPlan:
    """New folded cards and the originals they retire, each by id."""

    folds: dict[str, Card] = field(default_factory=dict)
    retired: dict[str, Card] = field(default_factory=dict)  # new versions of the originals (superseded)
    before: dict[str, Card] = field(default_factory=dict)  # … and their versions before

    def summary(self) -> list[dict[str, Any]]:
        return [{"id": c.id, "project": c.project, "kind": c.kind, "entity": c.entities[0] if c.entities else None,
                 "folds": list(c.supersedes), "from": c.source.get("from"), "to": c.source.get("to")}
                for c in self.folds.values()]


def _day(card: Card) -> str:
    return (card.valid_from or card.created or "")[:10]


def cutoff(at: str, rules: FoldRules) -> str:
    """The day before which a card is old enough to fold."""
    return (dt.date.fromisoformat(at[:10]) - dt.timedelta(days=rules.after_days)).isoformat()


def foldable(card: Card, before_day: str, rules: FoldRules) -> bool:
    return (card.status == "active" and card.kind in rules.kinds and bool(card.entities) and not is_folded(card)
            and not (card.subject and card.field) and bool(_day(card)) and _day(card) < before_day
            and len((card.body or "").strip()) <= rules.max_chars)


def groups(cards: Iterable[Card], at: str, rules: FoldRules,
           project: str | None = None) -> list[tuple[tuple[str, str, str], list[Card]]]:
    """((project, kind, entity), cards oldest first) of every chunk that folds, in a stable order."""
    before_day = cutoff(at, rules)
    cand = [c for c in cards if foldable(c, before_day, rules) and (project is None or c.project == project)]
    count: dict[tuple[str, str, str], int] = {}
    for c in cand:
        for slug in dict.fromkeys(c.entities):
            key = (c.project or "", c.kind, slug)
            count[key] = count.get(key, 0) + 1
    by_key: dict[tuple[str, str, str], list[Card]] = {}
    for c in cand:
        slugs = list(dict.fromkeys(c.entities))
        best = max(slugs, key=lambda s: (count[(c.project or "", c.kind, s)], -slugs.index(s)))
        by_key.setdefault((c.project or "", c.kind, best), []).append(c)
    out = []
    for key in sorted(by_key):
        mine = sorted(by_key[key], key=lambda c: (_day(c), c.created, c.id))
        if len(mine) < rules.min_cards:
            continue
        n_chunks = -(-len(mine) // rules.max_cards)
        size, extra = divmod(len(mine), n_chunks)
        start = 0
        for i in range(n_chunks):
            end = start + size + (1 if i < extra else 0)
            if end - start >= rules.min_cards:
                out.append((key, mine[start:end]))
            start = end
    return out


def _flat(text: str, cap: int) -> str:
    flat = _SPACE.sub(" ", text or "").strip()
    return flat if len(flat) <= cap else flat[: cap - 1].rstrip() + "…"


def _bare(text: str) -> str:
    return text.strip(" .。!！?？…").casefold()


def line(card: Card) -> str:
    """`- YYYY-MM-DD title: body [id]`, the body only while title and body stay short (LINE_TOKENS)."""
    title = _flat(card.title, LINE_CHARS)
    body = _flat(card.body, LINE_CHARS)
    sep = "：" if _CJK.search(card.title) else ": "
    text = title
    if body and _bare(body) != _bare(title) and estimate_tokens(title + sep + body) <= LINE_TOKENS:
        text = title + sep + body
    return f"- {_day(card)} {text} [{card.id}]"


def fold_card(key: tuple[str, str, str], members: Sequence[Card], at: str, name: str, taken: set[str]) -> Card:
    """The folded card of one chunk (its id from the run's clock and its members, so a rerun after a crash
    writes the same id)."""
    project, kind, slug = key
    lang = "zh" if 2 * sum(bool(_CJK.search(c.title)) for c in members) > len(members) else "en"
    first, last = _day(members[0]), max(_day(c) for c in members)
    title = TITLE[lang].format(name=name, n=len(members), kind=KIND_ZH.get(kind, kind) if lang == "zh" else kind,
                               first=first, last=last)
    seed = "fold\x1f" + "\x1f".join([project, kind, slug, *sorted(c.id for c in members)])
    cid = card_id(at, seed, taken)
    entities: tuple[str, ...] = (slug,)
    episodes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    for c in members:
        entities = union(entities, c.entities)
        episodes = union(episodes, c.episodes)
        tags = union(tags, c.tags)
    confidences = {c.confidence for c in members}
    return Card(id=cid, kind=kind, title=title, body="\n".join(line(c) for c in members), project=project or None,
                entities=entities, created=at, valid_from=first,
                confidence=confidences.pop() if len(confidences) == 1 else "inferred",
                source={"kind": SOURCE_KIND, "cards": len(members), "from": first, "to": last,
                        "episodes": list(episodes)},
                supersedes=tuple(c.id for c in members), tags=union(tags, (TAG,)))


def plan(cards: Sequence[Card], at: str, rules: FoldRules, names: Mapping[str, str],
         project: str | None = None) -> FoldPlan:
    """Every fold the rule makes now, to a fixed point (pure: the same cards and clock give the same plan).

    Trigger: a fold retires its cards, which changes the counts that put each remaining card in a group; a
    card that went to a group too small to fold may now belong to one that folds. Why: the docs promise that a
    rerun of consolidate does nothing. Outcome: the rule is applied again to the cards as they are after the
    folds, until it folds nothing more (each round retires cards, so it ends); one change set holds them all."""
    out = FoldPlan()
    taken = {c.id for c in cards}
    current = list(cards)
    while True:
        found = groups(current, at, rules, project)
        if not found:
            return out
        step = FoldPlan()
        for key, members in found:
            card = fold_card(key, members, at, names.get(key[2]) or key[2], taken)
            taken.add(card.id)
            step.folds[card.id] = card
            for c in members:
                step.before[c.id] = c
                step.retired[c.id] = dataclasses.replace(c, status="superseded",
                                                         superseded_by=union(c.superseded_by, (card.id,)))
        current = apply(current, step)
        out.folds.update(step.folds)
        out.retired.update(step.retired)
        out.before.update(step.before)


def apply(cards: Sequence[Card], fold_plan: FoldPlan) -> list[Card]:
    """The cards as they are once the plan is written."""
    return [fold_plan.retired.get(c.id, c) for c in cards] + list(fold_plan.folds.values())


def journal(record: dict[str, Any], fold_plan: FoldPlan) -> None:
    """The fold's part of a consolidate journal line: `folded`, each folded card and the ids it lists (enough to
    undo it: remove the folded card, make the listed ones active again). No before-images: a first fold may
    retire thousands of cards, and each differs from its before-image only in status and superseded_by."""
    if fold_plan.folds:
        record["folded"] = [{"id": c.id, "cards": list(c.supersedes)} for c in fold_plan.folds.values()]
