"""The gemini format: a Gemini CLI session (`~/.gemini/tmp/<project hash>/chats/session-*.jsonl`).

Since 2026 the file is JSON lines: a first line with `sessionId` and `projectHash`, then one line per message
record (`id`, `timestamp`, `type` user | gemini | info | error | warning, `content`), written again in full
when it changes (tool calls and token counts arrive later: the last version of an id counts, in the place it
first had), `{"$rewindTo": id}` when the person rewound (that message and every later one are gone), and
`{"$set": {...}}` metadata updates. The older file (`session-*.json`) is one pretty-printed document with the
same fields and a `messages` list. A sub-agent's session (`kind: subagent`) is read only with
`capture.sidechains: true`, like Claude Code's sidechains.
"""

from __future__ import annotations

import io
import typing
from collections.abc import Iterator

from memvault.model import InputProblem, Message

from .document import iter_document
from .lines import Replay, iter_json_lines
from .records import Item, Shape, str_or_none
from .times import normalize_ts

MESSAGE_TYPES = {"user", "gemini", "info", "error", "warning"}


def is_line(obj: dict) -> bool:
    """A line of a Gemini CLI session: its metadata, a message record, a rewind or a metadata update."""
    if "sessionId" in obj and "projectHash" in obj:
        return True
    if isinstance(obj.get("$rewindTo"), str) or (isinstance(obj.get("$set"), dict) and len(obj) == 1):
        return True
    return isinstance(obj.get("id"), str) and obj.get("type") in MESSAGE_TYPES and "content" in obj \
        and "timestamp" in obj


def read(stream: typing.BinaryIO, name: str, sidechains: bool, max_line_bytes: int) -> Iterator[Item]:
    """One session file, JSON lines or the older pretty-printed document (told by its first line)."""
    first = stream.readline(64 * 1024)
    replay = io.BufferedReader(Replay(first, stream), buffer_size=1 << 16)
    if first.lstrip(b"\xef\xbb\xbf \t").rstrip() == b"{":  # JSON.stringify(record, null, 2): the older file
        yield from iter_document(replay, name, lambda doc: _document(doc, name, sidechains))
        return
    yield from iter_json_lines(replay, name, parse, finish, sidechains, max_line_bytes)


def _document(doc: object, name: str, sidechains: bool) -> Iterator[Item]:
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        yield InputProblem(name, None, 'unexpected shape: no "messages" list')
        return
    state: dict = {"name": name, "sidechains": sidechains}
    yield from parse(doc, 0, state)
    yield from finish(state)


def parse(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    """Collects the records; `finish` yields the messages once the last version of each is known."""
    msgs: dict[str, tuple[int, dict]] = state.setdefault("msgs", {})
    if isinstance(obj.get("$rewindTo"), str):
        _rewind(state, obj["$rewindTo"])
    elif "$set" in obj:
        pass  # title, summary, directories; a `messages` rewrite is the model's masked context, not the talk
    elif isinstance(obj.get("id"), str) and "type" in obj:
        if obj["id"] not in msgs and not msgs and state.get("header"):
            state["first"] = obj["id"]
        msgs[obj["id"]] = (lineno, obj)
    elif "sessionId" in obj:
        state.setdefault("session", str_or_none(obj.get("sessionId")))
        state["header"] = True
        state["subagent"] = obj.get("kind") == "subagent"
        for i, rec in enumerate(obj.get("messages") or [], start=1):  # a whole record on one line
            if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
                yield InputProblem(state["name"], lineno or None, f"message {i}: unexpected shape: no id")
                continue
            if not msgs:
                state["first"] = rec["id"]
            msgs[rec["id"]] = (lineno, rec)
    else:
        raise Shape("not a Gemini CLI record")


def _rewind(state: dict, target: str) -> None:
    """The person rewound to before `target`: it and every later message are gone (all of them when the id is
    not known, as Gemini CLI itself reads it). Their prompts are reported as rewound."""
    msgs: dict[str, tuple[int, dict]] = state["msgs"]
    ids = list(msgs)
    cut = ids.index(target) if target in msgs else 0
    for mid in ids[cut:]:
        lineno, rec = msgs.pop(mid)
        if rec.get("type") == "user":
            state.setdefault("rewound", []).append(_ref(state, lineno, mid))


def finish(state: dict) -> Iterator[Item]:
    if state.get("subagent") and not state["sidechains"]:
        return
    for mid, (lineno, rec) in state.get("msgs", {}).items():
        try:
            msg = _message(rec, _ref(state, lineno, mid), state.get("session"))
        except Shape as e:
            yield InputProblem(state["name"], lineno or None, f"unexpected shape: {e}")
            continue
        if mid == state.get("first"):
            msg = Message(**{**msg.__dict__, "start": True})
        yield msg
    for ref in state.get("rewound", []):
        yield Message(role="rewound", text="", ref=ref, session=state.get("session"))


def _ref(state: dict, lineno: int, mid: str) -> str:
    return mid if mid else f"{state['name']}:{lineno}"


def _message(rec: dict, ref: str, session: str | None) -> Message:
    kind = rec.get("type")
    ts = normalize_ts(rec.get("timestamp"))
    calls = rec.get("toolCalls")
    tools = len(calls) if isinstance(calls, list) else 0
    if kind == "user":
        # displayContent is what the person typed; content may hold @file text the CLI expanded into it.
        shown = rec.get("displayContent")
        text, parts_tools = parts_text(shown if shown not in (None, "", []) else rec.get("content"))
        if parts_tools and not text.strip():
            return Message(role="tool", text="", ref=ref, ts=ts, session=session, tools=parts_tools)
        return Message(role="user", text=text, ref=ref, ts=ts, session=session)
    if kind == "gemini":
        text, parts_tools = parts_text(rec.get("content"))
        return Message(role="assistant", text=text, ref=ref, ts=ts, session=session,
                       tools=tools + parts_tools)
    if kind in MESSAGE_TYPES:  # info, error, warning: the CLI speaking, not the model
        return Message(role="system", text="", ref=ref, ts=ts, session=session)
    raise Shape("unknown message type")


def parts_text(content: object) -> tuple[str, int]:
    """(text, tool parts) of a Gemini `PartListUnion`: a string, one part, or a list of parts or strings."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        raise Shape("content is neither text nor parts")
    texts, tools = [], 0
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if part.get("thought") is True:
                continue  # the model's thinking
            if "functionCall" in part or "functionResponse" in part:
                tools += 1
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part.get("inlineData"), dict) or isinstance(part.get("fileData"), dict):
                texts.append("[file]")
    return "\n".join(t for t in texts if t), tools

