"""What an agent's hook does (`memvault hook EVENT --agent A`, written by `memvault setup`), host by host.

- session-start: the project's brief (memvault.views.brief) as the host's SessionStart output, at most
  BRIEF_CHARS characters (cut at a line, fence closed, the most useful sections first), led by a note when memory
  stopped being saved (memvault.vault.health: the last capture or distill that failed or stored nothing, and how
  to fix it). The same shape suits Claude Code, Codex and Gemini CLI:
  `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "…"}}`.
- stop / pre-compact (Claude Code, Codex): capture the session's log (`transcript_path`).
- after-agent (Gemini CLI): capture the turn the payload carries (`prompt`, `prompt_response`); pre-compact of
  Gemini reads its session file. Turn ids come from the text, so both store a turn once.

Capture is idempotent and takes the vault's append lock, so hooks that fire together (Codex launches matching
hooks concurrently) store each turn once. Every outcome is recorded for the brief's health note. Nothing here
prints: the CLI decides what reaches the host (never a block, never a non-zero exit).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memvault.errors import MemvaultError, NoMatch, ReadOnlyVault
from memvault.vault import health
from memvault.vault.store import Vault

BRIEF_CHARS = 9000  # Claude Code shows a longer session-start context only as a 2 KB preview (about 10 KB)
# Seconds a hook may take before it gives up on its own: under the timeouts setup writes (30 s for
# session-start, 120 s for the others), so the host never has to kill it.
DEADLINES = {"session-start": 20, "stop": 100, "pre-compact": 100, "after-agent": 100}
EVENTS = tuple(DEADLINES)
FORMATS = {"claude-code": "claude-code", "codex": "codex", "gemini": "jsonl"}

NOTICE = {
    "en": "memvault: memory may have stopped being saved. The last {job} ({by}, {at}) {what}. Fix: {fix}",
    "zh": "memvault：记忆可能已停止保存。最近一次{job}（{by}，{at}）{what}。解决办法：{fix}",
}
JOB = {"en": {"capture": "capture", "distill": "distill"}, "zh": {"capture": "捕获", "distill": "提炼"}}
WHAT = {"en": {"failed": "failed: {problem}", "nothing": "stored nothing: {problem}"},
        "zh": {"failed": "失败：{problem}", "nothing": "什么也没存下：{problem}"}}


def health_notice(root: Path, lang: str = "en") -> str:
    """One line per job whose last run failed or stored nothing ("" when all is well)."""
    lines = []
    for p in health.problems(root):
        what = WHAT[lang]["nothing" if p.get("nothing") else "failed"].format(problem=p.get("problem", "?"))
        lines.append(NOTICE[lang].format(job=JOB[lang].get(p["job"], p["job"]), by=p.get("by", "?"),
                                         at=p.get("at", "?"), what=what, fix=p.get("fix", "memvault doctor")))
    return "\n".join(lines)


def session_start(vault: Vault, payload: dict[str, Any], limit: int = BRIEF_CHARS) -> dict[str, Any] | None:
    """The host's SessionStart output, or None when there is nothing to say."""
    from memvault.views.brief import build_brief, project_for

    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
    note = health_notice(vault.root)
    brief = None
    try:
        brief = build_brief(vault, project_for(vault, cwd), max_chars=limit - len(note) - 1 if note else limit)
    except NoMatch:
        pass  # nothing remembered for this project yet
    if brief is not None and note and brief.lang != "en":
        note = health_notice(vault.root, brief.lang)
    text = "\n".join(t for t in (note[:limit], brief.pack if brief else "") if t)
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def store(vault: Vault, event: str, agent: str, payload: dict[str, Any], now: Callable[[], str]) -> None:
    """Capture what the hook's payload points at, and record the outcome for the health note."""
    from memvault.capture.hygiene import path_excluded
    from memvault.capture.service import capture

    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
    paths = (vault.config.capture.get("exclude") or {}).get("paths") or []
    if agent not in FORMATS or path_excluded(cwd, [str(p) for p in paths]):
        return
    by = f"{event} hook of {agent}"
    source = payload.get("transcript_path") if isinstance(payload.get("transcript_path"), str) else ""
    try:
        data, name = _input(agent, event, payload, cwd)
        if data is None:
            return  # nothing to read (no transcript yet): not a failure
        result = capture(vault, [(name, io.BytesIO(data))], fmt=FORMATS[agent], now=now)
    except MemvaultError as exc:
        health.record(vault.root, "capture", {"at": now(), "by": by, "ok": False, "problem": exc.message,
                                              "fix": _fix(exc, agent, source)})
        raise
    read_any = result.new or result.already or result.revoked or sum(result.skipped.values())
    entry: dict[str, Any] = {"at": now(), "by": by, "ok": bool(read_any), "new": result.new,
                             "already": result.already}
    if not read_any:
        entry.update(nothing=True, problem=f"no turn could be read from {name}",
                     fix=f"the agent's log format may have changed: run `memvault capture --format "
                         f"{FORMATS[agent]} {name}` to see why, and update memvault")
    health.record(vault.root, "capture", entry)


def record_timeout(root: Path, event: str, agent: str, seconds: int, now: Callable[[], str]) -> None:
    """A capture that ran out of time is a failure the brief should name (a slow brief is not: it is only late)."""
    if event == "session-start":
        return
    health.record(root, "capture", {
        "at": now(), "by": f"{event} hook of {agent}", "ok": False,
        "problem": f"it took longer than {seconds} s and stopped (the host would have killed it)",
        "fix": "run `memvault doctor`; a large vault's first index build is slow: run `memvault reindex` once"})


def _fix(exc: MemvaultError, agent: str, source: str) -> str:
    if isinstance(exc, ReadOnlyVault):
        return "make the vault writable for the user the agent runs as"
    how = f"`memvault capture --format {FORMATS.get(agent, 'auto')} {source}`" if source else "`memvault capture`"
    return f"run {how} by hand to see the whole error; `memvault doctor` checks the vault"


def _input(agent: str, event: str, payload: dict[str, Any], cwd: str) -> tuple[bytes | None, str]:
    """The bytes to capture and the name they go by."""
    transcript = payload.get("transcript_path")
    if agent != "gemini":
        if not isinstance(transcript, str) or not Path(transcript).is_file():
            return None, ""
        return Path(transcript).read_bytes(), transcript
    session = str(payload.get("session_id") or "gemini")
    project = Path(cwd).name or None
    if event == "after-agent":
        turns = [(payload.get("prompt"), payload.get("prompt_response"))]
        name = "<gemini AfterAgent>"
    else:
        if not isinstance(transcript, str) or not Path(transcript).is_file():
            return None, ""
        found, turns = gemini_turns(Path(transcript).read_bytes())
        session, name = found or session, transcript  # the file's own id: the same as AfterAgent's
    lines = []
    for user, reply in turns:
        if not isinstance(user, str) or not isinstance(reply, str) or not (user.strip() or reply.strip()):
            continue
        tid = hashlib.sha256(f"{session}\x1f{user}\x1f{reply}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
        for role, text in (("user", user), ("assistant", reply)):
            lines.append(json.dumps({"id": f"{tid}-{role[0]}", "role": role, "content": text, "session": session,
                                     **({"project": project} if project else {})}, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else None, name


def gemini_turns(raw: bytes) -> tuple[str | None, list[tuple[str, str]]]:
    """(prompt, reply) pairs of a Gemini CLI session file: JSON `{"messages": [...]}` (older versions), or JSONL
    (0.61: a header line, message lines, and `{"$set": {"messages": [...]}}` lines), each message
    `{"type": "user" | "gemini", "content": text or parts}`. Anything else gives no turn (the caller records that
    nothing was stored). Also the session's id, when the file names it (`sessionId`)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
        docs = [data]
    except ValueError:
        docs = []
        for line in text.splitlines():
            try:
                docs.append(json.loads(line))
            except ValueError:
                continue
    messages: list[Any] = []
    for d in docs:
        if isinstance(d, list):
            messages += d
        elif isinstance(d, dict):
            inner = d.get("messages", (d.get("$set") or {}).get("messages") if isinstance(d.get("$set"), dict)
                          else None)
            messages += inner if isinstance(inner, list) else [d] if "type" in d else []
    session = next((str(d["sessionId"]) for d in docs if isinstance(d, dict) and d.get("sessionId")), None)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    user: str | None = None
    for m in messages:
        if not isinstance(m, dict) or (m.get("id") and m["id"] in seen):
            continue  # a message the file lists again ($set of the whole list after its own line)
        if m.get("id"):
            seen.add(str(m["id"]))
        body = _text(m.get("content"))
        if m.get("type") == "user":
            user = body
        elif m.get("type") in ("gemini", "model") and user is not None and body:
            out.append((user, body))
            user = None
    return session, out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


__all__ = ["BRIEF_CHARS", "DEADLINES", "EVENTS", "gemini_turns", "health_notice", "record_timeout",
           "session_start", "store"]
