"""The sources people use now (issue 35, item 6): Cursor agent transcripts, Gemini CLI and Antigravity CLI
sessions, the Claude.ai data export and OpenCode session exports. Each fixture in tests/data/formats/ is text
written for these tests in the shape its tool writes, taken from where that shape is published:

- cursor-transcript.jsonl: Cursor's `~/.cursor/projects/<workspace>/agent-transcripts/<id>/<id>.jsonl`, one
  `{"role", "message": {"content": [...]}}` per line, the prompt inside `<user_query>` (Cursor documents the file
  as the hooks' `transcript_path`; the line shape as public readers parse it, e.g. AgentSeal/codeburn
  docs/providers/cursor-agent.md and entireio/cli's cursor agent).
- gemini-session.jsonl, gemini-legacy.json: google-gemini/gemini-cli,
  packages/core/src/services/chatRecordingTypes.ts and chatRecordingService.ts (metadata line, message records
  rewritten in full on update, `$set`, `$rewindTo`; the older pretty-printed `session-*.json`).
- antigravity-transcript.jsonl: Antigravity CLI's `brain/<id>/.system_generated/logs/transcript_full.jsonl`
  step records (`type`, `source`, `status`, `created_at`, `content`; `USER_INPUT` for the person), as
  agentgrep documents them (agentgrep.org/backends/antigravity-cli, tony/agentgrep adapters/antigravity_cli.py).
- claude-ai-conversations.json: the Claude.ai export's conversations.json (`uuid`, `name`, `chat_messages` with
  `sender` human/assistant, `content` blocks, `parent_message_uuid`), as described by Anthropic's export page and
  public readers (Sinity/polylogue docs/providers/claude-ai.md).
- opencode-export.json: anomalyco/opencode, packages/opencode/src/cli/cmd/export.ts (`{info, messages: [{info,
  parts}], todos}`, pretty-printed).

The tails (`tail -n 2..6`, both orders) of every one of them run in test_capture_tails.py with the older logs.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from memvault.capture.formats import sniff_format
from memvault.capture.service import capture
from memvault.vault.store import Vault

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"
SOURCES = {
    "cursor-transcript.jsonl": "cursor", "gemini-session.jsonl": "gemini", "gemini-legacy.json": "gemini",
    "antigravity-transcript.jsonl": "antigravity", "claude-ai-conversations.json": "claude-ai",
    "opencode-export.json": "opencode",
}


def _capture(vault: Path, data: bytes, name: str = "<stdin>", **kw):
    return capture(Vault.open(vault, {}), [(name, io.BytesIO(data))], **kw)


def _episodes(vault: Path) -> list[dict]:
    lines = [json.loads(line) for f in (vault / "episodes").rglob("*.jsonl")
             for line in f.read_text(encoding="utf-8").splitlines()]
    return sorted((ep for ep in lines if ep.get("type") != "revoke"), key=lambda e: (e["session"], e["turn"]))


def _files(vault: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file() and ".memvault" not in p.parts}


@pytest.mark.parametrize("name,fmt", sorted(SOURCES.items()))
def test_each_source_is_sniffed_and_captured_once(vault, name, fmt):
    raw = (DATA / name).read_bytes()
    assert sniff_format(raw[:64 * 1024]) == fmt
    first = _capture(vault, raw, str(DATA / name))
    assert first.formats == {str(DATA / name): fmt} and first.new > 0 and first.problems == []
    before = _files(vault)
    again = _capture(vault, raw, str(DATA / name))
    assert again.new == 0 and again.revoked == 0 and again.already == first.new
    assert _files(vault) == before
    # The same log piped in (no file name to take a session from) joins what the file stored.
    piped = _capture(vault, raw)
    assert piped.new == 0 and piped.revoked == 0
    assert all(ep["source"]["kind"] == fmt for ep in _episodes(vault))


def test_cursor_reads_the_query_not_the_context_cursor_attached(vault):
    path = DATA / "cursor-transcript.jsonl"
    result = _capture(vault, path.read_bytes(), str(path))
    eps = _episodes(vault)
    assert result.new == 3 and [ep["session"] for ep in eps] == ["cursor-transcript"] * 3
    assert eps[0]["user"] == ("The tide chart page renders twice on load. Can you find out why the effect "
                              "fires two times?")
    assert "Workspace Path" not in json.dumps(eps) and "attached_files" not in json.dumps(eps)
    assert eps[0]["assistant"].startswith("I'll look at the chart component") and eps[0]["tools"] == 2
    assert "StrictMode" in eps[0]["assistant"]
    assert eps[1]["user"].startswith("Use station.id then.") and eps[1]["tools"] == 1
    assert eps[2]["user"] == "把刚才的改动总结成一句提交说明，中文就行。" and eps[2]["assistant"].startswith("提交说明")
    assert eps[0]["source"]["ref"] == f"{path}:1"


def test_cursor_context_only_message_opens_no_turn(vault):
    def line(role: str, text: str) -> str:
        return json.dumps({"role": role, "message": {"content": [{"type": "text", "text": text}]}}) + "\n"

    data = (line("user", "<user_info>\nOS: linux\n</user_info>")
            + line("user", "<user_query>\nWhy is the build red on CI?\n</user_query>")
            + line("assistant", "The lockfile is stale."))
    result = _capture(vault, data.encode())
    assert result.new == 1 and result.skipped["harness"] == 1
    assert [ep["user"] for ep in _episodes(vault)] == ["Why is the build red on CI?"]


def test_gemini_reads_the_last_version_of_each_message_and_drops_a_rewind(vault):
    path = DATA / "gemini-session.jsonl"
    result = _capture(vault, path.read_bytes(), str(path))
    eps = _episodes(vault)
    assert result.new == 3 and result.skipped["rewound"] == 1 and result.skipped["system"] == 1
    assert {ep["session"] for ep in eps} == {"5c1e7a92-40b3-4f7e-9d21-b8e0c4a61f37"}
    assert [ep["at"] for ep in eps] == ["2026-04-11T08:02:31Z", "2026-04-11T08:04:12Z", "2026-04-11T08:05:30Z"]
    assert eps[0]["user"].startswith("我们的备份脚本") and eps[0]["assistant"].startswith("通常不要紧")
    assert eps[0]["assistant"].count("通常不要紧") == 1  # written twice (tokens arrived later), stored once
    assert "忽略退出码 24" not in json.dumps(eps, ensure_ascii=False)  # the rewound prompt
    assert eps[1]["user"].startswith("先别改脚本") and eps[2]["user"].startswith("Exclude /srv/data/tmp")


def test_gemini_session_that_grew_adds_only_its_new_turns(vault):
    path = DATA / "gemini-session.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    first = _capture(vault, b"".join(lines[:12]), str(path))
    grown = _capture(vault, path.read_bytes(), str(path))
    assert first.new == 2 and grown.new == 1 and grown.revoked == 0 and grown.already == 2


def test_gemini_older_document_and_one_line_record(vault):
    doc = json.loads((DATA / "gemini-legacy.json").read_text(encoding="utf-8"))
    result = _capture(vault, (DATA / "gemini-legacy.json").read_bytes(), "session-2025-11-20T19-40-0d9e3b57.json")
    eps = _episodes(vault)
    assert result.new == 2 and [ep["tools"] for ep in eps] == [0, 1]
    assert eps[0]["assistant"].startswith("Split it") and eps[0]["at"] == "2025-11-20T19:40:15Z"
    # The same record written on one line is the same session: nothing new.
    assert _capture(vault, json.dumps(doc).encode() + b"\n").new == 0


def test_gemini_subagent_session_needs_sidechains(vault):
    meta = {"sessionId": "sub-1", "projectHash": "ab" * 32, "startTime": "2026-04-11T08:00:00Z", "kind": "subagent"}
    rows = [meta,
            {"id": "s1", "timestamp": "2026-04-11T08:00:01Z", "type": "user", "content": "Scan the repo for TODOs."},
            {"id": "s2", "timestamp": "2026-04-11T08:00:05Z", "type": "gemini", "content": "Found 12 TODO notes."}]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    assert _capture(vault, data).new == 0
    (vault / "memvault.yaml").write_text((vault / "memvault.yaml").read_text(encoding="utf-8")
                                         .replace("sidechains: false", "sidechains: true"), encoding="utf-8")
    assert _capture(vault, data).new == 1


def test_antigravity_steps_are_tools_and_the_brain_folder_names_the_session(vault):
    path = DATA / "antigravity-transcript.jsonl"
    name = ("/home/ana/.gemini/antigravity-cli/brain/3b4a1d20-3968-4ed2-90b3-00eea3060b02/.system_generated/logs/"
            "transcript_full.jsonl")
    result = _capture(vault, path.read_bytes(), name)
    eps = _episodes(vault)
    assert result.new == 3 and {ep["session"] for ep in eps} == {"3b4a1d20-3968-4ed2-90b3-00eea3060b02"}
    assert [ep["tools"] for ep in eps] == [2, 1, 1]
    assert eps[0]["assistant"].startswith("I'll add a /uptime route") and "time.monotonic()" in eps[0]["assistant"]
    assert "curl -s" not in json.dumps(eps)  # a command's output is a tool step, never stored
    assert eps[1]["user"].startswith("顺便加一个 /healthz")


def test_claude_ai_export_follows_the_branch_to_the_newest_message(vault):
    path = DATA / "claude-ai-conversations.json"
    result = _capture(vault, path.read_bytes(), str(path))
    eps = _episodes(vault)
    assert result.new == 4 and result.skipped["rewound"] == 1
    by_session = {}
    for ep in eps:
        by_session.setdefault(ep["session"], []).append(ep)
    hike = by_session["9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"]
    assert [ep["user"][:8] for ep in hike] == ["周六想去香山附近", "有没有人少一点、"]
    assert "周末香山都挤" not in json.dumps(eps, ensure_ascii=False)
    bread = by_session["e4c1b2a0-7d6f-4e3a-9b8c-1a2b3c4d5e6f"]
    assert bread[0]["at"] == "2026-02-14T09:12:04Z" and "Stiffer ratio" not in bread[0]["assistant"]


def test_opencode_export_keeps_typed_text_and_counts_tools(vault):
    path = DATA / "opencode-export.json"
    result = _capture(vault, path.read_bytes(), str(path))
    eps = _episodes(vault)
    assert result.new == 3 and {ep["project"] for ep in eps} == {"kite-sync"}
    assert eps[0]["user"].startswith("The sync client gives up") and "Called the Read tool" not in eps[0]["user"]
    assert [ep["tools"] for ep in eps] == [1, 1, 0] and eps[0]["at"] == "2026-03-02T06:00:01Z"
    assert "Look at request()" not in json.dumps(eps)  # reasoning is not what was said
    assert eps[2]["assistant"].startswith("好了：新增 maxRetries")


def test_sniffing_keeps_the_new_shapes_apart_from_the_old():
    cursor = b'{"role":"user","message":{"content":[{"type":"text","text":"<user_query>hi</user_query>"}]}}\n'
    assert sniff_format(cursor) == "cursor"
    assert sniff_format(b'{"role":"user","content":"hi"}\n') == "jsonl"
    meta = b'{"sessionId":"x","projectHash":"y","startTime":"2026-01-01T00:00:00Z"}\n'
    assert sniff_format(meta) == "gemini"  # a sessionId alone is Claude Code's
    assert sniff_format(b'{"type":"user","sessionId":"s","message":{"role":"user","content":"a"}}\n') == "claude-code"
    assert sniff_format(b'{"$rewindTo":"m1"}\n{"id":"m2","timestamp":"t","type":"user","content":"a"}\n') == "gemini"
    assert sniff_format((DATA / "opencode-export.json").read_bytes()[:400]) == "opencode"  # not openai
    assert sniff_format((DATA / "claude-ai-conversations.json").read_bytes()[:600]) == "claude-ai"
    assert sniff_format((DATA / "gemini-legacy.json").read_bytes()[:300]) == "gemini"


def test_gemini_rewind_after_capture_revokes_the_rewound_turn(vault):
    path = DATA / "gemini-session.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if b"$rewindTo" in ln)
    before = _capture(vault, b"".join(lines[:cut]), str(path))
    after = _capture(vault, path.read_bytes(), str(path))
    assert before.new == 2 and after.revoked == 1 and after.new == 2
    live = [ep["user"] for ep in _episodes(vault) if ep["id"] not in _revoked(vault)]
    assert not any("忽略退出码" in u for u in live) and len(live) == 3


def _revoked(vault: Path) -> set[str]:
    return {i for f in (vault / "episodes").rglob("*.jsonl") for line in f.read_text(encoding="utf-8").splitlines()
            if (rec := json.loads(line)).get("type") == "revoke" for i in rec["ids"]}
