"""distill: pending episodes -> typed memory cards, in token-sized batches, under the vault's distill lock.

Commit order per batch (a crash loses at most the batch in flight, and a rerun writes the same bytes):
  1. `.memvault/write-intent.json`: the before-image of every file the batch will touch (None = new file);
  2. cards (atomic writes), 3. entity pages, 4. ONE journal line (the commit point), 5. drop the intent.
On start, an intent whose batch has no journal line is rolled back from its before-images (pages.recover).

Which episodes are distilled is read from the journal (truth, synced with git); `.memvault/` only caches it.
Ids, run ids and times depend only on the inputs and the clock, and MEMVAULT_NOW pins the clock, so a crashed
and resumed run leaves a tree byte-identical to an uninterrupted one.

This module holds the run itself (lock, state, batches, propose -> apply per batch). Its parts: batching
(batch plans, related cards), llm_engine (the LLM's proposals), apply (proposals -> one committed change
set), history (rollback after a history edit), run (Summary, Run, the ways a batch stops). `propose()` below is the single
place a batch's proposals come from, where another extraction engine plugs in.
"""

from __future__ import annotations

import calendar
import contextlib
import dataclasses
import hashlib
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any

from memvault.distill import llm_engine
from memvault.distill.apply import apply
from memvault.distill.decide import decide
from memvault.distill.batching import (
    batch_size,
    find_related,
    format_episode,
    format_related,
    plan_batches,
)
from memvault.distill.history import roll_back_history_edits
from memvault.distill.journal import distilled_ids as journal_distilled_ids, last_distill
from memvault.distill.llm_engine import llm_settings, load_prompt
from memvault.distill.proposals import Proposal
from memvault.distill.run import (
    FAILURE_CLASSES,
    BatchFailed,
    Run,
    StopRun,
    Summary,
    Truncated,
)
from memvault.errors import UsageError, VaultFormatError
from memvault.model import Card, Episode
from memvault.vault.config import clock_from_env
from memvault.vault.pages import EntityTable, recover
from memvault.vault.store import Vault

# What callers (cli, tests, bench) import from here; most of it lives in the modules named above.
__all__ = [
    "CACHE", "FAILURE_CLASSES", "STATE", "Run", "Summary", "auto_decision", "batch_size", "clock_from_env",
    "distill", "distilled_ids", "find_related", "format_episode", "format_related", "llm_settings", "load_prompt",
    "pending_episodes", "plan_batches", "propose", "roll_back_history_edits",
]

STATE = "distill.json"
CACHE = "distilled.cache.json"


# ---------------------------------------------------------------- what waits


def distilled_ids(vault: Vault, records: list[dict[str, Any]] | None = None) -> set[str]:
    """Episode ids the journal says are distilled; cached in .memvault/ keyed on the journal files' size."""
    files = vault.journal_files()
    stamp = {vault.rel(p): [p.stat().st_size, p.stat().st_mtime_ns] for p in files}
    if records is None:
        cached = vault.read_state(CACHE)
        if cached.get("files") == stamp and isinstance(cached.get("ids"), list):
            return set(cached["ids"])
        records = vault.journal(problems=[])
    ids = journal_distilled_ids(records)
    try:
        vault.write_state(CACHE, {"files": stamp, "ids": sorted(ids)})
    except OSError:
        pass  # a cache we cannot write only costs speed
    return ids


def _settings(vault: Vault) -> Mapping[str, Any]:
    """The distill: section of memvault.yaml."""
    return vault.config.section("distill")


def pending_episodes(vault: Vault, project: str | None = None,
                     before: dict[str, Episode] | None = None) -> list[Episode]:
    """Live episodes the journal does not list as distilled, batched per project in time order. With `before`,
    it also maps each of them to the turn before it in its session, distilled or not: a batch's first turn
    answers a question asked there ("What did you do there?" - "We played Catan")."""
    done = distilled_ids(vault)
    eps = [e for e in vault.episodes(problems=[]) if project is None or e.project == project]
    pending = [e for e in eps if e.id not in done]
    pending.sort(key=_order)
    if before is not None and pending:
        sessions = {(e.project, e.session) for e in pending}
        last: dict[tuple[str, str], Episode] = {}
        for e in sorted((e for e in eps if (e.project, e.session) in sessions), key=_order):
            prev = last.get((e.project, e.session))
            if prev is not None and e.id not in done:
                before[e.id] = prev
            last[(e.project, e.session)] = e
    return pending


def _order(e: Episode) -> tuple:
    return e.project, e.at, e.session, e.turn, e.id


# ---------------------------------------------------------------- the run


def distill(
    vault: Vault,
    env: Mapping[str, str],
    *,
    dry_run: bool = False,
    max_calls: int | None = None,
    max_episodes: int | None = None,
    project: str | None = None,
    now: Callable[[], str] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    sleep: Callable[[float], None] | None = None,
    upgrade: bool = False,
    engine: str | None = None,
) -> Summary:
    """Distil pending episodes with the configured engine (distill.engine: an LLM, or the offline extractor
    when no endpoint is set up; `engine` overrides it, as `distill --engine` does); with `upgrade`, send the episodes only the offline engine has read to the LLM.
    Never raises for a failing batch: failures are counted by class in the summary (the caller turns them into
    exit code 5). Raises Busy when another distill holds the lock."""
    from memvault.redact import engine as redact
    from memvault.distill import engine as engines
    from memvault.distill.llm import Client

    now = now or clock_from_env(env)
    engine = engines.resolve(vault.config, engine)
    if upgrade and engine != "llm":
        raise UsageError("--upgrade sends turns the offline engine read to an LLM: configure an endpoint "
                         "(llm.base_url or MEMVAULT_LLM_BASE_URL) and distill.engine auto or llm")
    cfg = _settings(vault)
    if max_calls is not None and max_calls < 0 or max_episodes is not None and max_episodes < 0:
        raise UsageError("--max-calls and --max-episodes must be 0 or more")
    with vault.exclusive("distill", "distill"):
        summary = Summary(dry_run=dry_run, engine=engine)
        if not dry_run:
            summary.recovered = recover(vault)
        start = now()
        summary.run = f"r-{start.replace('-', '').replace(':', '')}-" + hashlib.sha256(
            f"{start}\x1f{socket.gethostname()}".encode()).hexdigest()[:4]
        if not dry_run:
            roll_back_history_edits(vault, summary, now)
        before: dict[str, Episode] = {}  # a pending turn -> the turn before it in its session
        pending = _pending(vault, project, upgrade, before)
        summary.pending_before = len(pending)
        limit = int(cfg.get("max_episodes") or 0) if max_episodes is None else max_episodes
        todo = pending[:limit] if limit or max_episodes == 0 else pending
        if not dry_run:
            state = vault.read_state(STATE)
            state["last_attempt"] = start  # before any call: --auto's min_gap counts attempts, not successes
            vault.write_state(STATE, state)
        if not todo:
            summary.pending_after = len(pending)
            return summary
        settings = llm_settings(vault, env)
        from memvault.distill import review

        reviewing = engine == "llm" and review.protocol(cfg) == "review"
        system, user_tpl = load_prompt("review" if reviewing else "distill")
        problems: list[VaultFormatError] = []
        all_cards = {c.id: c for c in vault.cards(problems=problems)}
        client_kw = {"sleep": sleep} if sleep is not None else {}
        run = Run(
            vault=vault, env=env, now=now, summary=summary,
            client=Client(settings, **client_kw) if engine == "llm" else contextlib.nullcontext(),
            max_calls=max_calls, dry_run=dry_run, cards=all_cards, entities=EntityTable.load(vault),
            system=system.replace("{{kinds}}", ", ".join(vault.config.kinds)), user_tpl=user_tpl,
            kinds=vault.config.kinds,
            rules=redact.compile_rules(list(vault.config.section("redact").get("deny") or [])),
            settings=cfg, model=settings.model if engine == "llm" else "offline", engine=engine, upgrade=upgrade,
            protocol="review" if reviewing else "write", before=before,
        )
        size = batch_size(settings.max_output_tokens, int(cfg.get("tokens_per_episode", 320)))
        max_chars = int(cfg.get("max_episode_chars", 4000))
        from memvault.distill.llm import estimate_tokens

        overhead = estimate_tokens(run.system) + estimate_tokens(user_tpl) + 60 * int(cfg.get("related_cards", 12))
        budget = max(1, int(cfg.get("max_input_tokens", 12000)) - overhead)
        batches = plan_batches(todo, size=size, input_budget=budget,
                               cost=lambda e: estimate_tokens(format_episode(0, e, max_chars)))
        if engine == "offline" or reviewing:  # one project a batch, cut before each state change
            from memvault.distill import offline

            # A review reads a few turns a call (distill.review_episodes), never more than a written batch.
            batches = offline.plan(todo, min(size, review.batch_episodes(cfg))) if reviewing else offline.plan(todo)
        done = 0
        todo_batches = batches[:1] if dry_run else batches
        try:
            with run.client:
                for n, batch in enumerate(todo_batches):
                    try:
                        _process(run, batch)
                    except BatchFailed as failure:
                        _record_failure(run, failure, batch)
                        if failure.kind == "llm_error":
                            summary.stopped = "llm_error"
                            # The endpoint failed: the batches after this one are not sent; they stay pending.
                            summary.untried_episodes = [e.id for b in todo_batches[n + 1:] for e in b]
                            break
                    done += len(batch)
                    if on_progress:
                        on_progress(done, len(todo))
        except StopRun:
            summary.stopped = "max_calls"
        if dry_run:
            summary.pending_after = len(pending)
        else:
            summary.pending_after = len(_pending(vault, project, upgrade))
            state = vault.read_state(STATE)
            state["last_run"] = {"at": start, "run": summary.run, "failed": summary.failed,
                                 "episodes": summary.episodes_distilled}
            if summary.episodes_distilled:
                state["last_success"] = start
            vault.write_state(STATE, state)
        return summary


def _record_failure(run: Run, failure: BatchFailed, batch: list[Episode]) -> None:
    """A failed batch is counted, named in the summary and journaled as `distill_failed` (docs/distill.md: every
    failed batch, the endpoint's failures too); its episodes are not marked distilled (journal.distilled_ids
    reads only `distill` lines), so the next run sends them again."""
    s = run.summary
    s.failures[failure.kind] += 1
    s.errors.append(failure.message)
    ids = failure.episodes or [e.id for e in batch]
    s.failed_episodes.extend(i for i in ids if i not in s.failed_episodes)
    if run.dry_run:
        return
    # The message names fields and episode ids, never the turns' or the reply's text.
    run.vault.append_journal([{
        "v": 1, "type": "distill_failed", "at": run.now(), "run": s.run, "episodes": ids, "engine": run.engine,
        "model": run.model, "failure": failure.kind, "reason": failure.message,
    }])


def _pending(vault: Vault, project: str | None, upgrade: bool,
             before: dict[str, Episode] | None = None) -> list[Episode]:
    """What this run distils: pending episodes, or with --upgrade those only the offline engine has read."""
    if upgrade:
        from memvault.distill.offline import upgrade as upgrading

        return upgrading.pending(vault, project)
    return pending_episodes(vault, project, before)


# ---------------------------------------------------------------- one batch


def propose(run: Run, batch: list[Episode], related: list[Card]) -> tuple[list[Proposal], dict[str, int]]:
    """Where a batch's proposals come from: the one place an extraction engine plugs in.

    An engine returns (proposals, usage), usage being the batch's {"calls", "prompt_tokens",
    "completion_tokens"} for its journal line; it may raise Truncated (the run splits the batch), BatchFailed
    or StopRun. Today the only engine is the LLM (llm_engine). Whatever an engine proposes is redacted here.
    """
    proposals, usage = llm_engine.propose(run, batch, related)
    return [_redact_proposal(p, run.rules) for p in proposals], usage


def _redact_proposal(p: Proposal, rules, **changes: Any) -> Proposal:
    """What the model writes is redacted too: a model may echo or invent a secret, and cards go to disk."""
    from memvault.redact import engine as redact

    def clean(text):
        return redact.redact(text, rules).text if text else text

    return dataclasses.replace(
        p, title=clean(p.title), body=clean(p.body), entities=tuple(clean(e) for e in p.entities),
        subject=clean(p.subject), field=clean(p.field), value=clean(p.value), tags=tuple(clean(t) for t in p.tags),
        old=clean(p.old), quote=clean(p.quote), **changes,
    )


def _process(run: Run, batch: list[Episode], halved: bool = False) -> None:
    """Distil one batch; split it on truncation or a timeout, and an empty answer the offline engine disagrees
    with (suspect.py; `halved`: this batch is such a half already). Raises BatchFailed or StopRun."""
    if run.engine == "offline":
        related, proposals = _offline(run, batch)
        apply(run, batch, related, proposals, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        return
    reviewing = run.protocol == "review"
    try:
        if reviewing:  # the model keeps, corrects and completes the offline engine's drafts (distill/review.py)
            from memvault.distill import review

            related, proposals, usage = review.propose(run, batch, _offline)
        else:
            related = find_related(batch, list(run.cards.values()), run.entities.names,
                                   int(run.settings.get("related_cards", 12)))
            proposals, usage = propose(run, batch, related)
    except Truncated as cut:
        if len(batch) > 1:
            half = len(batch) // 2
            _process(run, batch[:half], halved)
            _process(run, batch[half:], halved)
            return
        raise BatchFailed(cut.kind, cut.message, [e.id for e in batch]) from None
    # The model proposed facts; code decides what they do to the existing cards (distill/decide.py).
    if not reviewing:
        proposals, related = decide(proposals, related, run.cards.values(), batch, run.summary.repairs)
    if run.upgrade:  # the model's cards supersede the extracted cards of the same turns
        from memvault.distill.offline import upgrade as upgrading

        proposals, related = upgrading.link(proposals, related, batch, run.cards.values())
    elif not any(p.action != "noop" for p in proposals):
        from memvault.distill import suspect

        if suspect.handle_empty(run, batch, usage, halved, lambda b, h: _process(run, b, h), _offline, apply,
                                reviewed=reviewing):
            return
    apply(run, batch, related, proposals, usage)


def _offline(run: Run, batch: list[Episode]) -> tuple[list[Card], list[Proposal]]:
    """The offline engine's proposals for a batch, through the same validation and redaction as a model's."""
    from memvault.distill import offline
    from memvault.distill.proposals import InvalidOutput, validate_output

    data, related = offline.propose(batch, run.cards, run.before.get(batch[0].id))
    run.batch_nothing = offline.nothing(batch, data)
    for reason, n in run.batch_nothing.items():
        run.summary.nothing[reason] = run.summary.nothing.get(reason, 0) + n
    try:
        proposals = validate_output(data, n_episodes=len(batch), n_related=len(related), kinds=run.kinds)
    except InvalidOutput as exc:
        raise BatchFailed("invalid_output", f"batch of {len(batch)} episodes from {batch[0].id}: "
                          f"offline engine: {exc}") from None
    return related, [_redact_proposal(p, run.rules, extracted=True) for p in proposals]


# ---------------------------------------------------------------- --auto and stats


def auto_decision(vault: Vault, env: Mapping[str, str], *, now: Callable[[], str] | None = None,
                  local_minute: int | None = None, project: str | None = None, upgrade: bool = False):
    """Apply the cron rules of memvault.yaml (auto:) to the vault's state. Arithmetic only, no model call."""
    from memvault.distill import auto

    now = now or clock_from_env(env)
    stamp = now()
    if local_minute is None:
        # Quiet hours are wall-clock time where the machine is (TZ), taken from the same pinnable clock.
        lt = time.localtime(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
        local_minute = lt.tm_hour * 60 + lt.tm_min
    state = vault.read_state(STATE)
    last_success = state.get("last_success") or last_distill(vault.journal(problems=[]))
    pending = pending_episodes(vault, project)
    if upgrade:  # auto.upgrade: turns only the offline engine read wait for the model too
        pending = pending + _pending(vault, project, True)
    return auto.decide(
        vault.config.section("auto"), now_utc=stamp, local_minute=local_minute, pending=len(pending),
        last_attempt=state.get("last_attempt"), last_success=last_success,
        oldest_pending=min((e.at for e in pending), default=None),
    )
