"""capture: chat logs -> redacted, capped episodes appended to day files. Idempotent and append-only."""

from __future__ import annotations

import dataclasses
import hashlib
import socket
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from memvault.vault import codec
from memvault.redact import engine as redact
from memvault.choices import check_project, clean_project
from memvault.errors import InputError
from memvault.model import Episode, InputProblem, Message, Revoke
from memvault.capture import align
from memvault.capture import hygiene
from memvault.capture.hygiene import Hygiene
from memvault.capture.inputs import UnknownShape, open_messages
from memvault.vault.store import EpisodeIndex, Vault, append_lines, user_digest

@dataclass
class CaptureResult:
    new: int = 0
    already: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason -> count
    revoked: int = 0
    problems: list[str] = field(default_factory=list)  # "input:line: reason", never input text
    formats: dict[str, str] = field(default_factory=dict)  # input name -> format used
    redactions: Counter = field(default_factory=Counter)  # rule -> count
    episode_ids: list[str] = field(default_factory=list)
    private: Counter = field(default_factory=Counter)  # "spans" / "unclosed" -> count, in stored turns
    # {"input", "reason", "refused"}: not read at all. Refused: an input named to capture (a file, stdin) that
    # could not be read; not refused: a file found in a folder that is no chat log.
    inputs_skipped: list[dict] = field(default_factory=list)

    @property
    def refused(self) -> int:
        return sum(1 for x in self.inputs_skipped if x.get("refused"))


    def to_json(self) -> dict:
        return {
            "new": self.new, "already_stored": self.already, "skipped": sum(self.skipped.values()),
            "skipped_by_reason": dict(sorted(self.skipped.items())), "revoked": self.revoked,
            "problems": self.problems, "formats": self.formats,
            "redactions": dict(sorted(self.redactions.items())), "episodes": self.episode_ids,
            "private": dict(sorted(self.private.items())), "inputs_skipped": self.inputs_skipped,
        }


@dataclass
class _Turn:
    session: str
    project: str | None
    user: list[str] = field(default_factory=list)
    assistant: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    at: str | None = None
    tools: int = 0
    number: int = 0
    kind: str = ""
    start: bool = False  # the input begins at the conversation's first message
    anonymous: bool = False  # no session id in the input: the session was derived from its opening
    speakers: dict[str, list[str]] = field(default_factory=dict)  # role -> names, in order of speaking
    private: Counter = field(default_factory=Counter)  # private spans dropped from its messages

    def heard(self, role: str, speaker: str | None) -> None:
        if speaker and speaker not in (names := self.speakers.setdefault(role, [])):
            names.append(speaker)


def capture(
    vault: Vault,
    inputs: Iterable[tuple[str, BinaryIO]],
    *,
    fmt: str = "auto",
    project: str | None = None,
    session: str | None = None,
    now: Callable[[], str] | None = None,
    on_problem: Callable[[str], None] | None = None,
    walked: Collection[str] = (),
) -> CaptureResult:
    """Read every input, then store the turns that are not stored yet. Returns counts, never text. `walked`:
    the names of inputs found inside a folder; one whose format cannot be told is skipped, not refused."""
    check_project(project)
    now = now or _utc_now
    hyg = Hygiene.from_config(dict(vault.config.capture), vault.config.section("redact").get("deny") or [])
    result = CaptureResult()
    turns: list[_Turn] = []
    refused: list[InputError] = []
    for name, stream in inputs:
        try:
            used, messages = open_messages(stream, fmt, name, hyg.sidechains, hyg.max_line_bytes)
        except UnknownShape as exc:
            # Trigger: one input's format cannot be told (a stray file in `capture *.json`, a note in a folder).
            # Why: the other inputs are good logs; refusing them all loses them. Outcome: the others are read.
            # A named input is refused (a warning names it; the command exits 2 after storing the rest); a
            # file found in a folder is only listed as skipped: a folder holds other files too.
            if name not in walked:
                refused.append(exc)
            result.inputs_skipped.append({"input": name, "reason": exc.reason, "refused": name not in walked})
            continue
        result.formats[name] = used
        turns.extend(_group_turns(messages, hyg, used, project, session, result, on_problem,
                                  (name, vault.config.default_project)))
    if refused and not result.formats:
        raise refused[0]
    for exc in refused:
        result.problems.append(exc.message)
        if on_problem:
            on_problem(exc.message)
    if not turns:
        return result
    host = socket.gethostname()
    stamp = now()
    # One batch: a secret found in one field or turn is redacted in every other one (a key quoted once after
    # `token =` and pasted bare in the next turn goes both times).
    texts: list[str] = []
    for t in turns:
        texts += ["\n\n".join(t.user), "\n\n".join(t.assistant)]
        texts += [hyg.clean(n) for role in ("user", "assistant") for n in t.speakers.get(role, [])]
    reds = iter(redact.redact_batch(texts, hyg.rules))
    prepared = [_to_episode(t, reds, hyg, host, stamp, vault.config.default_project, result) for t in turns]
    prepared = [p for p in prepared if p is not None]
    vault.settle()
    with vault.append_lock():
        index = vault.episode_index()
        new, revokes, audits = _decide(prepared, index, result, stamp)
        by_file: dict[str, list[str]] = {}
        for rv in revokes:
            by_file.setdefault(str(vault.day_file(stamp)), []).append(codec.revoke_to_line(rv))
        for ep in new:
            by_file.setdefault(str(vault.day_file(ep.at)), []).append(codec.episode_to_line(ep))
        for path in sorted(by_file):
            append_lines(vault.inside(Path(path)), by_file[path])
        audit_lines = [codec.dump_json_line(a) for a in audits]
        if audit_lines:
            append_lines(vault.inside(vault.audit_file(stamp)), audit_lines)
    result.new = len(new)
    result.episode_ids = [ep.id for ep in new]
    return result


def _group_turns(messages, hyg: Hygiene, kind: str, project, session, result: CaptureResult, on_problem,
                 where: tuple[str, str]):
    """Messages -> turns: a user message opens a turn; the assistant's messages until the next user message
    join it. Harness injections, system messages and tool traffic never open a turn. A turn of a session that
    is switched off (memvault:off) or excluded (capture.exclude) opens as a dropped turn, which its answer
    joins and which is never stored. `where`: the input's name and the vault's default project."""
    name, default_project = where
    off: set[str] = set()
    by_session: dict[str, list[_Turn]] = {}
    counters: dict[str, int] = {}
    current: dict[str, _Turn] = {}
    anonymous: list[_Turn] = []
    starts: dict[str, bool] = {}
    for item in messages:
        if isinstance(item, InputProblem):
            text = str(item)
            result.problems.append(text)
            if on_problem:
                on_problem(text)
            continue
        msg: Message = item
        key = session or msg.session or "\0anon"
        cur = current.get(key)
        starts.setdefault(key, msg.start)
        cleaned = hyg.cleaned(msg.text)
        text = cleaned.text
        if cleaned.unclosed and on_problem and msg.role in ("user", "assistant") and not msg.harness:
            on_problem(f"{name}: a <private> tag is not closed (message {msg.ref}): the rest of that message "
                       "was not stored")
        if msg.role == "user" and not msg.harness and text and not hyg.is_injection(text):
            switch = _switch(text, key, off)
            if switch or key in off or hyg.excluded(project or msg.project or default_project, msg.cwd, name):
                # Trigger: memvault:off/on, a switched-off session, or capture.exclude. Outcome: a turn that is
                # never stored, so the answer that follows is dropped with it (never joined to an older turn).
                result.skipped["excluded" if switch is None and key not in off else "opted-out"] += 1
                counters[key] = counters.get(key, 0) + 1  # kept turns keep their places whatever is dropped
                current[key] = _Turn(session=key, project=None, user=[""], assistant=["-"])
                continue
            if cur is not None and not cur.assistant and cur.user:
                cur.user.append(text)  # two user messages in a row are one turn
                cur.refs.append(msg.ref)
                cur.heard("user", msg.speaker)
                cur.private.update(spans=cleaned.private, unclosed=cleaned.unclosed)
                continue
            counters[key] = counters.get(key, 0) + 1
            cur = _Turn(session=key, project=project or clean_project(msg.project), number=counters[key],
                        at=msg.ts, kind=kind, start=starts[key])
            cur.user.append(text)
            cur.refs.append(msg.ref)
            cur.heard("user", msg.speaker)
            cur.private.update(spans=cleaned.private, unclosed=cleaned.unclosed)
            current[key] = cur
            (anonymous if key == "\0anon" else by_session.setdefault(key, [])).append(cur)
        elif msg.role == "user":
            result.skipped["harness"] += 1
            if cur is not None:
                cur.tools += msg.tools
        elif msg.role == "assistant":
            if cur is None:
                # An opening by the assistant (a role-play greeting, or a cut that begins mid-answer): a turn
                # with no user text, stored marked `source.opening` when nothing is stored for the session yet.
                counters[key] = counters.get(key, 0) + 1
                cur = _Turn(session=key, project=project or clean_project(msg.project), number=counters[key],
                            at=msg.ts, kind=kind, start=starts[key])
                current[key] = cur
                (anonymous if key == "\0anon" else by_session.setdefault(key, [])).append(cur)
            if text:
                cur.assistant.append(text)
                cur.heard("assistant", msg.speaker)
                cur.private.update(spans=cleaned.private, unclosed=cleaned.unclosed)
            cur.refs.append(msg.ref)
            cur.tools += msg.tools
            cur.at = cur.at or msg.ts
        elif msg.role == "rewound":  # a prompt on a branch the person left (rewind, rollback): not a turn
            result.skipped["rewound"] += 1
        elif msg.role == "greeting":  # a character's greeting before the person said anything: no user side
            result.skipped["greeting"] += 1
        elif msg.role == "tool":
            if cur is not None:
                cur.tools += max(1, msg.tools)
        else:
            result.skipped["system"] += 1
    if anonymous:
        # No session id in the input: derive one from the opening of the conversation, so the same log piped
        # twice (or grown by new turns) lands in the same session.
        opening = "\x1f".join("\n".join(t.user + t.assistant) for t in anonymous[:2])
        sid = "s-" + hashlib.sha256(opening.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        for t in anonymous:
            t.session = sid
            t.anonymous = True
        by_session[sid] = anonymous
    return [t for turns in by_session.values() for t in turns]


def _switch(text: str, key: str, off: set[str]) -> str | None:
    """memvault:off / memvault:on in a person's message: switch the session, and say which (else None)."""
    switch = hygiene.switch_in(text)
    if switch == "off":
        off.add(key)
    elif switch == "on":
        off.discard(key)
    return switch


@dataclass(frozen=True)
class _Prepared:
    episode: Episode
    findings: dict[str, int]
    user_digest: str = ""
    opening: bool = False  # no user text: an assistant's opening, or the answer a cut log begins inside
    start: bool = False
    anonymous: bool = False
    timed: bool = False  # `at` is the log's own time, not the capture's
    private: tuple[tuple[str, int], ...] = ()  # ("spans", n), ("unclosed", n): for the audit, never the text


def _to_episode(t: _Turn, reds, hyg: Hygiene, host: str, stamp: str, default_project: str, result: CaptureResult):
    """The turn as an episode; `reds` yields its redacted fields (user, assistant, speaker names) in order."""
    user_r, asst_r = next(reds), next(reds)
    names = {role: [next(reds) for _ in t.speakers.get(role, [])] for role in ("user", "assistant")}
    user, assistant = user_r.text, asst_r.text
    if len(user.strip()) + len(assistant.strip()) < hyg.min_chars:
        result.skipped["short"] += 1
        return None
    user, assistant = hyg.cap(user), hyg.cap(assistant)
    findings = redact.count_by_rule(user_r.findings + asst_r.findings)
    digest = "sha256:" + hashlib.sha256(f"{user}\x1f{assistant}".encode("utf-8", "surrogatepass")).hexdigest()
    at = t.at or stamp
    source = {"kind": t.kind, "host": host,
              "ref": t.refs[0] if t.refs else ""}
    if len(t.refs) > 1:
        source["refs"] = t.refs
    opening = not user.strip()
    if opening:
        source["opening"] = True
    ep = Episode(
        id=_episode_id(at, t.session, t.number, digest), at=at, project=t.project or default_project,
        session=t.session, turn=t.number, user=user, assistant=assistant, tools=t.tools, source=source,
        hash=digest, speakers=_speakers(t, names, findings),
    )
    private = tuple(sorted((k, v) for k, v in t.private.items() if v))
    return _Prepared(ep, findings, user_digest(user), opening, t.start, t.anonymous, t.at is not None, private)


def _speakers(t: _Turn, redacted: dict[str, list], findings: dict[str, int]) -> dict[str, list[str]]:
    """The turn's speaker names, redacted like its text (a name is data from the log too); roles with none left
    out. A side with no stored text names nobody."""
    out: dict[str, list[str]] = {}
    for role, said in (("user", t.user), ("assistant", t.assistant)):
        names = []
        for r in redacted[role] if said else []:
            for rule, n in redact.count_by_rule(r.findings).items():
                findings[rule] = findings.get(rule, 0) + n
            if r.text and r.text not in names:
                names.append(r.text)
        if names:
            out[role] = names
    return out


def _episode_id(at: str, session: str, turn: int, digest: str) -> str:
    compact = at.replace("-", "").replace(":", "")
    tail = hashlib.sha256(f"{session}\x1f{turn}\x1f{digest}".encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return f"ep-{compact}-{tail}"


def _decide(prepared: list[_Prepared], index: EpisodeIndex, result: CaptureResult, stamp: str):
    """Compare with what is stored: new turns, turns already stored, and history edits (§4)."""
    new: list[Episode] = []
    revokes: list[Revoke] = []
    audits: list[dict] = []
    by_session: dict[str, list[_Prepared]] = {}
    for p in prepared:
        by_session.setdefault(p.episode.session, []).append(p)
    for items in by_session.values():
        items = align.place(items, index, _moved)
        sid = items[0].episode.session
        known = index.sessions.get(sid, {})
        users = index.users.get(sid, {})
        # A revoke needs positive evidence: a stored turn at the same position of the same session whose user
        # text changed. A different answer to the same user text (cut short, went on, regenerated) is not one.
        changed = [p.episode.turn for p in items
                   if not p.opening and p.episode.turn in users and users[p.episode.turn] != p.user_digest
                   and not align.at_cut_edge(p, items, index)
                   # a stored opening, or a stored turn captured from a cut of this one, is not an edit either
                   and users[p.episode.turn] != align.EMPTY and not align.is_part(users[p.episode.turn], p)
                   # an older version of the log (cut before a rewind or rollback) is not an edit
                   and p.episode.at >= index.times.get(sid, {}).get(p.episode.turn, "")]
        first_changed = min(changed) if changed else None
        if first_changed is not None:
            stale = tuple(known[t][1] for t in sorted(known) if t >= first_changed)
            revokes.append(Revoke(ids=stale, reason="history-edit", at=stamp, session=sid))
            result.revoked += len(stale)
        seen_now: set[str] = set()
        for p in items:
            ep = p.episode
            if (ep.turn in known and (first_changed is None or ep.turn < first_changed)
                    and not (users.get(ep.turn) == align.EMPTY and not p.opening)):
                result.already += 1
                continue
            if p.opening and not p.start and (ep.source.get("kind") in STARTS_SAID or known
                                              or all(q.opening for q in items)):
                # Trigger: a turn with no user text that does not start the conversation: the input's format says
                # where a conversation starts and this is not it, or its session is stored, or the input holds
                # nothing else. Why: it is the end of an answer whose question the input lacks (a tail that
                # begins inside an answer). Outcome: not stored. A JSON-lines or text log cannot say where a
                # conversation starts, so its opening of a session not stored yet is kept (a greeting, or the
                # first session of a chat that the other side began).
                result.skipped["partial"] += 1
                continue
            if ep.id in seen_now or (ep.id in index.ids and ep.id not in index.revoked and first_changed is None):
                result.already += 1
                continue
            if ep.id in index.ids:
                # Trigger: the same turn comes back after its id was revoked (history edit, or an edit undone).
                # Why: a revoke is by id, so reusing the id would hide the new line too. Outcome: the next free
                # id of a deterministic sequence, so two machines replaying the same edit still agree.
                n = 1
                while True:
                    alt = _episode_id(ep.at, ep.session, ep.turn, f"{ep.hash}#{n}")
                    if alt not in index.ids and alt not in seen_now:
                        break
                    n += 1
                ep = Episode(**{**ep.__dict__, "id": alt})
            seen_now.add(ep.id)
            new.append(ep)
            result.redactions.update(p.findings)
            result.private.update(dict(p.private))
            if p.findings or p.private:
                audit = {"at": stamp, "episode": ep.id, "rules": dict(sorted(p.findings.items()))}
                if p.private:
                    audit["private"] = dict(p.private)  # how many spans were dropped, never what they said
                audits.append(audit)
    return new, revokes, audits


def _moved(p: _Prepared, session: str, turn: int) -> _Prepared:
    ep = p.episode
    moved = Episode(**{**ep.__dict__, "session": session, "turn": turn,
                       "id": _episode_id(ep.at, session, turn, ep.hash)})
    return dataclasses.replace(p, episode=moved)


# Formats whose logs say where a conversation starts (a header, a root message, a session_meta, a document).
# A Cursor or Antigravity log always opens with the person's prompt, so an answer first is always a cut.
STARTS_SAID = frozenset({"claude-code", "codex", "sillytavern", "openai", "chatgpt", "cursor", "gemini",
                         "antigravity", "claude-ai", "opencode"})


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
