"""Input formats: every sample log in tests/data/formats read back to exact messages, plus bad input."""

from __future__ import annotations

import ast
import io
import json
import tracemalloc
from pathlib import Path

import pytest

from memvault.capture import formats
from memvault.errors import InputError
from memvault.capture.formats import FORMATS, iter_messages, normalize_ts, sniff_format
from memvault.model import InputProblem, Message

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def read(path: Path, fmt: str | None = None, **kw) -> list:
    if fmt is None:
        fmt = sniff_format(path.read_bytes()[: 64 * 1024])
    with path.open("rb") as f:
        return list(iter_messages(f, fmt, str(path), **kw))


def read_bytes(data: bytes, fmt: str, name: str = "<stdin>", **kw) -> list:
    return list(iter_messages(io.BytesIO(data), fmt, name, **kw))


def msgs(items: list) -> list[Message]:
    return [i for i in items if isinstance(i, Message)]


def problems(items: list) -> list[InputProblem]:
    return [i for i in items if isinstance(i, InputProblem)]


# ------------------------------------------------------------------------------------------------ sniffing

SAMPLES = {
    "claude-code-en.jsonl": "claude-code", "claude-code-zh.jsonl": "claude-code",
    "claude-code-rewind.jsonl": "claude-code", "codex-rollback.jsonl": "codex",
    "chatgpt-conversations.json": "chatgpt",
    "codex-en.jsonl": "codex", "codex-zh.jsonl": "codex",
    "jsonl-en.jsonl": "jsonl", "jsonl-zh.jsonl": "jsonl",
    "openai-en.json": "openai", "openai-zh.json": "openai",
    "sillytavern-en.jsonl": "sillytavern", "sillytavern-zh.jsonl": "sillytavern",
    "text-en.txt": "text", "text-zh.txt": "text",
    "cursor-transcript.jsonl": "cursor", "gemini-session.jsonl": "gemini", "gemini-legacy.json": "gemini",
    "antigravity-transcript.jsonl": "antigravity", "claude-ai-conversations.json": "claude-ai",
    "opencode-export.json": "opencode",
}


@pytest.mark.parametrize("name,fmt", sorted(SAMPLES.items()))
def test_sniff_every_sample(name, fmt):
    assert sniff_format((DATA / name).read_bytes()[: 64 * 1024]) == fmt


def test_every_format_has_samples():
    assert set(SAMPLES.values()) == set(FORMATS)
    assert sorted(SAMPLES) == sorted(p.name for p in DATA.iterdir())


@pytest.mark.parametrize("head", [
    b"", b"  \n\n", b"hello there\nthis is just prose\n", b'{"foo": 1}\n{"bar": 2}\n', b"[1, 2, 3]",
    b"\x00\x01\x02\xff\xfe binary", b"name,age\nalice,30\n",
])
def test_sniff_refuses_what_it_cannot_tell(head):
    with pytest.raises(InputError) as e:
        sniff_format(head)
    assert "unknown format" in e.value.message


def test_sniff_documents_cut_at_the_head():
    # A big export does not parse from its first 64 KiB; the keys still tell.
    assert sniff_format((DATA / "chatgpt-conversations.json").read_bytes()[:3000]) == "chatgpt"
    assert sniff_format((DATA / "openai-en.json").read_bytes()[:60]) == "openai"
    cut = b'{\n  "model": "x",\n  "messages": [\n    {"role": "user", "content": "hi'
    assert sniff_format(cut) == "openai"
    assert sniff_format(b'[\n  {"role": "user", "content": "hi"},\n  {"role": "assistant"') == "openai"


def test_sniff_ignores_keys_quoted_inside_text():
    line = {"type": "user", "sessionId": "s1", "message": {"role": "user",
            "content": 'my export has {"mapping": {}, "current_node": "x"} and "messages": ['}}
    assert sniff_format(json.dumps(line).encode() + b"\n") == "claude-code"


def test_sniff_line_formats_by_first_decisive_line():
    assert sniff_format(b'{"type":"summary","summary":"x","leafUuid":"u"}\n{"type":"user"') == "claude-code"
    assert sniff_format(b'{"name":"A","is_user":true,"mes":"hi","send_date":1}\n') == "sillytavern"
    assert sniff_format(b'{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n') == "jsonl"
    assert sniff_format(b'{"messages":[{"role":"user","content":"a"}]}\n{"messages":[]}\n') == "openai"
    assert sniff_format("用户：你好\n助手：你好！".encode()) == "text"
    assert sniff_format(b"\xef\xbb\xbfHuman: hi\n\nAI: hello\n") == "text"


# ------------------------------------------------------------------------------------------------ claude code


def test_claude_code_en():
    items = read(DATA / "claude-code-en.jsonl")
    assert problems(items) == []
    ms = msgs(items)
    got = [(m.role, m.harness, m.tools) for m in ms]
    assert got == [
        ("user", True, 0), ("user", True, 0), ("user", True, 0),  # caveat (isMeta), /model, its stdout
        ("user", False, 0),
        ("assistant", False, 0), ("assistant", False, 1),  # one reply split over two lines (same message.id)
        ("user", True, 1),  # tool_result only
        ("assistant", False, 0),
        ("user", False, 0),  # "ok"
        ("assistant", False, 1), ("user", True, 1),
        ("user", False, 0), ("assistant", False, 0),
        ("user", False, 0), ("assistant", False, 0),
    ]
    first = ms[3]
    assert first.text.startswith("<system-reminder>\nAs you answer")
    assert first.text.endswith("Can you check how the workers write today?")
    assert first.ref == "eedd767c-2078-5b8a-a7c3-07fee2d39c3c"
    assert first.ts == "2026-03-02T09:14:24Z"
    assert {m.session for m in ms} == {"5f0c2a9e-7b1d-4c3e-9a60-2f8d4e1b7c55"}
    assert {m.project for m in ms} == {"tidepool"}
    assert ms[4].text == "Let me look at how the sync workers write today."  # thinking block dropped
    assert ms[5].text == "" and ms[6].text == ""  # tool input and output are never text
    assert ms[8].text == "ok"
    assert ms[13].text.startswith("Change of plan: keep SQLite in WAL mode")
    assert ms[14].ref == "ff181590-d20f-58ea-936a-ad1fcd523583" and ms[14].ts == "2026-03-02T09:20:58Z"
    everything = "\n".join(m.text for m in ms)
    assert "The user wants to compare" not in everything
    assert "tidepool/worker.py:14" not in everything  # tool_result content
    assert "Find every place" not in everything  # sidechain
    assert "Conversation compacted" not in everything  # system line


def test_claude_code_sidechains_on_request():
    ms = msgs(read(DATA / "claude-code-en.jsonl", sidechains=True))
    assert len(ms) == 17
    side = [m for m in ms if m.text.startswith(("Find every place", "Found 3 call sites"))]
    assert [m.role for m in side] == ["user", "assistant"]
    assert ms.index(side[0]) == 11  # in input order, right after the tool result


def test_claude_code_zh():
    ms = msgs(read(DATA / "claude-code-zh.jsonl"))
    assert [(m.role, m.harness, m.tools) for m in ms] == [
        ("user", True, 0), ("user", True, 0), ("user", False, 0),
        ("assistant", False, 1), ("user", True, 1), ("assistant", False, 0),
        ("user", False, 0), ("assistant", False, 1), ("user", True, 1),
        ("user", False, 0), ("assistant", False, 0), ("user", False, 0), ("assistant", False, 0),
    ]
    assert ms[2].text == "小账本的后端用 FastAPI 还是 Django？我更想要轻一点的，管理后台可以以后再说。"
    assert ms[3].text == "我先看一下现在的目录结构。"
    assert ms[6].text.endswith("好，就用 FastAPI。另外代码注释统一用英文。")
    assert ms[9].text == "继续" and ms[9].ts == "2026-01-19T02:07:45Z"
    assert {m.project for m in ms} == {"ledger-mini"}
    assert {m.session for m in ms} == {"c3a91e47-2b6d-4f08-8e15-90d7a4b2f6e3"}


def test_claude_code_harness_markers_and_fallback_ref():
    def user(content, **extra):
        return {"type": "user", **extra, "message": {"role": "user", "content": content}}

    lines = [
        user("<local-command-stderr>boom</local-command-stderr>"),
        user("[Request interrupted by user for tool use]"),
        user("This session is being continued", isCompactSummary=True),
        user([{"type": "tool_result", "tool_use_id": "t", "content": "x"},
              {"type": "text", "text": "also look at this"}]),
        user("真正的问题", cwd="C:\\Users\\wei\\src\\记账本\\"),
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "redacted_thinking", "data": "x"}, {"type": "image", "source": {}}]}},
    ]
    data = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode()
    ms = msgs(read_bytes(data, "claude-code", "s.jsonl"))
    assert [m.harness for m in ms] == [True, True, True, False, False, False]
    assert ms[3].text == "also look at this" and ms[3].tools == 1  # a person's words beside a tool result
    assert ms[4].project == "记账本" and ms[4].ref == "s.jsonl:5" and ms[4].session is None
    assert ms[5].text == "[image]"


def test_claude_code_unexpected_shape_is_reported_and_skipped():
    data = b'{"type":"user","message":"just a string"}\n{"type":"user","message":{"content":42}}\n' \
           b'{"type":"user","message":{"role":"user","content":"fine"}}\n'
    items = read_bytes(data, "claude-code", "cc.jsonl")
    assert [str(p) for p in problems(items)] == [
        "cc.jsonl:1: unexpected shape: message is not an object",
        "cc.jsonl:2: unexpected shape: content is neither text nor a list of parts",
    ]
    assert [m.text for m in msgs(items)] == ["fine"]


# ------------------------------------------------------------------------------------------------ codex


def test_codex_en():
    path = DATA / "codex-en.jsonl"
    items = read(path)
    assert problems(items) == []
    ms = msgs(items)
    assert [(m.role, m.harness, m.tools) for m in ms] == [
        ("system", False, 0),  # developer: permissions instructions
        ("user", True, 0), ("user", True, 0),  # AGENTS.md instructions, environment context
        ("user", False, 0),
        ("assistant", False, 0), ("assistant", False, 1), ("tool", False, 1), ("assistant", False, 0),
        ("user", False, 0),
        ("assistant", False, 1), ("tool", False, 1),  # apply_patch
        ("assistant", False, 1), ("tool", False, 1),  # pytest
        ("assistant", False, 0),
        ("user", False, 0), ("assistant", False, 1), ("tool", False, 1),
        ("user", True, 0),  # <turn_aborted>
        ("user", False, 0), ("assistant", False, 0),
    ]
    q1 = ms[3]
    assert q1.text.startswith("The sync worker retries forever")
    assert q1.text.endswith("what backoff it uses today?")
    assert q1.ref == f"{path}:6" and q1.ts == "2026-03-05T14:02:11Z"
    assert ms[4].text == "I'll look for the retry loop in the sync workers first."
    assert ms[7].text.startswith("The loop is in `tidepool/sync.py`") and ms[7].ts == "2026-03-05T14:02:19Z"
    assert ms[17].text.startswith("<turn_aborted>")
    assert ms[19].text.startswith("Understood. I'll route `SyncGaveUp`") and ms[19].ref == f"{path}:39"
    assert {m.session for m in ms} == {"019cbd2e-5a41-7c02-9f3e-6b1d0c8a4e27"}
    assert {m.project for m in ms} == {"tidepool"}
    everything = "\n".join(m.text for m in ms)
    for said_once in ("The sync worker retries forever", "Add exponential backoff", "The loop is in",
                      "Never mind staging"):
        assert everything.count(said_once) == 1, said_once  # event_msg copies are not read again
    assert "Locating the retry loop" not in everything  # reasoning, and its agent_reasoning event
    assert "tidepool/sync.py:41" not in everything  # tool output
    assert "*** Begin Patch" not in everything and "41 passed" not in everything
    assert all(not m.text for m in ms if m.tools)


def test_codex_zh():
    ms = msgs(read(DATA / "codex-zh.jsonl"))
    assert [(m.role, m.harness, m.tools) for m in ms] == [
        ("user", True, 0), ("user", True, 0),  # <user_instructions>, environment context
        ("user", False, 0), ("assistant", False, 0), ("assistant", False, 1), ("tool", False, 1),
        ("assistant", False, 0),
        ("user", False, 0), ("assistant", False, 1), ("tool", False, 1), ("assistant", False, 0),
        ("user", False, 0), ("assistant", False, 1), ("tool", False, 1), ("assistant", False, 0),
    ]
    assert ms[2].text == "小账本的导出功能现在只有 CSV。我想加一个按月导出的 Excel，用 openpyxl 还是 xlsxwriter？"
    assert ms[7].text == "好，就用 xlsxwriter。金额列统一保留两位小数，表头加粗。"
    assert ms[11].text == "继续" and ms[11].ts == "2026-01-20T03:20:15Z"
    assert [m.text for m in ms if m.role == "user" and not m.harness] == [ms[2].text, ms[7].text, "继续"]
    everything = "\n".join(m.text for m in ms)
    assert "用户在给小账本加按月导出" not in everything  # the compaction summary was never said
    assert "查找导出代码" not in everything and "ledger/export.py:12" not in everything
    assert {m.project for m in ms} == {"ledger-mini"}
    assert {m.session for m in ms} == {"019b7a10-c3d2-7e45-8a19-2f6e0b9d1c84"}


def _codex_older_layout() -> bytes:
    # Earlier Codex CLI versions, before the {"timestamp", "type", "payload"} envelope: a bare session header,
    # then bare Responses-API items and {"record_type": "state"} markers, none with a timestamp or a cwd.
    env = "<environment_context>\n  <cwd>C:\\Users\\wei\\src\\记账本</cwd>\n</environment_context>"
    lines = [
        {"id": "5c1e0a2b-93d4-4f6e-8a17-0b2c3d4e5f60", "timestamp": "2026-02-02T08:00:00.000Z",
         "instructions": None, "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": env}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "数据库迁移用 Alembic 吗？"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "**思考迁移工具**"}]},
        {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{\"command\":[\"ls\"]}",
         "call_id": "call_1"},
        {"type": "function_call_output", "call_id": "call_1", "output": "{\"output\":\"alembic.ini\\n\"}"},
        {"record_type": "state"},
        {"type": "message", "id": "msg_9", "role": "assistant",
         "content": [{"type": "output_text", "text": "是的，仓库里已经有 alembic.ini。"}]},
    ]
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode()


def test_codex_older_layout():
    data = _codex_older_layout()
    assert sniff_format(data) == "codex"
    items = read_bytes(data, "codex", "rollout-2026-02-02T08-00-00-5c1e.jsonl")
    assert problems(items) == []
    ms = msgs(items)
    assert [(m.role, m.harness, m.tools, m.ref) for m in ms] == [
        ("user", True, 0, "rollout-2026-02-02T08-00-00-5c1e.jsonl:3"),
        ("user", False, 0, "rollout-2026-02-02T08-00-00-5c1e.jsonl:4"),
        ("assistant", False, 1, "fc_1"),
        ("tool", False, 1, "rollout-2026-02-02T08-00-00-5c1e.jsonl:7"),
        ("assistant", False, 0, "msg_9"),
    ]
    assert ms[1].text == "数据库迁移用 Alembic 吗？" and ms[4].text == "是的，仓库里已经有 alembic.ini。"
    assert {m.session for m in ms} == {"5c1e0a2b-93d4-4f6e-8a17-0b2c3d4e5f60"}
    assert {m.project for m in ms} == {"记账本"}  # from the environment context's <cwd>
    assert all(m.ts is None for m in ms)
    assert "思考迁移工具" not in "".join(m.text for m in ms)


def test_codex_harness_markers_and_bad_lines():
    def user(text, ts="2026-02-03T01:02:03Z"):
        part = {"type": "input_text", "text": text}
        return {"timestamp": ts, "type": "response_item",
                "payload": {"type": "message", "role": "user", "content": [part]}}

    lines = [
        {"timestamp": "2026-02-03T01:00:00Z", "type": "turn_context", "payload": {"cwd": "/srv/app/"}},
        user("<user_shell_command>\n<command>git status</command>\n</user_shell_command>"),
        user("<skill>\n<name>pdf</name>\n<path>skills/pdf/SKILL.md</path>\nbody\n</skill>"),
        user("  <environment_context>\n  <cwd>/elsewhere</cwd>\n</environment_context>"),
        user("Why does <environment_context> show up in my prompt?"),
        {"timestamp": "2026-02-03T01:02:04Z", "type": "response_item", "payload": "not an object"},
        {"timestamp": "2026-02-03T01:02:05Z", "type": "response_item",
         "payload": {"type": "message", "role": "wizard", "content": []}},
        {"timestamp": "2026-02-03T01:02:06Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": "sk-live-DO-NOT-ECHO-4242"}},
        {"timestamp": "2026-02-03T01:02:07Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": 42}},
        {"timestamp": "2026-02-03T01:02:08Z", "type": "response_item", "payload": {"type": "web_search_call",
                                                                                  "status": "completed"}},
        {"timestamp": "2026-02-03T01:02:09Z", "type": "response_item", "payload": {"type": "ghost_snapshot"}},
        {"timestamp": "2026-02-03T01:02:10Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "only an event: read as the prompt"}},
    ]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    assert sniff_format(data) == "codex"
    items = read_bytes(data, "codex", "r.jsonl")
    assert [str(p) for p in problems(items)] == [
        "r.jsonl:6: unexpected shape: payload is not an object",
        "r.jsonl:7: unexpected shape: missing or unknown role",
        "r.jsonl:9: unexpected shape: content is neither text nor a list of parts",
    ]
    ms = msgs(items)
    assert [(m.role, m.harness, m.tools) for m in ms] == [
        ("user", True, 0), ("user", True, 0), ("user", True, 0), ("user", False, 0), ("user", False, 0),
        ("assistant", False, 1), ("user", False, 0)]
    assert ms[-1].text == "only an event: read as the prompt"
    assert ms[3].text.startswith("Why does") and ms[3].ts == "2026-02-03T01:02:03Z"
    assert {m.project for m in ms} == {"app"}  # turn_context's cwd when there is no session_meta
    assert {m.session for m in ms} == {None}


@pytest.mark.parametrize("head,fmt", [
    (b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s"}}\n', "codex"),
    (b'{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"user_message"}}\n', "codex"),
    (b'{"id":"s","timestamp":"2026-01-01T00:00:00Z"}\n{"type":"message","role":"user"}\n', "codex"),
    (b'{"record_type":"state"}\n{"type":"message","role":"user","content":[]}\n', "codex"),
    (b'{"type":"reasoning","id":"rs_1","summary":[]}\n', "codex"),
    # Look-alikes that stay where they were: a role line is jsonl even with Responses-API parts, a
    # typed line without a payload object is not an envelope, and ids with other keys are not a header.
    (b'{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}\n', "jsonl"),
    (b'{"type":"event_msg","payload":"x"}\n{"role":"user","content":"hi"}\n', "jsonl"),
    (b'{"id":"m1","timestamp":"2026-01-01T00:00:00Z","role":"user","content":"hi"}\n', "jsonl"),
    (b'{"type":"user","sessionId":"s","message":{"role":"user"},"payload":{}}\n', "claude-code"),
])
def test_sniff_codex_and_its_look_alikes(head, fmt):
    assert sniff_format(head) == fmt


@pytest.mark.parametrize("head", [
    b'{"id":"m1","timestamp":"2026-01-01T00:00:00Z","text":"hello"}\n',
    b'{"record_type":"state","value":1,"type":"x"}\n',
])
def test_sniff_codex_needs_its_own_shapes(head):
    with pytest.raises(InputError):
        sniff_format(head)


# ------------------------------------------------------------------------------------------------ chatgpt


def test_chatgpt_follows_current_branch():
    items = read(DATA / "chatgpt-conversations.json")
    assert problems(items) == []
    ms = msgs(items)
    en = [m for m in ms if m.session == "6801c0de-3f2a-8007-9b1e-4d6a2c9f0e11"]
    zh = [m for m in ms if m.session == "67a1b2c3-0d4e-8005-a6f7-1b2c3d4e5f60"]
    assert len(en) + len(zh) == len(ms) and ms[: len(en)] == en  # conversations in file order
    assert [(m.role, m.tools) for m in en] == [
        ("user", 0), ("assistant", 0), ("user", 0), ("assistant", 0), ("user", 0),
        ("assistant", 1), ("tool", 1), ("assistant", 0),
    ]
    assert en[1].text.startswith("Start with SQLite FTS5")
    assert en[2].text == "ok"
    assert en[4].text == ("[image]\nWhat about Chinese? Half my notes are in Chinese. "
                          "Here is my current schema.")
    assert en[5].text == "" and en[6].text == ""  # python call and its output are counted only
    assert en[0].ts == "2026-02-09T16:20:48Z" and en[7].ts == "2026-02-09T16:25:05Z"
    assert en[0].ref == "c03a866a-d000-512b-ae47-15a9e34fb8b5"
    text = "\n".join(m.text for m in ms)
    assert "Meilisearch gives you typo tolerance" not in text  # regenerated-away answer
    assert "FTS5's unicode61 tokenizer" not in text  # answer to the edited-away question
    assert "Be concise" not in text and "backend developer" not in text  # hidden custom instructions
    assert [m.text for m in zh if m.role == "user"] == [
        "我们的小程序后端要部署在哪里？阿里云函数计算还是一台轻量应用服务器？日活大概两千。",
        "继续",
        "好，就用轻量应用服务器。下周一（1 月 12 日）之前上线。",
    ]
    assert "函数计算按量计费" not in text
    assert zh[1].text.startswith("日活两千的话") and zh[1].ts == "2026-01-06T13:03:42Z"
    assert all(m.project is None for m in ms)


def _conv(mapping, current="c", **extra):
    return {"id": "conv-1", "title": "t", "mapping": mapping, "current_node": current, **extra}


def _node(nid, parent, role, text, children=(), t=1767225600.0):
    msg = None if role is None else {"id": nid, "author": {"role": role}, "create_time": t,
                                     "content": {"content_type": "text", "parts": [text]}}
    return {"id": nid, "message": msg, "parent": parent, "children": list(children)}


def test_chatgpt_single_conversation_object_and_missing_current_node():
    mapping = {"r": _node("r", None, None, ""), "a": _node("a", "r", "user", "问题", ["b1", "b2"]),
               "b1": _node("b1", "a", "assistant", "old answer"),
               "b2": _node("b2", "a", "assistant", "new answer", t=1767225660.5)}
    one = read_bytes(json.dumps(_conv(mapping, current="b1")).encode(), "chatgpt")
    assert [m.text for m in msgs(one)] == ["问题", "old answer"]
    assert msgs(one)[1].ts == "2026-01-01T00:00:00Z"
    newest = read_bytes(json.dumps(_conv(mapping, current=None)).encode(), "chatgpt")
    assert [(m.text, m.ts) for m in msgs(newest)] == [("问题", "2026-01-01T00:00:00Z"),
                                                      ("new answer", "2026-01-01T00:01:00Z")]


def test_chatgpt_broken_tree_is_one_problem_and_other_conversations_survive():
    loop = {"a": _node("a", "b", "user", "x"), "b": _node("b", "a", "assistant", "y")}
    dangling = {"c": _node("c", "gone", "user", "z")}
    good = {"r": _node("r", None, None, ""), "c": _node("c", "r", "user", "still here")}
    doc = [_conv(loop, current="a"), _conv(dangling), {"title": "no mapping"}, _conv(good)]
    items = read_bytes(json.dumps(doc).encode(), "chatgpt", "conversations.json")
    assert [str(p) for p in problems(items)] == [
        "conversations.json: conversation 1: broken message tree",
        "conversations.json: conversation 2: broken message tree",
        "conversations.json: conversation 3: unexpected shape: no mapping",
    ]
    assert [m.text for m in msgs(items)] == ["still here"]


# ------------------------------------------------------------------------------------------------ openai


def test_openai_en_counts_tool_calls():
    path = DATA / "openai-en.json"
    ms = msgs(read(path))
    assert [(m.role, m.tools) for m in ms] == [
        ("system", 0), ("user", 0), ("assistant", 0), ("user", 0), ("assistant", 2), ("tool", 1), ("tool", 1),
        ("assistant", 0), ("user", 0), ("assistant", 0),
    ]
    assert ms[2].text.startswith("<think>\nThe contractor knows TypeScript")
    assert ms[3].text == "ok, check the current npm versions for me"  # content parts
    assert '"version"' not in "".join(m.text for m in ms)  # tool output is never text
    assert ms[8].ref == f"{path}#9" and ms[8].text.startswith("Decision: React Native + Expo.")
    assert all(m.ts is None and m.session is None for m in ms)


def test_openai_zh_bare_list():
    path = DATA / "openai-zh.json"
    ms = msgs(read(path))
    assert [m.role for m in ms] == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert ms[0].text == "用中文回答。"  # "developer" is a system message
    assert ms[3].text == "好" and ms[3].ref == f"{path}#4"
    assert ms[5].text == "同意。再加一条：周五下午不合并到 main。"


def test_openai_one_document_per_line():
    data = ('{"messages":[{"role":"user","content":"第一"},{"role":"assistant","content":"one"}]}\n'
            '{"messages":[{"role":"user","content":"second"},{"role":"robot","content":"?"}]}\n'
            '{"messages": [').encode()
    items = read_bytes(data, "openai", "ft.jsonl")
    assert [(m.ref, m.text) for m in msgs(items)] == [
        ("ft.jsonl:1#1", "第一"), ("ft.jsonl:1#2", "one"), ("ft.jsonl:2#1", "second")]
    assert [str(p) for p in problems(items)] == [
        "ft.jsonl:2: message 2: unexpected shape: missing or unknown role",
        "ft.jsonl:3: invalid JSON: Expecting value (column 15)",
    ]


@pytest.mark.parametrize("fmt,name", [("openai", "openai-en.json"),
                                      ("chatgpt", "chatgpt-conversations.json")])
def test_broken_json_document_is_one_problem_no_messages(fmt, name):
    raw = (DATA / name).read_bytes()
    items = read_bytes(raw[: len(raw) // 2], fmt, name)
    assert len(items) == 1 and isinstance(items[0], InputProblem)
    assert items[0].reason.startswith("invalid JSON: ")
    assert items[0].line is not None and f"line {items[0].line} column" in items[0].reason


# ------------------------------------------------------------------------------------------------ jsonl


def test_jsonl_en():
    ms = msgs(read(DATA / "jsonl-en.jsonl"))
    assert [(m.ref, m.role, m.ts, m.tools) for m in ms] == [
        ("m-001", "user", "2026-02-03T10:00:12Z", 0),
        ("m-002", "assistant", "2026-02-03T10:00:31Z", 0),
        ("m-003", "user", "2026-02-03T10:01:05Z", 0),  # +01:00 offset
        ("m-004", "assistant", "2026-02-03T10:01:15Z", 0),  # epoch seconds in `time`
        ("m-005", "user", "2026-02-03T10:03:40Z", 0),
        ("m-006", "assistant", "2026-02-03T10:03:58Z", 1),
    ]
    assert ms[1].text == ("<think>They have external customers with curl scripts.</think>\n"
                          "Put it in the URL. Your customers call the API from shell scripts, and a path is "
                          "visible in every log line.")
    assert ms[4].text.endswith("so we know who to email.\n[image]")
    assert {(m.session, m.project) for m in ms} == {("s-api-versioning", "billing-api")}


def test_jsonl_zh():
    path = DATA / "jsonl-zh.jsonl"
    ms = msgs(read(path))
    assert [m.role for m in ms] == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert ms[0].ts is None and ms[0].project is None and ms[0].session == "周报-2026-w07"
    assert ms[1].ref == f"{path}:2" and ms[1].ts == "2026-02-12T02:00:00Z"  # epoch milliseconds
    assert ms[1].text.startswith("<system-reminder>今天是 2026-02-12。</system-reminder>\n周报工具")
    assert ms[3].text == "继续"
    assert ms[4].ts == "2026-02-12T02:01:45Z"
    assert ms[5].ts == "2026-02-12T02:03:00Z"  # +08:00 offset


def test_jsonl_bad_lines_keep_going():
    secret = "sk-live-DO-NOT-ECHO-4242"
    data = (b'{"role":"user","content":"one"}\n'
            b'{"role":"user","content":"' + secret.encode() + b'"\n'  # truncated JSON
            b'\n'
            b'["role", "user"]\n'
            b'{"content":"' + secret.encode() + b'"}\n'
            b'{"role":"wizard","content":"x"}\n'
            b'{"role":"assistant","content":[{"type":"text","text":"two"}, 7]}\n'
            b'{"role":"assistant","content":"three"}\r\n')
    items = read_bytes(data, "jsonl", "log.jsonl")
    assert [str(p) for p in problems(items)] == [
        "log.jsonl:2: invalid JSON: Expecting ',' delimiter (column 52)",
        "log.jsonl:4: unexpected shape: not a JSON object",
        "log.jsonl:5: unexpected shape: missing or unknown role",
        "log.jsonl:6: unexpected shape: missing or unknown role",
        "log.jsonl:7: unexpected shape: content part is not an object",
    ]
    assert [(m.ref, m.text) for m in msgs(items)] == [("log.jsonl:1", "one"), ("log.jsonl:8", "three")]
    assert all(secret not in str(p) for p in problems(items))


def test_invalid_utf8_is_replaced_and_reported():
    data = b'{"role":"user","content":"caf\xe9 au lait"}\n{"role":"assistant","content":"ok"}\n'
    items = read_bytes(data, "jsonl", "latin1.jsonl")
    assert isinstance(items[0], InputProblem) and str(items[0]) == "latin1.jsonl:1: invalid UTF-8, replaced"
    assert [m.text for m in msgs(items)] == ["caf\ufffd au lait", "ok"]
    text_items = read_bytes("User: 你好\n".encode() + b"\xff\xfe more\nAssistant: hi\n", "text", "t.txt")
    assert [str(p) for p in problems(text_items)] == ["t.txt:2: invalid UTF-8, replaced"]
    assert [m.text for m in msgs(text_items)] == ["你好\n\ufffd\ufffd more", "hi"]


def test_whole_document_invalid_utf8_names_the_line():
    data = b'{"messages": [\n{"role": "user", "content": "na\xefve"}\n]}'
    items = read_bytes(data, "openai", "doc.json")
    assert str(items[0]) == "doc.json:2: invalid UTF-8, replaced"
    assert msgs(items)[0].text == "na\ufffdve"


def test_huge_line_is_skipped_with_bounded_memory(tmp_path):
    size = 20 * 1024 * 1024
    path = tmp_path / "big.jsonl"
    with path.open("wb") as f:
        f.write(b'{"role":"user","content":"before"}\n')
        f.write(b'{"role":"user","content":"')
        block = b"x" * (1024 * 1024)
        for _ in range(size // len(block)):
            f.write(block)
        f.write(b'"}\n')
        f.write('{"role":"assistant","content":"之后"}\n'.encode())
    for limit, bound in ((8 * 1024 * 1024, 12_000_000), (1024 * 1024, 2_500_000)):
        tracemalloc.start()
        try:
            with path.open("rb") as f:
                items = list(iter_messages(f, "jsonl", "big.jsonl", max_line_bytes=limit))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert [str(p) for p in problems(items)] == [f"big.jsonl:2: line longer than {limit} bytes, skipped"]
        assert [(m.ref, m.text) for m in msgs(items)] == [
            ("big.jsonl:1", "before"), ("big.jsonl:3", "之后")]
        assert peak < bound, f"peak {peak} bytes for a {size}-byte line"


def test_line_cap_boundaries():
    data = b'{"role":"user","content":"12345"}\n' * 2  # 33 bytes before the newline
    assert len(msgs(read_bytes(data, "jsonl", max_line_bytes=33))) == 2
    items = read_bytes(data + b'{"role":"user","content":"123456"}', "jsonl", max_line_bytes=33)
    assert len(msgs(items)) == 2 and [p.line for p in problems(items)] == [3]  # last line has no newline


# ------------------------------------------------------------------------------------------------ sillytavern


def test_sillytavern_en_swipes_and_dates():
    path = DATA / "sillytavern-en.jsonl"
    ms = msgs(read(path))
    session = "Archivist - 2026-02-14@20h03m11s"
    assert [(m.role, m.ref, m.ts) for m in ms] == [
        ("greeting", f"{path}:2", "2026-02-14T20:03:00Z"),  # "February 14, 2026 8:03pm"; first_mes: no turn
        ("user", f"{path}:3", "2026-02-14T20:05:00Z"),
        ("assistant", f"{path}:4", "2026-02-14T20:05:00Z"),
        ("system", f"{path}:5", "2026-02-14T20:08:55Z"),  # narrator, epoch ms
        ("user", f"{path}:6", "2026-02-14T20:09:30Z"),  # ISO with ms
        ("assistant", f"{path}:7", "2026-02-14T20:09:41Z"),
    ]
    assert {m.session for m in ms} == {session}
    assert ms[2].text == "A cartographer, then. She maps the drowned coast for the guild."  # swipes[1]
    assert "soldier turned" not in "".join(m.text for m in ms)
    assert "She said not a soldier" not in "".join(m.text for m in ms)  # extra.reasoning
    assert ms[4].text == "ok"
    assert ms[5].text.startswith("<think>Keep the rule")


def test_sillytavern_zh():
    ms = msgs(read(DATA / "sillytavern-zh.jsonl"))
    assert [m.role for m in ms] == ["greeting", "user", "assistant", "user", "assistant", "user"]
    assert ms[2].text == "《标准日本语》初级上册，配套音频一定要听。"  # swipes[2], not mes
    assert ms[3].text == "继续" and ms[3].ts == "2026-01-25T21:43:00Z"
    assert {m.session for m in ms} == {"书店老板 - 2026-01-25@21h40m02s"}


def test_sillytavern_session_without_header_dates():
    lines = [{"user_name": "U", "character_name": "C", "chat_metadata": {"integrity": "abc-123"}},
             {"name": "U", "is_user": True, "mes": "hi", "send_date": "junk", "swipe_id": 5, "swipes": ["s"]}]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    (m,) = msgs(read_bytes(data, "sillytavern", "x.jsonl"))
    assert (m.session, m.text, m.ts) == ("abc-123", "hi", None)  # out-of-range swipe_id falls back to mes
    no_header = b'{"name":"U","is_user":true,"mes":"hi","send_date":"May 1, 2026 12:04am"}\n'
    (m,) = msgs(read_bytes(no_header, "sillytavern", "/chats/C - 2026-05-01@00h04m00s.jsonl"))
    assert (m.session, m.ts) == ("C - 2026-05-01@00h04m00s", "2026-05-01T00:04:00Z")
    (m,) = msgs(read_bytes(no_header, "sillytavern", "<stdin>"))
    assert m.session is None


# ------------------------------------------------------------------------------------------------ text


def test_text_en():
    path = DATA / "text-en.txt"
    ms = msgs(read(path))
    assert [(m.role, m.ref) for m in ms] == [
        ("user", f"{path}:3"), ("assistant", f"{path}:5"), ("user", f"{path}:10"),
        ("assistant", f"{path}:12"), ("user", f"{path}:15"), ("assistant", f"{path}:17"),
    ]
    assert ms[0].text == "We need a name for the background sync service. I don't want anything cute."
    assert ms[1].text == "Some plain options:\n- `syncd`\n- `tidepool-sync`\n- `relay`"
    assert ms[3].text.endswith("<system-reminder>Context window is 40% full.</system-reminder>")
    assert ms[4].text == "ok"
    # "# Pairing notes, 2026-03-05" above the first speaker dates every turn below it
    assert all(m.ts == "2026-03-05T00:00:00Z" and m.session is None for m in ms)
    assert "Pairing notes" not in "".join(m.text for m in ms)  # before the first speaker


def test_text_zh_fullwidth_colons_and_stamps():
    path = DATA / "text-zh.txt"
    ms = msgs(read(path))
    assert [(m.role, m.ref, m.ts) for m in ms] == [
        ("user", f"{path}:1", "2026-01-08T09:30:00Z"), ("assistant", f"{path}:2", "2026-01-08T09:30:00Z"),
        ("user", f"{path}:4", "2026-01-08T09:32:00Z"), ("assistant", f"{path}:5", "2026-01-08T09:33:00Z"),
        ("user", f"{path}:6", "2026-01-08T09:35:00Z"), ("assistant", f"{path}:7", "2026-01-08T09:35:00Z"),
    ]
    assert ms[1].text == "<think>用户在意维护成本。</think>如果你不想再折腾，群晖省心；\n但 TrueNAS 的 ZFS 快照更可靠。"
    assert ms[2].text == "继续"


def test_text_speaker_variants():
    data = ("__Human__: a\nChatGPT：b\n**用户：** c\nYou: not a speaker\nSYSTEM: d\n"
            "Userland: not a speaker either\n").encode()
    ms = msgs(read_bytes(data, "text"))
    assert [(m.role, m.text) for m in ms] == [
        ("user", "a"), ("assistant", "b"), ("user", "c\nYou: not a speaker"),
        ("system", "d\nUserland: not a speaker either")]


# ------------------------------------------------------------------------------------------------ misc


@pytest.mark.parametrize("value,expected", [
    ("2026-03-02T09:14:24.118Z", "2026-03-02T09:14:24Z"),
    ("2026-03-02T17:14:24+08:00", "2026-03-02T09:14:24Z"),
    ("2026-03-02 09:14:24", "2026-03-02T09:14:24Z"),
    ("2026-03-02T09:14:24.1234567Z", "2026-03-02T09:14:24Z"),
    (1772442864, "2026-03-02T09:14:24Z"),
    (1772442864.118, "2026-03-02T09:14:24Z"),
    (1772442864118, "2026-03-02T09:14:24Z"),
    ("1772442864118", "2026-03-02T09:14:24Z"),
    ("March 2, 2026 9:14am", "2026-03-02T09:14:00Z"),
    ("Mar 2, 2026 12:14 AM", "2026-03-02T00:14:00Z"),
    ("March 2, 2026 12:14pm", "2026-03-02T12:14:00Z"),
    ("2026-03-02@09h14m24s", "2026-03-02T09:14:24Z"),
    ("2026-03-02 @09h 14m 24s 118ms", "2026-03-02T09:14:24Z"),
    ("tomorrow", None), ("", None), (None, None), (True, None), (0, None), (-5, None),
    ("Smarch 2, 2026 1:00pm", None),
    ("March 2, 2026 13:14pm", None), (float("nan"), None), (1e30, None), ({"t": 1}, None),
])
def test_normalize_ts(value, expected):
    assert normalize_ts(value) == expected


def test_unknown_format_name_is_refused():
    with pytest.raises(InputError):
        read_bytes(b"", "csv")


def test_bom_and_empty_inputs():
    bom = b'\xef\xbb\xbf{"role":"user","content":"x"}\n'
    assert [m.text for m in msgs(read_bytes(bom, "jsonl"))] == ["x"]
    for fmt in ("jsonl", "claude-code", "codex", "sillytavern", "text"):
        assert read_bytes(b"", fmt) == []


def test_formats_is_a_pure_leaf():
    tree = ast.parse(Path(formats.__file__).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    ours = {m for m in imported if m.split(".")[0] == "memvault"}
    assert ours <= {"memvault.model", "memvault.errors"}
    assert not imported & {"jieba", "httpx", "typer", "rich", "yaml", "frontmatter"}


EXAMPLE_LOGS = sorted(p for p in EXAMPLES.iterdir() if p.suffix in (".jsonl", ".json", ".txt"))


def test_examples_cover_the_demo_formats():
    assert {sniff_format(p.read_bytes()[: 64 * 1024]) for p in EXAMPLE_LOGS} >= {
        "claude-code", "chatgpt", "sillytavern", "text"}


@pytest.mark.parametrize("path", EXAMPLE_LOGS, ids=lambda p: p.name)
def test_examples_read_cleanly(path):
    items = read(path)
    assert problems(items) == []
    ms = msgs(items)
    assert sum(m.role == "user" and not m.harness for m in ms) >= 3
    assert all(m.ts is None or m.ts.startswith("2026-") for m in ms)


def test_openai_document_per_line_keeps_line_separator_characters_inside_text():
    import io

    from memvault.capture.formats import iter_messages

    line = json.dumps({"messages": [{"role": "user", "content": "first\u2028second"},
                                    {"role": "assistant", "content": "ok\u2029done"}]}, ensure_ascii=False)
    data = (line + "\n" + line + "\n").encode("utf-8")
    msgs = [m for m in iter_messages(io.BytesIO(data), "openai", "x.jsonl") if not isinstance(m, InputProblem)]
    assert [m.text for m in msgs] == ["first\u2028second", "ok\u2029done"] * 2


def test_claude_code_branch_is_chosen_by_messages_not_by_bookkeeping_lines():
    data = (DATA / "claude-code-rewind.jsonl").read_bytes()
    late = {"type": "system", "subtype": "stop_hook_summary", "uuid": "late-1", "parentUuid": None,
            "sessionId": "3c9e1f4a-6b2d-4e8f-a1c7-5d0b9e2f4a61", "timestamp": "2026-05-04T11:00:00Z"}
    for extra in (b"", json.dumps(late).encode() + b"\n"):
        ms = msgs(read_bytes(data + extra, "claude-code"))
        users = [m.text for m in ms if m.role == "user" and not m.harness]
        assert users == ["Which port should the harbor API listen on?",
                         "Actually, write the config loader in Go instead.", "Good. Commit it as feat: config loader."]
        assert [m.role for m in ms].count("rewound") == 1 and ms[0].start is True
        assert not any("Rust" in m.text for m in ms)


def test_openai_lines_nested_too_deeply_are_a_problem_not_a_crash():
    first = json.dumps({"messages": [{"role": "user", "content": "hello there"},
                                     {"role": "assistant", "content": "hi"}]})
    deep = '{"messages": ' + "[" * 100000 + "]" * 100000 + "}"
    items = list(iter_messages(io.BytesIO((first + "\n" + deep + "\n").encode()), "openai", "in.jsonl"))
    problems = [i for i in items if isinstance(i, InputProblem)]
    assert [m.text for m in items if isinstance(m, Message)] == ["hello there", "hi"]
    assert [(p.line, "nested too deeply" in p.reason) for p in problems] == [(2, True)]
