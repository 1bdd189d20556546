"""Real Claude Code / Codex / SillyTavern / ChatGPT / OpenAI log shapes, captured by real processes
(issue 8, item 4): rewinds, harness text in the user's slot, Codex event-only prompts and rollbacks,
assistant-only openings, per-message ids, and lines of unknown shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "formats"
MEMVAULT = [sys.executable, "-m", "memvault"]


def init(tmp_path: Path) -> Path:
    vault = tmp_path / "v"
    subprocess.run([*MEMVAULT, "init", str(vault)], check=True, capture_output=True)
    return vault


def capture(vault: Path, data: bytes, *extra: str) -> tuple[dict, str]:
    proc = subprocess.run([*MEMVAULT, "--vault", str(vault), "capture", "--json", *extra], input=data,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout), proc.stderr.decode()


def live(vault: Path) -> list[dict]:
    eps, revoked = [], set()
    for f in sorted((vault / "episodes").rglob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec.get("type") == "revoke":
                revoked.update(rec["ids"])
            else:
                eps.append(rec)
    return sorted((e for e in eps if e["id"] not in revoked), key=lambda e: (e["session"], e["turn"]))


def test_claude_code_follows_the_branch_to_the_newest_leaf_and_drops_harness_text(tmp_path):
    vault = init(tmp_path)
    res, _ = capture(vault, (DATA / "claude-code-rewind.jsonl").read_bytes())
    assert res["new"] == 3 and res["skipped_by_reason"]["rewound"] == 1
    eps = live(vault)
    assert [e["user"] for e in eps] == [
        "Which port should the harbor API listen on?",
        "Actually, write the config loader in Go instead.",
        "Good. Commit it as feat: config loader."]
    text = json.dumps(eps)
    assert "Rust" not in text and "src/config.rs" not in text  # the branch left by the rewind
    assert "teammate-message" not in text and "Another Claude session" not in text
    assert "42 lines written" not in text  # a toolUseResult line is the tool's, not the person's
    assert "the docs teammate updated the README" in eps[1]["assistant"]


def test_a_rewind_revokes_the_branch_captured_before_it(tmp_path):
    vault = init(tmp_path)
    lines = (DATA / "claude-code-rewind.jsonl").read_bytes().splitlines(keepends=True)
    before, _ = capture(vault, b"".join(lines[:7]))  # the log as it was before the rewind
    assert before["new"] == 2
    after, _ = capture(vault, b"".join(lines))
    assert (after["new"], after["revoked"]) == (2, 1)
    assert [e["user"][:10] for e in live(vault)] == ["Which port", "Actually, ", "Good. Comm"]


def test_codex_event_only_prompts_are_read_and_rolled_back_turns_dropped(tmp_path):
    vault = init(tmp_path)
    lines = (DATA / "codex-rollback.jsonl").read_bytes().splitlines(keepends=True)
    first, _ = capture(vault, b"".join(lines[:11]))  # before the rollback: both turns were there
    assert first["new"] == 2 and first["skipped_by_reason"].get("short", 0) == 0
    whole, _ = capture(vault, b"".join(lines))
    assert (whole["new"], whole["revoked"]) == (1, 1)
    eps = live(vault)
    assert [e["user"] for e in eps] == ["Rename the harbor CLI flag --port to --listen.",
                                        "Keep the alias until v2.0 and log a deprecation warning."]
    assert eps[1]["assistant"].startswith("The alias stays") and eps[1]["tools"] == 2


def test_an_assistant_opening_is_stored_marked_never_as_a_bare_empty_user(tmp_path):
    vault = init(tmp_path)
    capture(vault, (DATA / "sillytavern-en.jsonl").read_bytes())
    cc = [{"parentUuid": None, "isSidechain": False, "sessionId": "7d1e0c2b-0000-4a1b-9c3d-55aa66bb77cc",
           "type": "assistant", "uuid": "a-1", "timestamp": "2026-05-01T09:00:00Z",
           "message": {"role": "assistant", "content": [{"type": "text", "text": "Session resumed: 3 files open."}]}},
          {"parentUuid": "a-1", "isSidechain": False, "sessionId": "7d1e0c2b-0000-4a1b-9c3d-55aa66bb77cc",
           "type": "user", "uuid": "u-1", "timestamp": "2026-05-01T09:01:00Z",
           "message": {"role": "user", "content": "继续：把缓存的过期时间改成 10 分钟。"}}]
    capture(vault, "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in cc).encode())
    eps = live(vault)
    openings = [e for e in eps if e["user"] == ""]
    assert len(openings) == 1  # the Claude Code log's first line; a role-play greeting is no turn (issue 35)
    assert openings[0]["assistant"] == "Session resumed: 3 files open."
    assert all(e["source"].get("opening") is True and e["turn"] == 1 for e in openings)
    assert all(e["source"].get("opening") is None for e in eps if e["user"])


def test_openai_messages_keep_their_session_and_id_and_chatgpt_its_create_time(tmp_path):
    vault = init(tmp_path)
    doc = {"messages": [
        {"role": "user", "content": "Which region hosts the harbor database?", "session_id": "sess-a", "id": "m-1"},
        {"role": "assistant", "content": "eu-west-1, with a replica in eu-central-1.", "session_id": "sess-a",
         "id": "m-2"},
        {"role": "user", "content": "小说第三章的主角叫什么？", "session_id": "sess-b", "id": "m-3"},
        {"role": "assistant", "content": "叫林舟。", "session_id": "sess-b", "id": "m-4"}]}
    capture(vault, json.dumps(doc, ensure_ascii=False).encode())
    eps = live(vault)
    assert [(e["session"], e["turn"], e["source"]["ref"]) for e in eps] == [("sess-a", 1, "m-1"),
                                                                         ("sess-b", 1, "m-3")]
    conv = [{"id": "conv-1", "title": "t", "create_time": 1767258000.0, "current_node": "n2", "mapping": {
        "root": {"id": "root", "message": None, "parent": None, "children": ["n1"]},
        "n1": {"id": "n1", "parent": "root", "children": ["n2"], "message": {
            "id": "n1", "author": {"role": "user"}, "create_time": None,
            "content": {"content_type": "text", "parts": ["When is the harbor beta?"]}}},
        "n2": {"id": "n2", "parent": "n1", "children": [], "message": {
            "id": "n2", "author": {"role": "assistant"}, "create_time": None, "recipient": "all",
            "content": {"content_type": "text", "parts": ["April 29, 2026."]}}}}}]
    capture(vault, json.dumps(conv).encode())
    (ep,) = [e for e in live(vault) if e["session"] == "conv-1"]
    assert ep["at"] == "2026-01-01T09:00:00Z"


def test_a_json_line_of_unknown_shape_is_warned_about_by_input_and_line(tmp_path):
    vault = init(tmp_path)
    lines = (DATA / "claude-code-rewind.jsonl").read_bytes().splitlines(keepends=True)
    odd = json.dumps({"type": "mystery-record", "payload": "sk-" + "should-not-echo"}).encode()
    res, err = capture(vault, b"".join(lines[:3]) + odd + b"\n" + b"".join(lines[3:]))
    assert "<stdin>:4: unexpected shape" in err and "should-not-echo" not in err
    assert res["new"] == 3
    newer = json.dumps({"type": "some-future-record", "sessionId": "x", "uuid": "z"}).encode()
    res, err = capture(vault, b"".join(lines[:3]) + newer + b"\n" + b"".join(lines[3:]))
    assert err == ""  # a newer Claude Code record still has its session: not warned about
    codex = (DATA / "codex-rollback.jsonl").read_bytes().splitlines(keepends=True)
    res, err = capture(vault, codex[0] + b'{"what": "is this"}\n' + b"".join(codex[1:]))
    assert "<stdin>:2: unexpected shape" in err
    st = (DATA / "sillytavern-en.jsonl").read_bytes().splitlines(keepends=True)
    res, err = capture(vault, st[0] + b'{"note": 1}\n' + b"".join(st[1:]))
    assert "<stdin>:2: unexpected shape" in err
