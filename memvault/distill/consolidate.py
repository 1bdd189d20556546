"""consolidate: one offline `synopsis` card per project, "where things stand", built deterministically from the
project's active cards (no LLM): its latest decisions, current state, open threads and rules, each line citing
its card id.

Under the distill lock, as one change set per run (vault.pages.write_change_set: the new synopsis supersedes
the project's previous one there, by the rule in memvault.vault.synopsis; one `consolidate` journal line; a
kill -9 is undone by the next card change). A project whose synopsis would say exactly what its latest active
synopsis says is skipped, so a rerun with no new cards is a no-op.

With the LLM engine (`--engine`, else distill.engine) the model writes the lines (distill/synopsis_llm.py); a
project whose latest synopsis the model wrote from the same cards (`source.basis`) is skipped without a call,
and an unusable answer falls back to the offline synopsis of that project, with a warning.

First, in the same change set, old small cards fold (memvault.distill.fold: the rule, the folded card); the
synopsis is then built from the cards as they are after the fold. `fold=False` (--no-fold, or
`consolidate.fold: false`) skips the fold, `synopsis=False` (--fold-only) the synopsis.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memvault.distill import fold as folding
from memvault.distill import synopsis_llm
from memvault.distill.merge import card_id
from memvault.distill.run import crash_point
from memvault.model import Card
from memvault.vault.pages import EntityTable, recover, write_change_set
from memvault.vault.store import Vault

LOCK_WHAT = "distill or another card change"
KIND = "synopsis"
PER_SECTION = 8  # newest lines of each section: a synopsis is pinned in every context pack, it must stay small
# (section, kinds it lists); a card kind not named here (fact, event, preference, reflection) is left to search.
SECTIONS = (("decisions", ("decision",)), ("state", ("state",)), ("open", ("thread", "question")),
            ("rules", ("rule",)))
HEADINGS = {"en": {"decisions": "Decisions", "state": "Current state", "open": "Open threads", "rules": "Rules"},
            "zh": {"decisions": "决定", "state": "当前状态", "open": "未决事项", "rules": "规则"}}
TITLE = {"en": "Where {project} stands ({day})", "zh": "{project} 现状（{day}）"}
_CJK = re.compile(r"[\u3400-\u9fff]")
_SPACE = re.compile(r"\s+")


@dataclass
class ConsolidateResult:
    dry_run: bool
    written: list[dict[str, Any]] = field(default_factory=list)  # {"project", "id", "superseded", "lines"}
    unchanged: list[str] = field(default_factory=list)  # projects whose synopsis already says this
    change: str = ""
    engine: str = "offline"  # offline | llm (--engine, else distill.engine)
    warnings: list[str] = field(default_factory=list)  # a project whose model answer fell back to offline
    usage: dict[str, int] | None = None  # model calls and tokens (llm engine)
    folded: list[dict[str, Any]] = field(default_factory=list)  # FoldPlan.summary(): the folded cards

    def to_json(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "engine": self.engine, "written": self.written,
                "unchanged": self.unchanged, "folded": self.folded, "change": self.change or None,
                "warnings": self.warnings, "usage": self.usage}


def read_cards(vault: Vault, warnings: list[str]) -> list[Card]:
    """Every readable card; each unreadable one (broken YAML…) is named in `warnings` and left as it is."""
    problems: list = []
    cards = vault.cards(problems=problems)
    warnings.extend(f"{p}: left out (fix the file, then run again)" for p in problems)
    return cards


def _day(card: Card) -> str:
    return (card.valid_from or card.created or "")[:10]


def _flat(text: str, cap: int = 120) -> str:
    flat = _SPACE.sub(" ", text or "").strip()
    return flat if len(flat) <= cap else flat[: cap - 1].rstrip() + "…"


def _line(card: Card) -> str:
    if card.kind == "state" and card.subject and card.field and card.value:
        text = f"{card.subject} {card.field}: {card.value}"
    else:
        text = card.title
    return f"- {_flat(text)} [{card.id}]"


def synopsis_text(project: str, cards: Iterable[Card], day: str) -> tuple[str, str, int] | None:
    """(title, body, lines) of the project's synopsis from its active cards, or None when none is listable.
    Pure and deterministic: the same cards give the same text."""
    active = [c for c in cards if c.status == "active" and (c.project or "") == project and c.kind != KIND]
    lang = "zh" if 2 * sum(bool(_CJK.search(c.title)) for c in active) > len(active) else "en"
    parts, count = [], 0
    for section, kinds in SECTIONS:
        mine = sorted((c for c in active if c.kind in kinds), key=lambda c: (_day(c), c.created, c.id), reverse=True)
        if not mine:
            continue
        lines = [_line(c) for c in mine[:PER_SECTION]]
        if len(mine) > PER_SECTION:
            lines.append(f"- … {len(mine) - PER_SECTION} more" if lang == "en" else f"- … 另有 {len(mine) - PER_SECTION} 条")
        parts.append(f"## {HEADINGS[lang][section]}\n" + "\n".join(lines))
        count += min(len(mine), PER_SECTION)
    if not parts:
        return None
    return TITLE[lang].format(project=project, day=day), "\n\n".join(parts), count


def consolidate(vault: Vault, *, now: Callable[[], str], project: str | None = None, dry_run: bool = False,
                engine: str = "offline", env: Mapping[str, str] | None = None, fold: bool | None = None,
                synopsis: bool = True) -> ConsolidateResult:
    """Fold old small cards (unless `fold` is False; None: the `consolidate.fold` setting), then write the
    synopsis of every project (or of `project`) whose cards changed since its latest synopsis.
    `engine` is "offline" or "llm" (engine.resolve); a dry run with the LLM asks the model but writes nothing."""
    result = ConsolidateResult(dry_run=dry_run, engine=engine)
    asker = synopsis_llm.Asker(vault, env or {}) if engine == "llm" and synopsis else None
    try:
        return _consolidate(vault, now, project, dry_run, result, asker, fold, synopsis)
    finally:
        if asker is not None:
            asker.close()
            result.usage = dict(asker.usage)


def _consolidate(vault: Vault, now: Callable[[], str], project: str | None, dry_run: bool,
                 result: ConsolidateResult, asker: synopsis_llm.Asker | None, fold: bool | None,
                 synopsis: bool) -> ConsolidateResult:
    section = vault.config.section("consolidate")
    rules = folding.FoldRules.from_config(section)
    do_fold = bool(section.get("fold", True)) if fold is None else fold
    if dry_run:
        cards = read_cards(vault, result.warnings)
        at = now()
        folds = _folds(vault, cards, at, project, rules, do_fold, result)
        if synopsis:
            _plan(vault, folding.apply(cards, folds), at, project, result, asker)
        return result
    with vault.exclusive("distill", LOCK_WHAT):
        recover(vault)
        cards = read_cards(vault, result.warnings)
        at = now()
        folds = _folds(vault, cards, at, project, rules, do_fold, result)
        fresh = _plan(vault, folding.apply(cards, folds), at, project, result, asker) if synopsis else {}
        if not fresh and not folds.folds:
            return result
        all_cards = {c.id: c for c in cards}
        made = sorted([*fresh, *folds.folds])
        change = "s-" + hashlib.sha256("\x1f".join([at, *made]).encode()).hexdigest()[:12]
        record = {"v": 1, "type": "consolidate", "at": at, "change": change, "created": made,
                  "projects": sorted({c.project or "" for c in [*fresh.values(), *folds.folds.values()]})}
        if asker is not None:
            record.update({"engine": "llm", "model": asker.model, "usage": dict(asker.usage)})
        folding.journal(record, folds)
        working = {**folds.retired, **folds.folds, **fresh}
        # Only the new cards have a before (None): the originals' before-images would make the journal line as
        # big as the cards (folding.journal says how a fold is undone).
        before: dict[str, Card | None] = {cid: None for cid in [*fresh, *folds.folds]}
        written = write_change_set(vault, all_cards, working, before, EntityTable.load(vault).names,
                                   record, hook=lambda name: crash_point(f"consolidate:{name}"))
        for item in result.written:
            item["superseded"] = sorted(written[item["id"]].supersedes)
        result.change = change
        return result


def _folds(vault: Vault, cards: Sequence[Card], at: str, project: str | None, rules: folding.FoldRules,
           enabled: bool, result: ConsolidateResult) -> folding.FoldPlan:
    if not enabled:
        return folding.FoldPlan()
    made = folding.plan(cards, at, rules, EntityTable.load(vault).names, project)
    result.folded = made.summary()
    return made


def _plan(vault: Vault, cards: Sequence[Card], at: str, project: str | None,
          result: ConsolidateResult, asker: synopsis_llm.Asker | None = None) -> dict[str, Card]:
    """The new synopsis cards by id (filling `result`), skipping projects whose latest synopsis says the same."""
    from memvault.vault.synopsis import latest_key

    projects = sorted({c.project for c in cards if c.project and (project is None or c.project == project)})
    taken = {c.id for c in cards}
    fresh: dict[str, Card] = {}
    budget = int(vault.config.section("synopsis").get("max_input_tokens") or 6000)
    for name in projects:
        current = [c for c in cards if c.kind == KIND and c.status == "active" and c.project == name]
        latest = max(current, key=lambda c: (latest_key(c), c.id), default=None)
        by_model = _by_model(asker, name, cards, at, latest, budget, result) if asker is not None else None
        if by_model == "unchanged":
            result.unchanged.append(name)
            continue
        made = by_model or synopsis_text(name, cards, at[:10])
        if made is None:
            continue
        title, body, count = made[:3]
        if latest is not None and latest.body.strip() == body.strip():
            result.unchanged.append(name)
            continue
        source = made[3] if by_model else {"kind": "consolidate", "cards": count}
        seed = f"consolidate\x1f{name}\x1f{hashlib.sha256(body.encode()).hexdigest()}"
        cid = card_id(at, seed, taken)
        taken.add(cid)
        fresh[cid] = Card(id=cid, kind=KIND, title=title, body=body, project=name, created=at, valid_from=at[:10],
                          confidence="inferred", source=source)
        result.written.append({"project": name, "id": cid, "superseded": [latest.id] if latest else [],
                               "lines": count, "engine": "llm" if by_model else "offline"})
    return fresh


def _by_model(asker: synopsis_llm.Asker, name: str, cards: Sequence[Card], at: str, latest: Card | None,
              budget: int, result: ConsolidateResult) -> tuple[str, str, int, dict[str, Any]] | str | None:
    """(title, body, lines, source) of the model's synopsis of `name`; "unchanged" when the latest synopsis
    was written by a model from the same cards (no call); None to write the offline one (a warning says why)."""
    mine = [c for c in cards
            if c.status == "active" and (c.project or "") == name and c.kind not in (KIND, "reflection")]
    if not mine:
        return None
    shown = synopsis_llm.select(mine, budget, by_priority=True)
    basis = synopsis_llm.basis(shown, asker.model, KIND)
    if latest is not None and latest.source.get("basis") == basis:
        return "unchanged"
    lang = synopsis_llm.language(mine)
    try:
        body, lines, used = synopsis_llm.write(asker, name, shown, lang, HEADINGS[lang])
    except synopsis_llm.Fallback as exc:
        # Trigger: endpoint error, cut-off or hostile answer. Why: a synopsis is pinned in every pack, a
        # half-trusted one is worse than none. Outcome: the offline synopsis of this project, and a warning.
        result.warnings.append(f"project {name}: the model's synopsis was not usable ({exc.reason}); "
                               "wrote the offline synopsis instead")
        return None
    source = {"kind": "consolidate", "engine": "llm", "model": asker.model, "cards": used, "basis": basis}
    return TITLE[lang].format(project=name, day=at[:10]), body, lines, source
