"""reflect: at most K `reflection` cards per project from its recent cards, long-term insights ("the user
rejects dependencies that need a build step"), each citing the cards it rests on. LLM only: with the offline
engine it is skipped and says so.

Per project, the newest active cards within `synopsis.max_input_tokens` are shown to the model with their ids
(fenced and redacted by synopsis_llm.Asker, card text is data), with the project's active reflections it must
not repeat. Each answer item is checked: it must cite at least MIN_CITES shown cards (ids fixed or dropped as
for the synopsis), be in the project's language when that is Chinese, and not be a near-duplicate (merge.py's
rule and distill.merge_threshold) of an existing reflection or of another item; at most K are kept. A broken
answer writes nothing for its project (a warning says why). Under the distill lock, one change set and one
`reflect` journal line per run, kill -9 recovery like a distill batch. A project whose recent cards were
already reflected on (the `basis` in a reflection's source, or in .memvault/reflect.json when the model found
nothing) is skipped without a call, so a rerun with nothing new is a no-op.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memvault.distill import synopsis_llm
from memvault.distill.consolidate import read_cards
from memvault.distill.merge import card_id, is_near_duplicate, union
from memvault.distill.run import crash_point
from memvault.model import Card
from memvault.vault.pages import EntityTable, recover, write_change_set
from memvault.vault.store import Vault

KIND = "reflection"
LOCK_WHAT = "distill or another card change"
STATE = "reflect.json"  # project -> basis of the last run that found nothing to write
MIN_CARDS = 4  # a project with fewer active cards has no pattern to find
MIN_CITES = 2  # an insight resting on one card only restates it
DEFAULT_MAX = 3
TITLE_CHARS, BODY_CHARS = 120, 600
SKIP_REASON = ("reflection needs an LLM and none is configured (distill.engine offline, or no llm.base_url / "
               "MEMVAULT_LLM_BASE_URL)")


@dataclass
class ReflectResult:
    dry_run: bool
    skipped: bool = False
    reason: str | None = None
    written: list[dict[str, Any]] = field(default_factory=list)  # {"project", "id", "title", "cards"}
    unchanged: list[str] = field(default_factory=list)  # projects already reflected on from these cards
    dropped: list[dict[str, Any]] = field(default_factory=list)  # {"project", "reason"}: answer items refused
    warnings: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # projects whose call failed at the endpoint
    usage: dict[str, int] | None = None
    change: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "skipped": self.skipped, "reason": self.reason,
                "engine": None if self.skipped else "llm", "written": self.written, "unchanged": self.unchanged,
                "dropped": self.dropped, "warnings": self.warnings, "failed": self.failed, "usage": self.usage,
                "change": self.change or None}


def reflect(vault: Vault, env: Mapping[str, str], *, now: Callable[[], str], project: str | None = None,
            max_k: int | None = None, dry_run: bool = False) -> ReflectResult:
    """Write up to `max_k` reflections for every project (or `project`) with new recent cards. With the
    offline engine nothing happens and the result says skipped. Raises Busy when the lock is held."""
    from memvault.distill import engine as engines
    from memvault.errors import UsageError

    result = ReflectResult(dry_run=dry_run)
    if engines.resolve(vault.config) != "llm":
        result.skipped, result.reason = True, SKIP_REASON
        return result
    settings = vault.config.section("synopsis")
    k = int(settings.get("max_reflections") or DEFAULT_MAX) if max_k is None else max_k
    if k < 1:
        raise UsageError("--max must be 1 or more")
    asker = synopsis_llm.Asker(vault, env)
    try:
        if dry_run:
            _plan(vault, read_cards(vault, result.warnings), now(), project, k, result, asker, {})
            return result
        with vault.exclusive("distill", LOCK_WHAT):
            recover(vault)
            cards = read_cards(vault, result.warnings)
            at = now()
            seen: dict[str, str] = {}
            fresh = _plan(vault, cards, at, project, k, result, asker, seen)
            if fresh:
                result.change = "f-" + hashlib.sha256("\x1f".join([at, *sorted(fresh)]).encode()).hexdigest()[:12]
                record = {"v": 1, "type": "reflect", "at": at, "change": result.change, "created": sorted(fresh),
                          "projects": sorted({c.project or "" for c in fresh.values()}), "engine": "llm",
                          "model": asker.model, "usage": dict(asker.usage)}
                write_change_set(vault, {c.id: c for c in cards}, fresh, {cid: None for cid in fresh},
                                 EntityTable.load(vault).names, record,
                                 hook=lambda name: crash_point(f"reflect:{name}"))
            if seen:  # projects the model found nothing in: no call again until their cards change
                state = vault.read_state(STATE)
                state.update(seen)
                vault.write_state(STATE, state)
            return result
    finally:
        asker.close()
        result.usage = dict(asker.usage)


def _plan(vault: Vault, cards: Sequence[Card], at: str, project: str | None, k: int, result: ReflectResult,
          asker: synopsis_llm.Asker, seen: dict[str, str]) -> dict[str, Card]:
    """The new reflection cards by id (filling `result`); `seen` gets the basis of projects with none."""
    budget = int(vault.config.section("synopsis").get("max_input_tokens") or 6000)
    threshold = float(vault.config.section("distill").get("merge_threshold", 85))
    done = vault.read_state(STATE)
    taken = {c.id for c in cards}
    fresh: dict[str, Card] = {}
    projects = sorted({c.project for c in cards if c.project and (project is None or c.project == project)})
    for name in projects:
        mine = [c for c in cards if c.status == "active" and c.project == name and c.kind not in (KIND, "synopsis")]
        if len(mine) < MIN_CARDS:
            continue
        existing = [c for c in cards if c.status == "active" and c.project == name and c.kind == KIND]
        shown = synopsis_llm.select(mine, budget, by_priority=False)
        basis = synopsis_llm.basis(shown, asker.model, KIND)
        if done.get(name) == basis or any(c.source.get("basis") == basis for c in existing):
            result.unchanged.append(name)
            continue
        lang = synopsis_llm.language(mine)
        try:
            data = _ask(asker, name, shown, existing, lang, k)
        except synopsis_llm.Fallback as exc:
            result.warnings.append(f"project {name}: no reflections ({exc.reason})")
            if exc.kind == "llm_error":
                result.failed.append(name)
            continue
        by_id = {c.id: c for c in shown}
        made = _read(data, by_id, existing, lang, k, threshold, name, result)
        if made is None:
            continue  # a broken answer: asked again next run
        if not made:
            seen[name] = basis
            continue
        for title, body, ids in made:
            cid = card_id(at, f"reflect\x1f{name}\x1f{title}", taken)
            taken.add(cid)
            entities: tuple[str, ...] = ()
            for i in ids:
                entities = union(entities, by_id[i].entities)
            entities = entities[:5]
            fresh[cid] = Card(id=cid, kind=KIND, title=asker.redact(title), body=asker.redact(body), project=name,
                              entities=entities, created=at, valid_from=at[:10], confidence="inferred",
                              source={"kind": "reflect", "model": asker.model, "cards": ids, "basis": basis})
            result.written.append({"project": name, "id": cid, "title": fresh[cid].title, "cards": ids})
    return fresh


def _ask(asker: synopsis_llm.Asker, name: str, shown: Sequence[Card], existing: Sequence[Card], lang: str,
         k: int) -> Any:
    system, user = synopsis_llm.load_prompt("reflect")
    listing = "\n".join(synopsis_llm.card_line(c) for c in shown)
    others = "\n".join(f"- {synopsis_llm.flat(c.title, 160)}" for c in existing) or "(none)"
    values = {"project": name, "language": synopsis_llm.LANGUAGE[lang], "max": str(k),
              "min_cites": str(MIN_CITES), "fence": synopsis_llm.fence(listing, others), "count": str(len(shown)),
              "cards": listing, "existing": others}
    return asker.ask(synopsis_llm.fill(system, values), synopsis_llm.fill(user, values))


def _read(data: Any, shown: Mapping[str, Card], existing: Sequence[Card], lang: str, k: int, threshold: float,
          name: str, result: ReflectResult) -> list[tuple[str, str, list[str]]] | None:
    """The answer's usable reflections as (title, body, cited ids), None when the answer is not the asked
    shape; every refused item is counted with why."""
    items = data.get("reflections") if isinstance(data, dict) else None
    if not isinstance(items, list):
        result.warnings.append(f'project {name}: no reflections (the answer has no "reflections" list)')
        return None
    out: list[tuple[str, str, list[str]]] = []
    titles = [c.title for c in existing]

    def drop(reason: str) -> None:
        result.dropped.append({"project": name, "reason": reason})

    for item in items:
        if not isinstance(item, dict):
            drop("not an object")
            continue
        raw_title = item.get("title") if isinstance(item.get("title"), str) else ""
        raw_body = item.get("body") if isinstance(item.get("body"), str) else ""
        title = synopsis_llm.clean_text(raw_title, TITLE_CHARS)
        body = synopsis_llm.clean_text(raw_body, BODY_CHARS)
        ids, _unknown = synopsis_llm.cited(item, shown, raw_title + " " + raw_body)
        if not title:
            drop("no title")
        elif len(ids) < MIN_CITES:
            drop(f"cites {len(ids)} of the cards it was shown, needs {MIN_CITES}")
        elif lang == "zh" and synopsis_llm.language([Card(id="", kind=KIND, title=title)]) != "zh":
            drop("not in the project's language (Chinese)")
        elif any(is_near_duplicate(title, other, threshold) for other in titles):
            drop("near-duplicate of an existing reflection")
        elif len(out) >= k:
            drop(f"over --max {k}")
        else:
            out.append((title, body, ids))
            titles.append(title)
    return out
