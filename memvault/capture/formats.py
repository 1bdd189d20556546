"""Chat-log input formats: bytes in, `Message`s out, in input order.

Pure: stdlib + memvault.model + memvault.errors. Grouping messages into turns, hygiene and redaction happen
later (capture). A reason in an `InputProblem` never quotes the input: it may hold a secret.
"""

from __future__ import annotations

import json
import re
import typing
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timezone

from memvault.errors import InputError
from memvault.model import InputProblem, Message

FORMATS = ("jsonl", "openai", "chatgpt", "claude-code", "codex", "sillytavern", "text")

Item = Message | InputProblem

_CHUNK = 64 * 1024

# ---------------------------------------------------------------------------------------------- timestamps

_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
# SillyTavern's older message stamp: "May 1, 2024 12:34pm" (local time, no zone — read as UTC).
_HUMAN_TS = re.compile(
    r"^([A-Za-z]{3,9})\.? (\d{1,2}), (\d{4}),? (\d{1,2}):(\d{2})(?::(\d{2}))? ?([AaPp][Mm])?$")
# SillyTavern's chat create_date / file-name stamp: "2024-05-01@12h34m56s" (optionally with ms).
_AT_TS = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s(?:\s*\d+ms)?$")


def normalize_ts(value: object) -> str | None:
    """Any timestamp we meet in a chat log -> "YYYY-MM-DDTHH:MM:SSZ" (UTC), or None when unknown."""
    dt = _parse_ts(value)
    if dt is None or not 1971 <= dt.year <= 2200:
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_ts(value: object) -> datetime | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return _from_epoch(float(value))
    if not isinstance(value, str):
        return None
    s = value.strip()
    if not s:
        return None
    if re.fullmatch(r"\d+(\.\d+)?", s):
        return _from_epoch(float(s))
    m = _AT_TS.match(s)
    if m:
        y, mo, d, h, mi, se = map(int, m.groups())
        return _safe_dt(y, mo, d, h, mi, se)
    m = _HUMAN_TS.match(s)
    if m:
        mon = _MONTHS.get(m.group(1)[:3].lower())
        if mon is None:
            return None
        hour, minute, sec = int(m.group(4)), int(m.group(5)), int(m.group(6) or 0)
        ampm = (m.group(7) or "").lower()
        if ampm:
            if not 1 <= hour <= 12:
                return None
            hour = hour % 12 + (12 if ampm == "pm" else 0)
        return _safe_dt(int(m.group(3)), mon, int(m.group(2)), hour, minute, sec)
    iso = s[:-1] + "+00:00" if s[-1:] in "Zz" else s
    # fromisoformat (3.11) takes 1-6 fraction digits only; some writers emit 7 or 9.
    iso = re.sub(r"(\.\d{6})\d+", r"\1", iso)
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def _from_epoch(x: float) -> datetime | None:
    if x != x or x <= 0:  # NaN or not a real moment
        return None
    if x > 1e11:  # milliseconds (1e11 s would be the year 5138)
        x /= 1000.0
    try:
        return datetime.fromtimestamp(x, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _safe_dt(y: int, mo: int, d: int, h: int, mi: int, s: int) -> datetime | None:
    try:
        return datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------- sniffing

_SPEAKERS = {
    "user": "user", "human": "user", "用户": "user", "人类": "user",
    "assistant": "assistant", "ai": "assistant", "chatgpt": "assistant", "gpt": "assistant",
    "claude": "assistant", "bot": "assistant", "助手": "assistant", "ai助手": "assistant",
    "system": "system", "系统": "system",
}
# `**User:**`, `User：`, `[2026-03-02 09:15] Assistant: …`. "You"/"Me"/"我" are left out on purpose: they
# start ordinary sentences too often to split on.
_SPEAKER_LINE = re.compile(
    r"^\s*(?:\[(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)\]\s*)?"
    r"(?:\*\*|__)?"
    r"(?P<who>user|human|assistant|ai|chatgpt|gpt|claude|bot|system|用户|人类|助手|ai助手|系统)"
    r"\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?[ \t]?(?P<rest>.*)$",
    re.IGNORECASE,
)
_CC_OTHER_TYPES = {"summary", "file-history-snapshot", "system", "queue-operation", "progress"}
# Other bookkeeping lines Claude Code writes; they never sniff as Claude Code on their own.
_CC_QUIET_TYPES = {"attachment", "custom-title", "ai-title", "last-prompt", "agent-name", "tag", "pr-link",
                   "permission-mode", "worktree-state", "content-replacement", "marble-origami-commit",
                   "marble-origami-snapshot", "x-summary"}
# Codex rollout lines are `{"timestamp", "type", "payload"}` envelopes of these types.
_CODEX_LINE_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
# Responses-API items other than messages: an older rollout holds them bare, one per line. No other format has
# a line of these types, while a bare `{"type": "message", "role": …}` could be anyone's jsonl.
_CODEX_ITEM_TYPES = {
    "reasoning", "function_call", "function_call_output", "local_shell_call", "custom_tool_call",
    "custom_tool_call_output", "web_search_call", "ghost_snapshot", "compaction",
}
_CODEX_HEADER_KEYS = {"id", "timestamp", "instructions", "git"}


def sniff_format(head: bytes) -> str:
    """Guess the format from the first bytes of an input (~64 KiB); raise InputError when unsure."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text:
        raise InputError("unknown format: the input is empty")
    if text[0] in "[{":
        fmt = _sniff_lines(text) or _sniff_document(text)
        if fmt:
            return fmt
    # A transcript may open with "[2026-01-08 09:30] User: …", so JSON-looking starts fall through to here.
    if any(_SPEAKER_LINE.match(ln) for ln in text.splitlines()[:200]):
        return "text"
    raise InputError(f"unknown format (expected one of: {', '.join(FORMATS)}); pass --format")


def _sniff_lines(text: str) -> str | None:
    """Line-based formats: the first line that says what it is decides."""
    for ln in text.splitlines()[:50]:
        ln = ln.strip()
        if not ln:
            continue
        try:
            obj = json.loads(ln)
        except ValueError:
            return None  # a pretty-printed document or a truncated line: try the document rules
        fmt = _classify_line(obj)
        if fmt:
            return fmt
    return None


def _classify_line(obj: object) -> str | None:
    if isinstance(obj, list):
        first = obj[0] if obj else None
        if isinstance(first, dict) and "mapping" in first:
            return "chatgpt"
        if isinstance(first, dict) and "role" in first:
            return "openai"
        return None
    if not isinstance(obj, dict):
        return None
    if "mapping" in obj:
        return "chatgpt"
    if isinstance(obj.get("messages"), list):
        return "openai"
    if "user_name" in obj or "character_name" in obj or ("is_user" in obj and "mes" in obj):
        return "sillytavern"
    kind = obj.get("type")
    if "sessionId" in obj or (kind in ("user", "assistant") and isinstance(obj.get("message"), dict)):
        return "claude-code"
    if kind in _CC_OTHER_TYPES and ("leafUuid" in obj or "uuid" in obj or "messageId" in obj):
        return "claude-code"
    if _is_codex_line(obj):
        return "codex"
    if "role" in obj:
        return "jsonl"
    return None


def _is_codex_line(obj: dict) -> bool:
    kind = obj.get("type")
    if kind in _CODEX_LINE_TYPES and isinstance(obj.get("payload"), dict):
        return True
    if kind in _CODEX_ITEM_TYPES and "role" not in obj:
        return True
    return _is_codex_header(obj) or _is_codex_state(obj)


def _is_codex_header(obj: dict) -> bool:
    """The older rollout's first line: the session itself, with no type."""
    return "id" in obj and "timestamp" in obj and obj.keys() <= _CODEX_HEADER_KEYS


def _is_codex_state(obj: dict) -> bool:
    return obj.get("record_type") == "state" and "type" not in obj and "role" not in obj


def _sniff_document(text: str) -> str | None:
    """Documents too big or too pretty to parse from the head: look for unescaped keys."""
    def has_key(key: str, after: str = "") -> bool:
        return re.search(r'(?<!\\)"' + key + r'"\s*:\s*' + after, text) is not None

    if has_key("mapping", r"\{") and (has_key("current_node") or has_key("children")):
        return "chatgpt"
    if has_key("messages", r"\["):
        return "openai"
    if text[0] == "[" and has_key("role"):
        return "openai"
    return None


# ---------------------------------------------------------------------------------------------- reading


def iter_messages(stream: typing.BinaryIO, fmt: str, name: str, *, sidechains: bool = False,
                  max_line_bytes: int = 8 * 1024 * 1024) -> Iterator[Item]:
    """Messages of one input, in input order, with an `InputProblem` for every part that could not be read."""
    if fmt in ("openai", "chatgpt"):
        yield from _iter_document(stream, fmt, name)
    elif fmt == "text":
        yield from _iter_text(stream, name, max_line_bytes)
    elif fmt in _LINE_PARSERS:
        yield from _iter_json_lines(stream, fmt, name, sidechains, max_line_bytes)
    else:
        raise InputError(f"unknown format {fmt!r} (expected one of: {', '.join(FORMATS)})")


def _iter_lines(stream: typing.BinaryIO, name: str,
                max_line_bytes: int) -> Iterator[tuple[int, str | None, list[InputProblem]]]:
    """(line number, decoded line or None when skipped, problems) with memory bounded by max_line_bytes."""
    lineno = 0
    while True:
        raw = _read_line(stream, max_line_bytes)
        if raw == b"":
            return
        lineno += 1
        if raw is None:
            reason = f"line longer than {max_line_bytes} bytes, skipped"
            yield lineno, None, [InputProblem(name, lineno, reason)]
            continue
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        problems = []
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = raw.decode("utf-8", errors="replace")
            problems.append(InputProblem(name, lineno, "invalid UTF-8, replaced"))
        yield lineno, line.rstrip("\r\n"), problems


def _read_line(stream: typing.BinaryIO, max_line_bytes: int) -> bytes | bytearray | None:
    """The next line (b"" at the end), or None when it was longer than the cap and has been skipped.

    Reads in bounded chunks into one growing buffer: `readline(limit)` alone would hold about twice the
    limit while it joins its pieces.
    """
    chunk = stream.readline(_CHUNK)
    if not chunk:
        return b""
    if chunk.endswith(b"\n"):  # the common case: a short line
        return chunk if len(chunk) - 1 <= max_line_bytes else None
    buf = bytearray(chunk)
    too_long = False
    while True:
        if len(buf) > max_line_bytes:
            too_long = True
            break
        chunk = stream.readline(_CHUNK)
        if not chunk:
            break
        ends = chunk.endswith(b"\n")
        if len(buf) + len(chunk) - ends > max_line_bytes:
            too_long = True
            break
        buf += chunk
        if ends:
            break
    if not too_long:
        return buf
    # Trigger: a line longer than the cap (a pasted dump, a corrupt file). Why: holding it would make memory
    # grow with the input. Outcome: drop what we have, skip the rest chunk by chunk, report it, go on.
    del buf
    while not chunk.endswith(b"\n"):
        chunk = stream.readline(_CHUNK)
        if not chunk:
            break
    return None


def _iter_json_lines(stream, fmt: str, name: str, sidechains: bool, max_line_bytes: int) -> Iterator[Item]:
    parse = _LINE_PARSERS[fmt]
    state: dict = {"name": name, "sidechains": sidechains}
    for lineno, line, problems in _iter_lines(stream, name, max_line_bytes):
        yield from problems
        if line is None or not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            yield InputProblem(name, lineno, f"invalid JSON: {e.msg} (column {e.colno})")
            continue
        except RecursionError:
            yield InputProblem(name, lineno, "invalid JSON: nested too deeply")
            continue
        if not isinstance(obj, dict):
            yield InputProblem(name, lineno, "unexpected shape: not a JSON object")
            continue
        try:
            yield from parse(obj, lineno, state)
        except _Shape as e:
            yield InputProblem(name, lineno, f"unexpected shape: {e}")
    finish = _LINE_FINISHERS.get(fmt)
    if finish is not None:
        yield from finish(state)


class _Shape(Exception):
    """A record that parsed as JSON but is not what the format promises. The message names fields only."""


def _line_ref(state: dict, lineno: int) -> str:
    return f"{state['name']}:{lineno}"


def _str_or_none(v: object) -> str | None:
    if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip():
        return str(v).strip()
    return None


# ------------------------------------------------------------------------- content parts (jsonl / openai)

_TOOL_PART_TYPES = {
    "tool_use", "tool_result", "tool_call", "function_call", "function_call_output", "server_tool_use",
    "web_search_tool_result", "mcp_tool_use", "mcp_tool_result", "tool-call", "tool-result",
}
_IMAGE_PART_TYPES = {"image", "image_url", "input_image", "image_file"}
_DROPPED_PART_TYPES = {"thinking", "redacted_thinking", "reasoning"}


def _content_text(content: object) -> tuple[str, int]:
    """(text, tool blocks) from a string or a list of content parts."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        raise _Shape("content is neither text nor a list of parts")
    texts: list[str] = []
    tools = 0
    for part in content:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            raise _Shape("content part is not an object")
        kind = part.get("type")
        if kind in _TOOL_PART_TYPES:
            tools += 1
        elif kind in _IMAGE_PART_TYPES:
            texts.append("[image]")
        elif kind in _DROPPED_PART_TYPES:
            pass
        elif isinstance(part.get("text"), str):  # "text", "input_text", "output_text", …
            texts.append(part["text"])
    return "\n".join(t for t in texts if t), tools


_ROLE_ALIASES = {
    "user": "user", "human": "user",
    "assistant": "assistant", "ai": "assistant", "bot": "assistant", "model": "assistant", "gpt": "assistant",
    "system": "system", "developer": "system",
    "tool": "tool", "function": "tool", "ipython": "tool",
}


def _role(raw: object) -> str:
    role = _ROLE_ALIASES.get(raw.lower()) if isinstance(raw, str) else None
    if role is None:
        raise _Shape("missing or unknown role")
    return role


def _chat_message(obj: dict, ref: str, session: str | None = None, project: str | None = None) -> Message:
    """One OpenAI-style message dict (also the jsonl format's line) -> Message."""
    role = _role(obj.get("role"))
    text, tools = _content_text(obj.get("content"))
    calls = obj.get("tool_calls")
    tools += len(calls) if isinstance(calls, list) else 0
    tools += 1 if obj.get("function_call") else 0
    if role == "tool":
        text, tools = "", max(tools, 1)  # a tool's output is counted, never stored
    ts = None
    for key in ("ts", "timestamp", "time", "created_at", "create_time", "date"):
        if obj.get(key) is not None:
            ts = normalize_ts(obj[key])
            break
    return Message(role=role, text=text, ref=ref, ts=ts, session=session, project=project, tools=tools)


def _parse_jsonl(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    ref = _str_or_none(obj.get("id")) or _line_ref(state, lineno)
    yield _chat_message(obj, ref, _str_or_none(obj.get("session")), _str_or_none(obj.get("project")))


# ------------------------------------------------------------------------------------------- claude code

# Text that Claude Code writes into the user's slot: slash-command wrappers and their output.
_CC_HARNESS_PREFIXES = (
    "<command-name>", "<command-message>", "<command-args>",
    "<local-command-stdout>", "<local-command-stderr>",
    "<bash-stdout>", "<bash-stderr>", "<user-prompt-submit-hook>", "<task-notification>",
    "Caveat: The messages below were generated by the user while running local commands",
    "[Request interrupted by user",
)
# Another session's message delivered in the user's slot (agent teams): the banner, then the element.
_CC_PEER_MESSAGE = re.compile(
    r"^\s*(?:Another Claude session sent a message(?: while you were working)?:\s*)?"
    r"<(?:teammate-message|agent-message|cross-session-message)\b")


def _basename(path: object) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return None
    parts = [p for p in re.split(r"[\\/]+", path.strip()) if p]
    return parts[-1] if parts else None


def _parse_claude_code(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    """Reads one line into the session's tree; `_finish_claude_code` yields the messages of the branch that
    leads to the newest leaf once every line is read."""
    kind = obj.get("type")
    uuid = _str_or_none(obj.get("uuid"))
    sidechain = obj.get("isSidechain") is True
    if uuid and not sidechain:
        parent = _str_or_none(obj.get("parentUuid")) or _str_or_none(obj.get("logicalParentUuid"))
        state.setdefault("nodes", {})[uuid] = (parent, obj.get("parentUuid", "") is None and parent is None)
    if kind not in ("user", "assistant"):
        if kind not in _CC_OTHER_TYPES and kind not in _CC_QUIET_TYPES and not (
                "sessionId" in obj or "uuid" in obj or "leafUuid" in obj):
            # A newer Claude Code bookkeeping record still carries its session or uuid: only a line with
            # neither is of unknown shape.
            raise _Shape("not a Claude Code record (unknown type)")
        return  # summary, system, file-history-snapshot, progress …: bookkeeping, not conversation
    if sidechain and not state["sidechains"]:
        return
    for msg in _claude_code_message(obj, lineno, state):
        state.setdefault("messages", []).append((uuid if not sidechain else None, msg))
    return
    yield


def _finish_claude_code(state: dict) -> Iterator[Item]:
    """A session is a tree (`uuid` / `parentUuid`): a rewind starts a new branch from an earlier message.
    Follow the branch to the newest leaf; a side branch that holds a prompt of the person was left by a
    rewind and is reported as `rewound`, never as a turn. Side branches without a prompt (parallel tool
    results, progress lines) stay."""
    messages = state.get("messages", [])
    nodes: dict[str, tuple[str | None, bool]] = state.get("nodes", {})
    if not nodes:
        yield from (m for _u, m in messages)
        return
    # The newest leaf is the last message (file order) with no message below it; bookkeeping lines (system,
    # progress, a record of a newer kind) never decide the branch.
    above_a_message: set[str] = set()
    for uuid, _msg in messages:
        node = nodes.get(uuid, (None, False))[0] if uuid else None
        while node in nodes and node not in above_a_message:
            above_a_message.add(node)
            node = nodes[node][0]
    leaf = None
    for uuid, _msg in messages:
        if uuid in nodes and uuid not in above_a_message:
            leaf = uuid
    if leaf is None:
        yield from (m for _u, m in messages)
        return
    path: set[str] = set()
    node, starts = leaf, False
    while node in nodes and node not in path:
        path.add(node)
        parent, is_root = nodes[node]
        starts = is_root
        node = parent

    def branch_root(uuid: str) -> str:
        seen = set()
        while uuid not in seen:
            seen.add(uuid)
            parent = nodes[uuid][0]
            if parent is None or parent in path or parent not in nodes:
                return uuid
            uuid = parent
        return uuid

    prompts_in: set[str] = set()
    for uuid, msg in messages:
        if uuid and uuid in nodes and uuid not in path and msg.role == "user" and not msg.harness \
                and msg.text.strip():
            prompts_in.add(branch_root(uuid))
    first = True
    for uuid, msg in messages:
        if uuid and uuid in nodes and uuid not in path and branch_root(uuid) in prompts_in:
            if msg.role == "user" and not msg.harness and msg.text.strip():
                yield Message(role="rewound", text="", ref=msg.ref, ts=msg.ts, session=msg.session)
            continue
        if first and uuid in path and starts:
            msg = Message(**{**msg.__dict__, "start": True})
        first = False
        yield msg


def _claude_code_message(obj: dict, lineno: int, state: dict) -> Iterator[Message]:
    message = obj.get("message")
    if not isinstance(message, dict):
        raise _Shape("message is not an object")
    content = message.get("content")
    role = "user" if obj.get("type") == "user" else "assistant"
    text, tools = _content_text(content)
    harness = False
    if role == "user":
        blocks = content if isinstance(content, list) else []
        only_results = bool(blocks) and all(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
        harness = (
            only_results
            or obj.get("isMeta") is True
            or obj.get("isCompactSummary") is True
            or obj.get("isVisibleInTranscriptOnly") is True
            or "toolUseResult" in obj  # a tool's result, written in the user's slot
            or text.lstrip().startswith(_CC_HARNESS_PREFIXES)
            or _CC_PEER_MESSAGE.match(text) is not None
        )
    yield Message(
        role=role,
        text=text,
        ref=_str_or_none(obj.get("uuid")) or _line_ref(state, lineno),
        ts=normalize_ts(obj.get("timestamp")),
        session=_str_or_none(obj.get("sessionId")),
        project=_basename(obj.get("cwd")),
        tools=tools,
        harness=harness,
    )


# ------------------------------------------------------------------------------------------------- codex

# Text that Codex sends in the user's role but the person never typed: environment and AGENTS.md context,
# skills, `!cmd` shell runs, the note left after an interrupted turn.
_CODEX_HARNESS_PREFIXES = (
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions for ", "<INSTRUCTIONS>",
    "<turn_aborted>", "<user_shell_command>", "<user_shell_cmd>", "<skill>", "<skill ",
    "<collaboration_mode>", "<permissions instructions>", "<permissions_instructions>",
)
# Items that are one tool step each: the model's calls sit with the assistant, results come back as tool
# output.
_CODEX_CALLS = {"function_call", "local_shell_call", "custom_tool_call", "web_search_call"}
_CODEX_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
_CODEX_CWD = re.compile(r"<cwd>([^<]+)</cwd>")


def _parse_codex(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    kind = obj.get("type")
    if kind in _CODEX_LINE_TYPES:
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            raise _Shape("payload is not an object")
        if kind == "session_meta":
            # A forked rollout may copy its parent's lines after its own meta: the first id names this file.
            if not state.get("session"):
                state["session"] = _str_or_none(payload.get("id"))
            if not state.get("project"):
                state["project"] = _basename(payload.get("cwd"))
        elif kind == "turn_context" and not state.get("project"):
            state["project"] = _basename(payload.get("cwd"))
        elif kind == "response_item":
            _codex_keep(state, "item", _codex_item(payload, lineno, state, normalize_ts(obj.get("timestamp"))))
        elif kind == "event_msg":
            _codex_event(payload, lineno, state, normalize_ts(obj.get("timestamp")))
        # compacted holds a summary nobody said.
        return
    if _is_codex_header(obj):
        if not state.get("session"):
            state["session"] = _str_or_none(obj.get("id"))
        return
    if "record_type" in obj:
        return  # the older rollout's state markers
    if obj.get("type") is None:
        raise _Shape("not a Codex record (no type)")
    _codex_keep(state, "item", _codex_item(obj, lineno, state, normalize_ts(obj.get("timestamp"))))
    return
    yield


def _codex_keep(state: dict, source: str, messages: Iterator[Message]) -> None:
    buf = state.setdefault("buffer", [])
    for msg in messages:
        if not buf and state.get("session"):
            msg = Message(**{**msg.__dict__, "start": True})  # the rollout's own header came first
        buf.append((source, msg))


def _codex_event(payload: dict, lineno: int, state: dict, ts: str | None) -> None:
    """event_msg repeats most messages as UI events; only two matter: a `user_message` whose prompt has no
    response_item (newer rollouts may write only the event), and `thread_rolled_back` (undo the last turns)."""
    kind = payload.get("type")
    if kind == "user_message":
        text = payload.get("message")
        if isinstance(text, str) and text.strip():
            harness = text.lstrip().startswith(_CODEX_HARNESS_PREFIXES)
            _codex_keep(state, "event", iter([Message(
                role="user", text=text, ref=_line_ref(state, lineno), ts=ts, session=state.get("session"),
                project=state.get("project"), harness=harness)]))
    elif kind == "thread_rolled_back":
        n = payload.get("num_turns")
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            kept = _codex_dedupe(state.get("buffer", []))
            prompts = [i for i, (_src, m) in enumerate(kept) if m.role == "user" and not m.harness]
            cut = prompts[-n] if len(prompts) >= n else 0
            state["rolled_back"] = state.get("rolled_back", 0) + sum(
                1 for _src, m in kept[cut:] if m.role == "user" and not m.harness)
            state["buffer"] = kept[:cut]


def _codex_dedupe(buf: list[tuple[str, Message]]) -> list[tuple[str, Message]]:
    """Drop the `user_message` events that repeat a response_item prompt between the same two answers."""
    out: list[tuple[str, Message]] = []
    segment: list[tuple[str, Message]] = []

    def flush() -> None:
        items = Counter(m.text.strip() for src, m in segment if src == "item" and m.role == "user")
        for src, m in segment:
            if src == "event":
                if items[m.text.strip()] > 0:
                    items[m.text.strip()] -= 1
                    continue
            out.append((src, m))
        segment.clear()

    for src, m in buf:
        if m.role in ("assistant", "tool"):
            flush()
            out.append((src, m))
        else:
            segment.append((src, m))
    flush()
    return out


def _finish_codex(state: dict) -> Iterator[Item]:
    kept = _codex_dedupe(state.get("buffer", []))
    for _src, m in kept:
        yield m
    for _i in range(state.get("rolled_back", 0)):
        yield Message(role="rewound", text="", ref=state["name"], session=state.get("session"))


def _codex_item(item: dict, lineno: int, state: dict, ts: str | None) -> Iterator[Item]:
    kind = item.get("type")
    ref = _str_or_none(item.get("id")) or _line_ref(state, lineno)
    if kind in _CODEX_CALLS:
        yield Message(role="assistant", text="", ref=ref, ts=ts, session=state.get("session"),
                      project=state.get("project"), tools=1)
        return
    if kind in _CODEX_OUTPUTS:
        yield Message(role="tool", text="", ref=ref, ts=ts, session=state.get("session"),
                      project=state.get("project"), tools=1)
        return
    if kind != "message":
        return  # reasoning (often encrypted), snapshots, compaction markers: never what was said
    role = _role(item.get("role"))
    text, tools = _content_text(item.get("content"))
    harness = role == "user" and text.lstrip().startswith(_CODEX_HARNESS_PREFIXES)
    if harness and not state.get("project"):
        # The older rollout has no cwd field; its environment context still says where Codex ran.
        m = _CODEX_CWD.search(text)
        state["project"] = _basename(m.group(1)) if m else None
    yield Message(role=role, text=text, ref=ref, ts=ts, session=state.get("session"),
                  project=state.get("project"), tools=tools, harness=harness)


# ------------------------------------------------------------------------------------------- sillytavern


def _parse_sillytavern(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    if "mes" not in obj and ("user_name" in obj or "character_name" in obj or "chat_metadata" in obj):
        state["session"] = _sillytavern_session(obj)
        state["header"] = True
        return
    if "mes" not in obj and "swipes" not in obj:
        raise _Shape("not a SillyTavern message (no mes)")
    mes = obj.get("mes")
    if mes is not None and not isinstance(mes, str):
        raise _Shape("mes is not text")
    text = mes or ""
    swipes, swipe_id = obj.get("swipes"), obj.get("swipe_id")
    if (isinstance(swipes, list) and isinstance(swipe_id, int) and not isinstance(swipe_id, bool)
            and 0 <= swipe_id < len(swipes) and isinstance(swipes[swipe_id], str)):
        text = swipes[swipe_id]
    extra = obj.get("extra") if isinstance(obj.get("extra"), dict) else {}
    if obj.get("is_user") is True:
        role = "user"
    elif obj.get("is_system") is True or extra.get("type") == "narrator":
        role = "system"
    else:
        role = "assistant"
    if "session" not in state:
        state["session"] = _session_from_name(state["name"])
    start = state.pop("header", False)  # the chat's header line came first: this is its opening message
    yield Message(role=role, text=text, ref=_line_ref(state, lineno), ts=normalize_ts(obj.get("send_date")),
                  session=state["session"], start=start)


def _sillytavern_session(header: dict) -> str | None:
    # SillyTavern names a chat file "<character> - <create_date>.jsonl"; building the same string from the
    # header keeps the session stable whether the chat arrives as a file or on stdin.
    character, created = _str_or_none(header.get("character_name")), _str_or_none(header.get("create_date"))
    if character and created:
        return f"{character} - {created}"
    meta = header.get("chat_metadata") if isinstance(header.get("chat_metadata"), dict) else {}
    return _str_or_none(meta.get("integrity")) or _str_or_none(meta.get("chat_id_hash"))


def _session_from_name(name: str) -> str | None:
    if name.startswith("<"):
        return None
    base = _basename(name) or ""
    stem = base[:-6] if base.lower().endswith(".jsonl") else base
    return stem or None


_LINE_PARSERS = {
    "jsonl": _parse_jsonl, "claude-code": _parse_claude_code, "codex": _parse_codex,
    "sillytavern": _parse_sillytavern,
}
_LINE_FINISHERS = {"claude-code": _finish_claude_code, "codex": _finish_codex}


# ------------------------------------------------------------------------------ whole documents


def _iter_document(stream: typing.BinaryIO, fmt: str, name: str) -> Iterator[Item]:
    raw = stream.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        text = raw.decode("utf-8", errors="replace")
        yield InputProblem(name, raw.count(b"\n", 0, e.start) + 1, "invalid UTF-8, replaced")
    del raw
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        if fmt == "openai" and e.msg == "Extra data":
            # One `{"messages": […]}` per line: the fine-tuning dataset shape of the same format.
            yield from _iter_openai_lines(text, name)
            return
        yield InputProblem(name, e.lineno, f"invalid JSON: {e.msg} (line {e.lineno} column {e.colno})")
        return
    except RecursionError:
        yield InputProblem(name, None, "invalid JSON: nested too deeply")
        return
    if fmt == "openai":
        yield from _openai_messages(doc, name, None)
    else:
        yield from _chatgpt_document(doc, name)


def _iter_openai_lines(text: str, name: str) -> Iterator[Item]:
    # split("\n"), not splitlines(): JSON written with ensure_ascii=False may hold U+2028 inside a string
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as e:
            yield InputProblem(name, lineno, f"invalid JSON: {e.msg} (column {e.colno})")
            continue
        yield from _openai_messages(doc, name, lineno)


def _openai_messages(doc: object, name: str, lineno: int | None) -> Iterator[Item]:
    session = project = None
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        session, project = _str_or_none(doc.get("session")), _str_or_none(doc.get("project"))
        messages = doc["messages"]
    elif isinstance(doc, list):
        messages = doc
    else:
        yield InputProblem(name, lineno, 'unexpected shape: no "messages" list')
        return
    where = f"{name}:{lineno}" if lineno else name
    first: set[str | None] = set()
    for i, m in enumerate(messages, start=1):
        try:
            if not isinstance(m, dict):
                raise _Shape("not an object")
            sid = _str_or_none(m.get("session_id")) or _str_or_none(m.get("session")) or session
            msg = _chat_message(m, _str_or_none(m.get("id")) or f"{where}#{i}", sid, project)
            if sid not in first:  # a whole document holds each conversation from its first message
                first.add(sid)
                msg = Message(**{**msg.__dict__, "start": True})
            yield msg
        except _Shape as e:
            yield InputProblem(name, lineno, f"message {i}: unexpected shape: {e}")


def _chatgpt_document(doc: object, name: str) -> Iterator[Item]:
    conversations = doc if isinstance(doc, list) else [doc]
    for ci, conv in enumerate(conversations, start=1):
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            yield InputProblem(name, None, f"conversation {ci}: unexpected shape: no mapping")
            continue
        yield from _chatgpt_conversation(conv, ci, name)


def _chatgpt_path(mapping: dict, current: object) -> list[tuple[str, dict]] | None:
    """Nodes from the root to `current`: the branch the person last saw. None when the tree is broken."""
    if not isinstance(current, str) or current not in mapping:
        current = _chatgpt_newest_leaf(mapping)
        if current is None:
            return None
    path: list[tuple[str, dict]] = []
    seen: set[str] = set()
    node_id: object = current
    while isinstance(node_id, str):
        node = mapping.get(node_id)
        if not isinstance(node, dict) or node_id in seen:
            return None
        seen.add(node_id)
        path.append((node_id, node))
        node_id = node.get("parent")
    path.reverse()
    return path


def _chatgpt_newest_leaf(mapping: dict) -> str | None:
    """Without current_node (older exports), follow the newest child down from the root."""
    children: dict[object, list[tuple[float, int, str]]] = {}
    for pos, (nid, node) in enumerate(mapping.items()):
        if isinstance(node, dict):
            msg = node.get("message") if isinstance(node.get("message"), dict) else {}
            t = msg.get("create_time")
            key = float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else 0.0
            children.setdefault(node.get("parent") or None, []).append((key, pos, nid))
    roots = children.get(None)
    if not roots:
        return None
    current, seen = roots[0][2], set()
    while current in children and current not in seen:
        seen.add(current)
        current = max(children[current])[2]
    return current


# content types that carry what the person saw; anything else (tool calls as code, browsing output,
# reasoning, memory/context blobs) is either a tool step or invisible.
_CHATGPT_TEXT_TYPES = {"text", "multimodal_text"}
_CHATGPT_DROPPED_TYPES = {"thoughts", "reasoning_recap", "user_editable_context", "model_editable_context"}


def _chatgpt_conversation(conv: dict, ci: int, name: str) -> Iterator[Item]:
    mapping = conv["mapping"]
    session = _str_or_none(conv.get("id")) or _str_or_none(conv.get("conversation_id"))
    path = _chatgpt_path(mapping, conv.get("current_node"))
    if path is None:
        yield InputProblem(name, None, f"conversation {ci}: broken message tree")
        return
    created = normalize_ts(conv.get("create_time"))
    start = True
    for depth, (node_id, node) in enumerate(path):
        msg = node.get("message")
        if msg is None:
            continue  # the synthetic root
        try:
            item = _chatgpt_message(msg, node_id, session)
        except _Shape as e:
            yield InputProblem(name, None, f"conversation {ci}, message {depth}: unexpected shape: {e}")
            continue
        if item is not None:
            if item.ts is None and created:  # a turn without its own time happened in the conversation
                item = Message(**{**item.__dict__, "ts": created})
            if start:
                item = Message(**{**item.__dict__, "start": True})
                start = False
            yield item


def _chatgpt_message(msg: object, node_id: str, session: str | None) -> Message | None:
    if not isinstance(msg, dict):
        raise _Shape("message is not an object")
    author = msg.get("author") if isinstance(msg.get("author"), dict) else {}
    role = _role(author.get("role"))
    meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
    content = msg.get("content") if isinstance(msg.get("content"), dict) else {}
    ctype = content.get("content_type")
    if meta.get("is_visually_hidden_from_conversation") or ctype in _CHATGPT_DROPPED_TYPES:
        return None
    ts = normalize_ts(msg.get("create_time"))
    if role == "tool":
        return Message(role="tool", text="", ref=node_id, ts=ts, session=session, tools=1)
    recipient = msg.get("recipient")
    if role == "assistant" and isinstance(recipient, str) and recipient != "all":
        # The assistant addressing a tool (python, browser, dalle …): a tool call, not a reply.
        return Message(role="assistant", text="", ref=node_id, ts=ts, session=session, tools=1)
    if ctype not in _CHATGPT_TEXT_TYPES:
        return None
    texts = []
    for part in content.get("parts") or []:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if part.get("content_type") == "image_asset_pointer":
                texts.append("[image]")
            elif isinstance(part.get("text"), str):  # audio transcriptions
                texts.append(part["text"])
    text = "\n".join(t for t in texts if t)
    if not text.strip():
        return None
    return Message(role=role, text=text, ref=node_id, ts=ts, session=session)


# ------------------------------------------------------------------------------------------------ text


def _iter_text(stream: typing.BinaryIO, name: str, max_line_bytes: int) -> Iterator[Item]:
    current: dict | None = None
    for lineno, line, problems in _iter_lines(stream, name, max_line_bytes):
        yield from problems
        if line is None:
            continue
        m = _SPEAKER_LINE.match(line)
        if m:
            if current:
                yield _text_message(current)
            current = {"role": _SPEAKERS[m.group("who").lower()], "lines": [m.group("rest")],
                       "ref": f"{name}:{lineno}", "ts": normalize_ts(m.group("ts"))}
        elif current is not None:
            current["lines"].append(line)
        # Lines before the first speaker (a title, a date) belong to nobody.
    if current:
        yield _text_message(current)


def _text_message(cur: dict) -> Message:
    return Message(role=cur["role"], text="\n".join(cur["lines"]).strip(), ref=cur["ref"], ts=cur["ts"])
