"""`memvault hook` at the hosts' limits, with real processes: the brief's size and shape per host, the brief after
compaction, hooks that fail open (never a block, never a non-zero exit, never past the host's timeout), no
feedback of the brief into memory, parallel hooks that store once, the note when memory stopped being saved, and
Gemini CLI's hooks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jsonschema  # a dependency of the mcp extra the tests run with
import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"

# Codex's published SessionStart output schema (session-start.command.output.schema.json), which also
# describes what Claude Code and Gemini CLI read: additionalContext under hookSpecificOutput.
SESSION_START_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "continue": {"type": "boolean"}, "stopReason": {"type": "string"}, "suppressOutput": {"type": "boolean"},
        "systemMessage": {"type": "string"},
        "hookSpecificOutput": {
            "type": "object", "additionalProperties": False, "required": ["hookEventName"],
            "properties": {"hookEventName": {"const": "SessionStart"}, "additionalContext": {"type": "string"}}},
    },
}
FENCE = r"<<<MEMVAULT-MEMORY-[0-9a-f]{12}>>>"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(extra)
    return env


def _hook(vault: Path, event: str, payload, agent: str = "claude-code", **env: str) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "hook", event, "--agent", agent],
                          input=data, capture_output=True, text=True, env=_env(**env), timeout=120)


def _cli(vault: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), *args], capture_output=True,
                          text=True, env=_env(), timeout=120)


def _turns(vault: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((vault / "episodes").rglob("*.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines()]


def _context(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"]


def _remember(vault: Path, n: int, project: str = "shop", zh: bool = False) -> None:
    """n cards, rules and decisions in turn, each with a body long enough that 60 of them overflow a brief."""
    from memvault.distill.remember import remember
    from memvault.vault.store import Vault

    v = Vault.open(vault, {})
    for i in range(n):
        title = (f"规则 {i}：部署前必须先跑完整的测试套件" if zh else
                 f"Rule {i}: run the whole test suite before a deploy")
        body = ("并且把结果写进发布说明，失败时不得发布，必须先修复再重新运行全部测试。" * 3 if zh else
                "and note the result in the release notes; a red run blocks the deploy until it is fixed. " * 3)
        remember(v, title, now=lambda: "2026-12-01T10:00:00Z", kind="rule" if i % 2 else "decision", body=body,
                 project=project)


@pytest.mark.parametrize("zh", [False, True])
def test_the_brief_fits_the_host_cut_at_a_line_with_the_fence_closed(vault, zh):
    import re

    _remember(vault, 60, zh=zh)
    cfg = vault / "memvault.yaml"  # a budget of tokens the characters run out before
    cfg.write_text(cfg.read_text().replace("budget_tokens: 2000", "budget_tokens: 12000"), encoding="utf-8")
    res = _hook(vault, "session-start", {"cwd": "/home/me/shop", "source": "startup"})
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    jsonschema.validate(out, SESSION_START_SCHEMA)
    text = out["hookSpecificOutput"]["additionalContext"]
    assert 8000 < len(text) <= 9000
    fences = re.findall(FENCE, text)
    assert len(set(fences)) == 1 and text.rstrip("\n").endswith(fences[0])  # the fence is closed, last
    inner = text.split(fences[0] + "\n", 1)[1].rsplit("\n" + fences[0], 1)[0]
    assert all(line.startswith(("- [", "## ", "Memory brief", "项目 ")) for line in inner.split("\n"))
    # The most useful first: rules (a section before decisions) are all there before any decision is cut.
    assert ("## Rules" if not zh else "## 规则") in text
    rules_in = sum(1 for line in inner.split("\n") if "rule" in line.lower() or "规则" in line)
    assert rules_in >= 20
    # With the note that memory stopped being saved, the whole still fits, note first, fence closed.
    bad = vault.parent / "bad.jsonl"
    bad.write_text('{"kind": "x"}\n', encoding="utf-8")
    _hook(vault, "stop", {"transcript_path": str(bad), "cwd": "/home/me/shop"})
    noted = _context(_hook(vault, "session-start", {"cwd": "/home/me/shop"}).stdout)
    assert len(noted) <= 9000 and ("停止保存" if zh else "stopped being saved") in noted.split("\n")[0]
    assert noted.rstrip("\n").endswith(re.findall(FENCE, noted)[0])


def test_the_brief_comes_back_after_compaction_and_for_every_host(vault):
    _remember(vault, 2)
    for agent in ("claude-code", "codex", "gemini"):
        for source in ("startup", "compact", "resume", "clear"):
            res = _hook(vault, "session-start", {"cwd": "/x/shop", "source": source, "trigger": source}, agent)
            assert res.returncode == 0 and res.stderr == "", res.stderr
            out = json.loads(res.stdout)
            jsonschema.validate(out, SESSION_START_SCHEMA)
            assert "Rule 1: run the whole test suite" in _context(res.stdout), (agent, source)


def test_hooks_fail_open_and_never_block_compaction(vault, tmp_path):
    transcript = tmp_path / "t.jsonl"
    shutil.copy(DATA / "claude-code-en.jsonl", transcript)
    # A vault that is not there, a payload that is not JSON, a transcript that is a folder: exit 0, and nothing
    # on stdout: no {"decision": "block"} that would cancel the person's /compact, no "deny" that makes Gemini
    # retry its answer.
    for vault_path, event, agent, payload in (
            (tmp_path / "missing", "pre-compact", "claude-code", {"transcript_path": str(transcript)}),
            (vault, "pre-compact", "claude-code", "{not json"),
            (vault, "pre-compact", "codex", {"transcript_path": str(tmp_path)}),
            (vault, "after-agent", "gemini", {"prompt": 5, "prompt_response": None}),
            (vault, "pre-compact", "gemini", {"transcript_path": str(transcript)}),
            (tmp_path / "missing", "session-start", "codex", {"cwd": "/x"})):
        res = _hook(vault_path, event, payload, agent)
        assert res.returncode == 0 and res.stdout == "", (event, agent, res.stdout, res.stderr)
        assert "Traceback" not in res.stderr


def test_a_hook_reads_the_whole_payload_even_when_it_cannot_work(tmp_path):
    """A payload larger than a pipe holds (and than the 1 MB a hook reads), to a hook whose vault is missing or
    whose event is unknown: the host's write never fails."""
    for vault, event in ((tmp_path / "missing", "stop"), (tmp_path, "no-such-event")):
        proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault), "hook", event],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
        payload = json.dumps({"transcript_path": "/x", "padding": "x" * 1_500_000}).encode()
        proc.stdin.write(payload)  # BrokenPipeError here if the hook exited without reading
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0 and proc.stdout.read() == b""
        assert b"Traceback" not in proc.stderr.read()


def test_a_hook_stops_by_itself_before_the_host_would_kill_it(vault, tmp_path):
    """The host's stdin never closes (a hung pipe): the hook gives up after its deadline, exits 0, prints
    nothing, and the next brief says the capture did not finish."""
    _remember(vault, 1)
    r, w = os.pipe()
    start = time.monotonic()
    held = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "hook", "stop"], stdin=r,
                          capture_output=True, env=_env(MEMVAULT_HOOK_SECONDS="2"), timeout=60)
    took = time.monotonic() - start
    os.close(w)
    os.close(r)
    assert held.returncode == 0 and held.stdout == b"" and 2 <= took < 20, (took, held.stderr)
    assert b"stopped after 2 s" in held.stderr
    brief = _context(_hook(vault, "session-start", {"cwd": "/x/shop"}).stdout)
    assert brief.startswith("memvault: memory may have stopped being saved. The last capture (stop hook of "
                            "claude-code") and "longer than 2 s" in brief and "Fix: " in brief
    assert "Rule 0" in brief  # the memory itself still comes after the note


def test_the_brief_never_comes_back_as_a_turn_or_a_card(vault, tmp_path):
    _remember(vault, 2)
    brief = _context(_hook(vault, "session-start", {"cwd": "/x/shop"}).stdout)
    cards_before = sorted(p.name for p in (vault / "cards").rglob("*.md"))
    log = tmp_path / "session.jsonl"
    lines = [
        {"role": "user", "content": brief, "session": "s1", "project": "shop"},  # the host injected it alone
        {"role": "assistant", "content": "Noted.", "session": "s1", "project": "shop"},
        {"role": "user", "content": brief + "\nShould the invoice export use CSV or XLSX for the accountants?",
         "session": "s1", "project": "shop"},
        {"role": "assistant", "content": "Use XLSX: the accountants open it in Excel without an import step.",
         "session": "s1", "project": "shop"},
    ]
    log.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in lines), encoding="utf-8")
    assert _cli(vault, "capture", "--format", "jsonl", str(log)).returncode == 0
    stored = _turns(vault)
    assert len(stored) == 1 and "invoice export" in json.dumps(stored[0], ensure_ascii=False)
    assert "MEMVAULT-MEMORY" not in json.dumps(stored) and "Rule 1" not in json.dumps(stored)
    assert _cli(vault, "distill", "--json").returncode == 0
    new_cards = [p for p in (vault / "cards").rglob("*.md") if p.name not in cards_before]
    assert not any("Rule 1" in p.read_text(encoding="utf-8") or "MEMVAULT" in p.read_text(encoding="utf-8")
                   for p in new_cards)


def test_eight_hooks_fired_together_store_once(vault, tmp_path):
    transcript = tmp_path / "t.jsonl"
    shutil.copy(DATA / "codex-zh.jsonl", transcript)
    cmd = [sys.executable, "-m", "memvault", "--vault", str(vault), "hook"]
    events = ["stop", "pre-compact"] * 4
    procs = [subprocess.Popen([*cmd, event, "--agent", "codex"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=_env()) for event in events]
    payload = json.dumps({"session_id": "s", "transcript_path": str(transcript), "cwd": "/x/shop"}).encode()
    for p in procs:  # all eight are up and waiting on stdin: release them at once
        p.stdin.write(payload)
    for p in procs:
        p.stdin.close()
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    assert all(code == 0 and out == b"" and err == b"" for code, out, err in results), results
    stored = _turns(vault)
    keys = [(t["session"], t["id"]) if "session" in t else t["id"] for t in stored]
    assert stored and len(keys) == len(set(keys))
    # The same log captured once, by one process, stores as many turns.
    alone = tmp_path / "vault2"
    shutil.copytree(Path(__file__).resolve().parents[2] / "vault-template", alone)
    assert _cli(alone, "capture", "--format", "codex", str(transcript)).returncode == 0
    assert len(_turns(alone)) == len(stored)


def test_the_brief_says_when_capture_or_distill_stopped_working(vault, tmp_path):
    _remember(vault, 1)
    garbage = tmp_path / "changed format.jsonl"
    garbage.write_text('{"kind": "new-format", "payload": {"x": 1}}\n' * 3, encoding="utf-8")
    res = _hook(vault, "stop", {"transcript_path": str(garbage), "cwd": "/x/shop"})
    assert res.returncode == 0 and res.stdout == ""
    brief = _context(_hook(vault, "session-start", {"cwd": "/x/shop"}).stdout)
    assert "stored nothing: no turn could be read from" in brief
    assert "memvault capture --format claude-code" in brief
    # A capture that works clears the note.
    good = tmp_path / "good.jsonl"
    shutil.copy(DATA / "claude-code-en.jsonl", good)
    assert _hook(vault, "stop", {"transcript_path": str(good), "cwd": "/x/shop"}).returncode == 0
    assert "stopped being saved" not in _context(_hook(vault, "session-start", {"cwd": "/x/shop"}).stdout)
    # A distill whose endpoint is down: named, with the fix.
    cfg = vault / "memvault.yaml"
    cfg.write_text(cfg.read_text().replace('base_url: ""', 'base_url: "http://127.0.0.1:9/v1"')
                   .replace("max_retries: 3", "max_retries: 0").replace("engine: auto", "engine: llm"))
    assert _cli(vault, "distill").returncode == 5
    brief = _context(_hook(vault, "session-start", {"cwd": "/x/shop"}).stdout)
    assert "The last distill (memvault distill" in brief and "llm.base_url" in brief


def test_the_note_speaks_chinese_with_a_chinese_brief(vault, tmp_path):
    _remember(vault, 3, zh=True)
    garbage = tmp_path / "g.jsonl"
    garbage.write_text('{"kind": "x"}\n', encoding="utf-8")
    _hook(vault, "stop", {"transcript_path": str(garbage), "cwd": "/x/shop"})
    brief = _context(_hook(vault, "session-start", {"cwd": "/x/shop"}).stdout)
    assert brief.startswith("memvault：记忆可能已停止保存。最近一次捕获") and "解决办法" in brief


def test_gemini_hooks_store_each_turn_once_and_brief_the_next_session(vault, tmp_path):
    turn = {"session_id": "g-1", "cwd": "/home/me/shop", "hook_event_name": "AfterAgent",
            "prompt": "Which queue should the order emails use: SQS or Redis streams?",
            "prompt_response": "Use SQS: the team already runs it and it retries failed sends for us."}
    assert _hook(vault, "after-agent", turn, "gemini").returncode == 0
    session = tmp_path / "session-g-1.json"
    session.write_text(json.dumps({"sessionId": "g-1", "messages": [
        {"type": "user", "content": turn["prompt"]}, {"type": "gemini", "content": turn["prompt_response"]},
        {"type": "user", "content": [{"text": "订单邮件的重试次数定为几次？"}]},
        {"type": "gemini", "content": [{"text": "定为 5 次，间隔指数退避，最长 10 分钟。"}]}]}, ensure_ascii=False))
    res = _hook(vault, "pre-compact", {"session_id": "g-1", "cwd": "/home/me/shop",
                                       "transcript_path": str(session), "trigger": "auto"}, "gemini")
    assert res.returncode == 0 and res.stdout == "" and res.stderr == "", res.stderr
    stored = _turns(vault)
    assert len(stored) == 2 and {t["project"] for t in stored} == {"shop"}  # the AfterAgent turn stored once
    assert _cli(vault, "remember", "Order emails go through SQS", "--kind", "decision", "--project",
                "shop").returncode == 0
    out = _hook(vault, "session-start", {"cwd": "/home/me/shop", "source": "startup"}, "gemini")
    assert "Order emails go through SQS" in _context(out.stdout)


def _gemini_injected(brief: str, question: str) -> str:
    """How Gemini CLI 0.61 hands a SessionStart additionalContext on in the prompt: escaped, in <hook_context>."""
    escaped = brief.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f"<hook_context>{escaped}</hook_context>\n\n{question}"


def test_gemini_0_61_session_files_and_its_injected_brief(vault, tmp_path):
    """Seen with the real Gemini CLI 0.61: the prompt of AfterAgent carries the brief escaped inside
    <hook_context>, and the session file is JSONL with `$set` lines. Stored: the question alone, once."""
    _remember(vault, 1)
    brief = _context(_hook(vault, "session-start", {"cwd": "/w/shop"}, "gemini").stdout)
    question = "What do you remember about deploys?"
    answer = "Deploys go out only on weekdays, and the whole test suite runs first."
    prompt = _gemini_injected(brief, question)
    assert _hook(vault, "after-agent", {"session_id": "g-2", "cwd": "/w/shop", "prompt": prompt,
                                        "prompt_response": answer}, "gemini").returncode == 0
    session = tmp_path / "session-2026-12-06T14-17-g2.jsonl"
    lines = [
        {"sessionId": "g-2", "projectHash": "x", "startTime": "2026-12-06T14:17:42Z", "kind": "main"},
        {"$set": {"messages": [{"id": "m0", "type": "user", "content": [
            {"text": "<session_context>\nThis is the Gemini CLI. Today's date is …\n</session_context>"}]}]}},
        {"id": "m1", "type": "user", "content": [{"text": prompt}]},
        {"$set": {"lastUpdated": "2026-12-06T14:19:19Z"}},
        {"id": "m2", "type": "gemini", "content": answer, "thoughts": [], "model": "gemini-3.1-pro-preview"},
        {"$set": {"messages": [{"id": "m1", "type": "user", "content": [{"text": prompt}]},
                               {"id": "m2", "type": "gemini", "content": answer}]}},
    ]
    session.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    # The payload's session id does not decide: the file's own sessionId does (the same turn, stored once).
    res = _hook(vault, "pre-compact", {"session_id": "other", "cwd": "/w/shop", "transcript_path": str(session)},
                "gemini")
    assert res.returncode == 0 and res.stderr == ""
    stored = _turns(vault)
    assert len(stored) == 1 and stored[0]["user"] == question, stored
    assert "MEMVAULT" not in json.dumps(stored) and "hook_context" not in json.dumps(stored)
    health = json.loads((vault / ".memvault" / "health.json").read_text())
    assert health["capture"]["ok"] and health["capture"]["already"] == 1
