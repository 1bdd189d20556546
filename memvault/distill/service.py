"""distill: pending episodes -> typed memory cards, in token-sized batches, under the vault's distill lock.

Commit order per batch (a crash loses at most the batch in flight, and a rerun writes the same bytes):
  1. `.memvault/write-intent.json`: the before-image of every file the batch will touch (None = new file);
  2. cards (atomic writes), 3. entity pages, 4. ONE journal line (the commit point), 5. drop the intent.
On start, an intent whose batch has no journal line is rolled back from its before-images (pages.recover).

Which episodes are distilled is read from the journal (truth, synced with git); `.memvault/` only caches it.
Ids, run ids and times depend only on the inputs and the clock, and MEMVAULT_NOW pins the clock, so a crashed
and resumed run leaves a tree byte-identical to an uninterrupted one.
"""

from __future__ import annotations

import calendar
import contextlib
import dataclasses
import hashlib
import json
import os
import signal
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from memvault.distill import cards as cardlib
from memvault.vault import codec
from memvault.vault.config import clock_from_env  # noqa: F401 - re-exported for callers of distill
from memvault.errors import LLMError, UsageError, VaultFormatError
from memvault.model import Card, Episode
from memvault.vault.pages import EntityTable, recover, write_change_set
from memvault.vault.store import Vault, revoked_ids

FAILURE_CLASSES = ("llm_error", "truncated", "invalid_output")
STATE = "distill.json"
CACHE = "distilled.cache.json"
_USER_MARK = "=== user ==="


def _crash_point(name: str) -> None:
    """Fault injection for the kill -9 tests: MEMVAULT_CRASH_AT=<point>:<batch number> kills this process
    with SIGKILL at that point, exactly as an OOM killer or a power cut would. Unset in real use."""
    spec = os.environ.get("MEMVAULT_CRASH_AT")
    if spec and spec == name:
        os.kill(os.getpid(), signal.SIGKILL)


# ---------------------------------------------------------------- results


@dataclass
class Summary:
    run: str = ""
    dry_run: bool = False
    pending_before: int = 0
    pending_after: int = 0
    batches: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    episodes_distilled: int = 0
    created: int = 0
    updated: int = 0
    merged: int = 0
    superseded: int = 0
    empty: int = 0
    failures: dict[str, int] = field(default_factory=lambda: {k: 0 for k in FAILURE_CLASSES})
    errors: list[str] = field(default_factory=list)
    stopped: str | None = None  # max_calls | llm_error
    engine: str = "llm"  # llm | offline (issue 10: distill.engine)
    recovered: str | None = None  # batch id rolled back from an interrupted run
    rolled_back: int = 0  # batches undone because a history edit revoked episodes they consumed
    rollback_fallback: list[str] = field(default_factory=list)  # of those, batches re-distilled without undo
    would_write: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(self.failures.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run, "engine": self.engine, "dry_run": self.dry_run, "pending_before": self.pending_before,
            "pending_after": self.pending_after, "batches": self.batches, "calls": self.calls,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "episodes_distilled": self.episodes_distilled,
            "cards": {"created": self.created, "updated": self.updated, "merged": self.merged,
                      "superseded": self.superseded},
            "empty": self.empty, "failures": dict(self.failures), "errors": list(self.errors),
            "stopped": self.stopped, "recovered": self.recovered, "rolled_back": self.rolled_back,
            "rollback_fallback": list(self.rollback_fallback),
            **({"would_write": self.would_write} if self.dry_run else {}),
        }


class _BatchFailed(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class _StopRun(Exception):
    pass


# ---------------------------------------------------------------- pure helpers


def load_prompt() -> tuple[str, str]:
    text = resources.files("memvault.distill").joinpath("prompts/distill.md").read_text(encoding="utf-8")
    system, _, user = text.partition(_USER_MARK)
    return system.strip() + "\n", user.strip() + "\n"


def batch_size(max_output_tokens: int, tokens_per_episode: int) -> int:
    return max(1, int(max_output_tokens) // max(1, int(tokens_per_episode)))


def plan_batches(episodes: list[Episode], *, size: int, input_budget: int,
                 cost: Callable[[Episode], int]) -> list[list[Episode]]:
    """Consecutive batches of one project each, at most `size` episodes and `input_budget` estimated tokens
    (a single episode over the budget still goes alone: its text is already cut to max_episode_chars)."""
    out: list[list[Episode]] = []
    cur: list[Episode] = []
    used = 0
    for ep in episodes:
        c = cost(ep)
        if cur and (len(cur) >= size or used + c > input_budget or ep.project != cur[0].project):
            out.append(cur)
            cur, used = [], 0
        cur.append(ep)
        used += c
    if cur:
        out.append(cur)
    return out


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f" …[cut {len(text) - limit} chars]"


def format_episode(i: int, ep: Episode, max_chars: int) -> str:
    user = _cut(ep.user.strip(), max_chars)
    assistant = _cut(ep.assistant.strip(), max_chars)
    return f"[e{i}] {ep.at[:10]}\nUSER: {user}\nASSISTANT: {assistant}"


def format_related(cards: list[Card]) -> str:
    if not cards:
        return "(none)"
    lines = []
    for i, c in enumerate(cards):
        state = f" [{c.subject}.{c.field}={c.value}]" if c.kind == "state" else ""
        body = " ".join(c.body.split())
        body = f" — {body[:140]}" if body else ""
        lines.append(f"[{i}] {c.kind}{state} · {c.title} ({(c.valid_from or c.created)[:10]}){body}")
    return "\n".join(lines)


# Field weights of search's BM25F (eval/REPORT.md): a shared title word says more than a shared body word.
_RELATED_WEIGHTS = {"title": 4.0, "entities": 3.0}


def find_related(batch: list[Episode], candidates: list[Card], names: Mapping[str, str], limit: int) -> list[Card]:
    """Active cards of the batch's project (or personal ones) ranked by BM25F of the batch's words over their
    title and entity names / state subject, with search's tokeniser (CJK bigrams, light stemming) and field
    weights. Ties go to the newest card. Deterministic."""
    from memvault.search import bm25
    from memvault.search import tokenize

    if limit <= 0:
        return []
    project = batch[0].project
    words = set(tokenize.tokens(" ".join(f"{e.user} {e.assistant}" for e in batch)))
    docs: dict[str, dict[str, list[str]]] = {}
    by_id: dict[str, Card] = {}
    for c in candidates:
        if c.status != "active" or (c.project not in (project, None)):
            continue
        doc = {"title": tokenize.tokens(c.title),
               "entities": tokenize.tokens(" ".join([c.subject or "", *(names.get(s, s) for s in c.entities)]))}
        if words.isdisjoint(doc["title"]) and words.isdisjoint(doc["entities"]):
            continue
        docs[c.id] = doc
        by_id[c.id] = c
    shared = sorted({t for d in docs.values() for f in d.values() for t in f} & words)
    ranked = bm25.rank(shared, docs, _RELATED_WEIGHTS)
    ranked.sort(key=lambda r: (-round(r[1].score, 9), _neg(by_id[r[0]].created), r[0]))
    return [by_id[cid] for cid, _ in ranked[:limit]]


def _neg(s: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in s)


def _looks_cut(text: str) -> bool:
    """A reply that stops in the middle of its JSON (some servers report finish_reason "stop" anyway)."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[-1].rstrip("`").strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(stripped)
        return False
    except json.JSONDecodeError as exc:
        return exc.pos >= len(stripped) - 1
    except RecursionError:
        return False


# ---------------------------------------------------------------- journal and recovery


def distilled_ids(vault: Vault, records: list[dict[str, Any]] | None = None) -> set[str]:
    """Episode ids the journal says are distilled; cached in .memvault/ keyed on the journal files' size."""
    files = vault.journal_files()
    stamp = {vault.rel(p): [p.stat().st_size, p.stat().st_mtime_ns] for p in files}
    if records is None:
        cached = vault.read_state(CACHE)
        if cached.get("files") == stamp and isinstance(cached.get("ids"), list):
            return set(cached["ids"])
        records = vault.journal(problems=[])
    ids = cardlib.distilled_ids(records)
    try:
        vault.write_state(CACHE, {"files": stamp, "ids": sorted(ids)})
    except OSError:
        pass  # a cache we cannot write only costs speed
    return ids


# ---------------------------------------------------------------- the service


@dataclass
class _Run:
    vault: Vault
    env: Mapping[str, str]
    now: Callable[[], str]
    summary: Summary
    client: Any
    max_calls: int | None
    dry_run: bool
    cards: dict[str, Card]
    entities: EntityTable
    system: str
    user_tpl: str
    kinds: tuple[str, ...]
    rules: Any
    settings: Mapping[str, Any]
    model: str
    batch_no: int = 0
    engine: str = "llm"
    upgrade: bool = False


def _settings(vault: Vault) -> Mapping[str, Any]:
    return vault.config.section("distill")


def llm_settings(vault: Vault, env: Mapping[str, str]):
    from memvault.distill.llm import LLMSettings

    llm = vault.config.llm
    key_env = str(llm.get("api_key_env") or "MEMVAULT_LLM_API_KEY")
    return LLMSettings(
        base_url=str(llm.get("base_url")), model=str(llm.get("model")), api_key=env.get(key_env) or None,
        timeout=float(llm.get("timeout", 120)), temperature=float(llm.get("temperature", 0.0)),
        max_output_tokens=int(llm.get("max_output_tokens", 4096)), json_mode=str(llm.get("json_mode")),
        max_retries=int(llm.get("max_retries", 3)),
    )


def pending_episodes(vault: Vault, project: str | None = None) -> list[Episode]:
    """Live episodes the journal does not list as distilled, batched per project in time order."""
    done = distilled_ids(vault)
    eps = [e for e in vault.episodes(problems=[]) if e.id not in done and (project is None or e.project == project)]
    eps.sort(key=lambda e: (e.project, e.at, e.session, e.turn, e.id))
    return eps


def _redact_proposal(p: cardlib.Proposal, rules) -> cardlib.Proposal:
    """What the model writes is redacted too: a model may echo or invent a secret, and cards go to disk."""
    from memvault.redact import engine as redact

    def clean(text):
        return redact.redact(text, rules).text if text else text

    return dataclasses.replace(
        p, title=clean(p.title), body=clean(p.body), entities=tuple(clean(e) for e in p.entities),
        subject=clean(p.subject), field=clean(p.field), value=clean(p.value), tags=tuple(clean(t) for t in p.tags),
    )


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
) -> Summary:
    """Distil pending episodes. Never raises for a failing batch: failures are counted by class in the
    summary (the caller turns them into exit code 5). Raises Busy when another distill holds the lock."""
    from memvault.redact import engine as redact
    from memvault.distill.llm import Client
    from memvault.distill import engine as engines

    now = now or clock_from_env(env)
    engine = engines.resolve(vault.config)  # issue 10: "llm" or "offline"
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
        pending = pending_episodes(vault, project)
        if upgrade:  # issue 10: instead, the episodes only the offline engine has read
            from memvault.distill.offline import upgrade as upgrading

            pending = upgrading.pending(vault, project)
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
        system, user_tpl = load_prompt()
        problems: list[VaultFormatError] = []
        all_cards = {c.id: c for c in vault.cards(problems=problems)}
        client_kw = {"sleep": sleep} if sleep is not None else {}
        run = _Run(
            vault=vault, env=env, now=now, summary=summary,
            client=Client(settings, **client_kw) if engine == "llm" else contextlib.nullcontext(),  # issue 10
            max_calls=max_calls, dry_run=dry_run, cards=all_cards, entities=EntityTable.load(vault),
            system=system.replace("{{kinds}}", ", ".join(vault.config.kinds)), user_tpl=user_tpl,
            kinds=vault.config.kinds,
            rules=redact.compile_rules(list(vault.config.section("redact").get("deny") or [])),
            settings=cfg, model=settings.model if engine == "llm" else "offline", engine=engine, upgrade=upgrade,
        )
        size = batch_size(settings.max_output_tokens, int(cfg.get("tokens_per_episode", 320)))
        max_chars = int(cfg.get("max_episode_chars", 4000))
        from memvault.distill.llm import estimate_tokens

        overhead = estimate_tokens(run.system) + estimate_tokens(user_tpl) + 60 * int(cfg.get("related_cards", 12))
        budget = max(1, int(cfg.get("max_input_tokens", 12000)) - overhead)
        batches = plan_batches(todo, size=size, input_budget=budget,
                               cost=lambda e: estimate_tokens(format_episode(0, e, max_chars)))
        if engine == "offline":  # issue 10: offline batches (one project, cut before a state change)
            from memvault.distill import offline

            batches = offline.plan(todo)
        done = 0
        try:
            with run.client:
                for batch in batches[:1] if dry_run else batches:
                    try:
                        _process(run, batch)
                    except _BatchFailed as failure:
                        summary.failures[failure.kind] += 1
                        summary.errors.append(failure.message)
                        if failure.kind == "llm_error":
                            summary.stopped = "llm_error"
                            break
                    done += len(batch)
                    if on_progress:
                        on_progress(done, len(todo))
        except _StopRun:
            summary.stopped = "max_calls"
        if dry_run:
            summary.pending_after = len(pending)
        else:
            summary.pending_after = len(upgrading.pending(vault, project) if upgrade else
                                        pending_episodes(vault, project))
            state = vault.read_state(STATE)
            state["last_run"] = {"at": start, "run": summary.run, "failed": summary.failed,
                                 "episodes": summary.episodes_distilled}
            if summary.episodes_distilled:
                state["last_success"] = start
            vault.write_state(STATE, state)
        return summary


# ---------------------------------------------------------------- one batch


def _call(run: _Run, messages: list[dict]):
    from memvault.distill.llm import LLMFailure

    s = run.summary
    if run.max_calls is not None and s.calls >= run.max_calls:
        raise _StopRun()
    s.calls += 1
    try:
        reply = run.client.complete(messages, schema=cardlib.output_schema(run.kinds))
    except LLMFailure as exc:
        raise _BatchFailed("llm_error", exc.message) from None
    except LLMError as exc:  # pragma: no cover - any other endpoint error class
        raise _BatchFailed("llm_error", exc.message) from None
    s.prompt_tokens += reply.prompt_tokens
    s.completion_tokens += reply.completion_tokens
    return reply


def _messages(run: _Run, batch: list[Episode], related: list[Card]) -> list[dict]:
    from memvault.redact import engine as redact

    max_chars = int(run.settings.get("max_episode_chars", 4000))
    episodes = "\n\n".join(format_episode(i, e, max_chars) for i, e in enumerate(batch))
    # The fence carries a hash of what it encloses, so no episode can contain the closing line.
    fence = "<<<UNTRUSTED-TURNS-" + hashlib.sha256(episodes.encode("utf-8", "surrogatepass")).hexdigest()[:12] + ">>>"
    project = batch[0].project
    user = (run.user_tpl.replace("{{related}}", format_related(related))
            .replace("{{project}}", project).replace("{{fence}}", fence).replace("{{episodes}}", episodes))
    # Defence in depth: episodes were redacted at capture, but rules may have grown since, or a line may
    # have been written by hand. Nothing unredacted leaves the machine.
    user = redact.redact(user, run.rules).text
    return [{"role": "system", "content": run.system.replace("{{project}}", project)},
            {"role": "user", "content": user}]


def _process(run: _Run, batch: list[Episode]) -> None:
    """Distil one batch; split it on truncation. Raises _BatchFailed or _StopRun."""
    from memvault.distill.llm import extract_json

    if run.engine == "offline":  # issue 10: the batch's proposals come from the offline engine, not a model
        from memvault.distill import offline

        data, related = offline.propose(batch, run.cards)
        try:
            proposals = cardlib.validate_output(data, n_episodes=len(batch), n_related=len(related), kinds=run.kinds)
        except cardlib.InvalidOutput as exc:
            raise _BatchFailed("invalid_output", f"batch of {len(batch)} episodes from {batch[0].id}: "
                               f"offline engine: {exc}") from None
        _apply(run, batch, related, [_redact_proposal(p, run.rules) for p in proposals],
               {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        return
    related = find_related(batch, list(run.cards.values()), run.entities.names, int(run.settings.get("related_cards", 12)))
    messages = _messages(run, batch, related)
    reply = _call(run, messages)
    calls = 1
    usage = [reply.prompt_tokens, reply.completion_tokens]
    error: str | None = None
    for attempt in range(2):
        if reply.finish_reason == "length" or _looks_cut(reply.text):
            if len(batch) > 1:
                half = len(batch) // 2
                _process(run, batch[:half])
                _process(run, batch[half:])
                return
            max_out = run.client.settings.max_output_tokens
            raise _BatchFailed("truncated", f"episode {batch[0].id}: the model's answer was cut off at "
                               f"llm.max_output_tokens ({max_out}) even for this single episode; raise "
                               "llm.max_output_tokens (or lower distill.max_episode_chars)")
        try:
            data = extract_json(reply.text)
            proposals = cardlib.validate_output(data, n_episodes=len(batch), n_related=len(related),
                                                kinds=run.kinds)
            proposals = [_redact_proposal(p, run.rules) for p in proposals]
            if run.upgrade:  # issue 10: the model's cards supersede the extracted cards of the same turns
                from memvault.distill.offline import upgrade as upgrading

                proposals, related = upgrading.link(proposals, related, batch, run.cards.values())
            break
        except (ValueError, cardlib.InvalidOutput) as exc:
            error = str(exc)
            if attempt == 1:
                raise _BatchFailed("invalid_output", f"batch of {len(batch)} episodes from {batch[0].id}: "
                                   f"invalid model output after one retry: {error}") from None
            # Trigger: bad JSON or schema. Why: models usually fix a named mistake. Outcome: one retry that
            # quotes our error (never their reply, which costs tokens and may echo episode text).
            retry = messages + [{"role": "user", "content": (
                f"Your previous reply was invalid: {error}. Reply again with only the JSON object "
                '{"cards": [...]} following the rules.')}]
            reply = _call(run, retry)
            calls += 1
            usage[0] += reply.prompt_tokens
            usage[1] += reply.completion_tokens
    _apply(run, batch, related, proposals, {"calls": calls, "prompt_tokens": usage[0],
                                            "completion_tokens": usage[1]})


def _apply(run: _Run, batch: list[Episode], related: list[Card], proposals: list[cardlib.Proposal],
           usage: dict[str, int]) -> None:
    s = run.summary
    at = run.now()
    ids = [e.id for e in batch]
    batch_id = "b-" + hashlib.sha256("\n".join([run.summary.run, *ids]).encode()).hexdigest()[:12]
    working: dict[str, Card] = {}  # id -> new version, for every card this batch writes
    before: dict[str, Card | None] = {}  # id -> version before the batch (None = created here)
    counts = {"created": 0, "updated": 0, "merged": 0, "superseded": 0}
    taken = set(run.cards)

    def current(cid: str) -> Card:
        return working.get(cid) or run.cards[cid]

    def put(card: Card) -> None:
        if card.id not in before:
            before[card.id] = run.cards.get(card.id)
        working[card.id] = card

    def live() -> list[Card]:
        merged = dict(run.cards)
        merged.update(working)
        return list(merged.values())

    for i, p in enumerate(proposals):
        if p.action == "noop":
            continue
        src = [ids[j] for j in p.episodes] or ids
        first_day = min(e.at for e in batch if e.id in src)[:10]
        slugs = tuple(dict.fromkeys(run.entities.resolve(n) for n in p.entities))
        if p.action == "update":
            old = current(related[p.target].id)
            source = dict(old.source)
            if source.get("kind") == "distill":
                source["episodes"] = list(dict.fromkeys([*old.episodes, *src]))
            put(dataclasses.replace(
                old, title=p.title, body=p.body or old.body, entities=cardlib._union(old.entities, slugs),
                tags=cardlib._union(old.tags, p.tags), source=source,
                **({"subject": p.subject, "field": p.field, "value": p.value} if old.kind == "state" else {}),
            ))
            counts["updated"] += 1
            continue
        cid = cardlib.card_id(at, f"{batch_id}:{i}", taken)
        taken.add(cid)
        new = Card(
            id=cid, kind=p.kind, title=p.title, body=p.body,
            project=None if p.personal else batch[0].project, entities=slugs, created=at,
            valid_from=p.valid_from or first_day, confidence=p.confidence,
            subject=p.subject if p.kind == "state" else None, field=p.field if p.kind == "state" else None,
            value=p.value if p.kind == "state" else None,
            source={"kind": "distill", "run": run.summary.run, "episodes": src}, tags=p.tags,
        )
        targets: list[Card] = []
        if p.action == "supersede":
            targets = [current(related[p.target].id)]
        else:
            conflicts = cardlib.state_conflicts(new, live())
            same = [c for c in conflicts if cardlib.same_value(c, new)]
            if same:
                # The same value again: not news, the sources join the card that already says it.
                put(cardlib.merge_into(same[0], new))
                counts["merged"] += 1
                continue
            targets = conflicts
            if not targets:
                dup = cardlib.find_duplicate(new, live(), float(run.settings.get("merge_threshold", 85)))
                if dup is not None:
                    put(cardlib.merge_into(current(dup.id), new))
                    counts["merged"] += 1
                    continue
        for old in sorted(targets, key=lambda c: c.id):
            old2, new = cardlib.supersede(current(old.id), new)
            put(old2)
            counts["superseded"] += 1
        put(new)
        counts["created"] += 1

    if run.dry_run:
        for cid, card in working.items():
            s.would_write.append({"id": cid, "action": "create" if before[cid] is None else "update",
                                  "kind": card.kind, "title": card.title, "project": card.project,
                                  "status": card.status, "entities": list(card.entities)})
        s.batches += 1
        return
    _commit(run, batch_id, at, ids, working, before, usage, counts)
    for key, n in counts.items():
        setattr(s, key, getattr(s, key) + n)
    s.batches += 1
    s.episodes_distilled += len(batch)
    if not working:
        s.empty += 1


def _commit(run: _Run, batch_id: str, at: str, ids: list[str], working: dict[str, Card],
            before: dict[str, Card | None], usage: dict[str, int], counts: dict[str, int]) -> None:
    run.batch_no += 1
    n = run.batch_no
    created = sorted(cid for cid, b in before.items() if b is None)
    updated = [{"id": cid, "before": codec.card_to_text(b, run.rules)} for cid, b in sorted(before.items())
               if b is not None and working[cid].status == b.status]
    superseded = [{"id": cid, "by": list(working[cid].superseded_by), "before": codec.card_to_text(b, run.rules)}
                  for cid, b in sorted(before.items()) if b is not None and working[cid].status != b.status]
    born = sorted(cid for cid, b in before.items() if b is None and working[cid].status == "superseded")
    record: dict[str, Any] = {
        "v": 1, "type": "distill", "at": at, "run": run.summary.run, "batch": batch_id, "episodes": ids,
        "engine": run.engine, "model": run.model, "usage": usage, "status": "ok" if working else "empty",
        "created": created, "updated": updated, "superseded": superseded, "counts": counts,
    }
    if born:
        record["born_superseded"] = born
    written = write_change_set(run.vault, run.cards, working, before, run.entities.names, record,
                               hook=lambda point: _crash_point(f"{point}:{n}"))
    run.cards.update(written)


# ---------------------------------------------------------------- rollback after a history edit (DESIGN §4)


def roll_back_history_edits(vault: Vault, summary: Summary, now: Callable[[], str]) -> None:
    """Undo every live batch that consumed an episode revoked by a history edit, newest first, one change
    set and one `rollback` journal line per batch; its live episodes become pending again.

    Purge revokes are not handled here: `forget --purge` already removed what it had to.
    """
    revoked = revoked_ids(vault, "history-edit")
    if not revoked:
        return
    journal = vault.journal(problems=[])
    stale = cardlib.stale_batches(journal, revoked)
    if not stale:
        return
    current = {c.id: c for c in vault.cards(problems=[])}
    table = EntityTable.load(vault)
    undone = cardlib.rolled_back_batches(journal)
    for n, rec in enumerate(stale, 1):
        batch = str(rec.get("batch"))
        later = cardlib.later_touches(journal, rec, undone)
        at = now()
        record: dict[str, Any] = {
            "v": 1, "type": "rollback", "at": at, "run": summary.run,
            "change": "rb-" + hashlib.sha256(f"rollback\x1f{batch}".encode()).hexdigest()[:12],
            "batches": [batch], "reason": "history-edit",
            "episodes": sorted(str(e) for e in rec["episodes"] if str(e) in revoked),
        }
        plan, problem = _plan(rec, current, later, revoked)
        hook = lambda point, n=n: _crash_point(f"rollback-{point}:{n}")  # noqa: E731
        if plan is None:
            # Trigger: the batch's journal line cannot be undone (a before-image purged, damaged or missing).
            # Why: guessing would rewrite cards nobody can audit. Outcome: its cards stay as they are and its
            # live episodes, with the session's new turns, are distilled again (near-duplicates merge).
            record.update(mode="redistill", problem=problem, removed=[], restored=[], trimmed=[], kept=[],
                          updated=[])
            write_change_set(vault, current, {}, {}, table.names, record, hook=hook)
            summary.rollback_fallback.append(batch)
        else:
            # Before-images of what the rollback itself changes sit under `updated` (with `undo`), where
            # `forget --purge` already blanks a purged card's text.
            changes = [{"id": cid, "undo": "remove", "before": codec.card_to_text(current[cid], vault.rules)}
                       for cid in plan.removed]
            changes += [{"id": cid, "undo": "restore" if cid in plan.restored else "trim",
                         "before": codec.card_to_text(current[cid], vault.rules)} for cid in sorted(plan.cards)]
            record.update(mode="journal", removed=plan.removed, restored=plan.restored, trimmed=plan.trimmed,
                          kept=plan.kept, updated=changes)
            before = {cid: current[cid] for cid in [*plan.removed, *plan.cards]}
            write_change_set(vault, current, plan.cards, before, table.names, record, removed=plan.removed,
                             hook=hook)
            for cid in plan.removed:
                current.pop(cid, None)
            current.update(plan.cards)
        undone.add(batch)
        summary.rolled_back += 1


def _plan(rec: dict[str, Any], current: dict[str, Card], later: set[str],
          revoked: set[str]) -> tuple[cardlib.RollbackPlan | None, str]:
    """The rollback plan of one journal line, or (None, why) when the line does not allow an exact undo."""
    changes = cardlib.batch_changes(rec)
    if changes is None:
        return None, "journal line has malformed card lists"
    created, changed = changes
    befores: dict[str, Card] = {}
    for cid, text in changed.items():
        card = None
        if isinstance(text, str):
            try:
                card = codec.parse_card(text, f"journal before-image of {cid}")
            except VaultFormatError:
                card = None
        if card is not None and card.id == cid:
            befores[cid] = card
        elif cid not in later and cid in current:
            return None, f"no usable before-image of {cid}"
    return cardlib.plan_rollback(created, befores, changed, current, later, revoked), ""


# ---------------------------------------------------------------- --auto and stats


def auto_decision(vault: Vault, env: Mapping[str, str], *, now: Callable[[], str] | None = None,
                  local_minute: int | None = None, project: str | None = None):
    """Apply the cron rules of memvault.yaml (auto:) to the vault's state. Arithmetic only, no model call."""
    from memvault.distill import auto

    now = now or clock_from_env(env)
    stamp = now()
    if local_minute is None:
        # Quiet hours are wall-clock time where the machine is (TZ), taken from the same pinnable clock.
        lt = time.localtime(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
        local_minute = lt.tm_hour * 60 + lt.tm_min
    state = vault.read_state(STATE)
    last_success = state.get("last_success") or cardlib.last_distill(vault.journal(problems=[]))
    pending = pending_episodes(vault, project)
    return auto.decide(
        vault.config.section("auto"), now_utc=stamp, local_minute=local_minute, pending=len(pending),
        last_attempt=state.get("last_attempt"), last_success=last_success,
        oldest_pending=min((e.at for e in pending), default=None),
    )
