"""The codex format: a Codex CLI rollout, newer `{"timestamp", "type", "payload"}` envelopes or the older bare
Responses-API items. Duplicate prompt and answer events are dropped (a rollout of events only reads them as the
turns), and `thread_rolled_back` undoes turns.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from memvault.model import Message

from .content import content_text, role_of
from .records import Item, Shape, basename, line_ref, str_or_none
from .times import normalize_ts


# Codex rollout lines are `{"timestamp", "type", "payload"}` envelopes of these types.
LINE_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
# Responses-API items other than messages: an older rollout holds them bare, one per line. No other format has
# a line of these types, while a bare `{"type": "message", "role": …}` could be anyone's jsonl.
_ITEM_TYPES = {
    "reasoning", "function_call", "function_call_output", "local_shell_call", "custom_tool_call",
    "custom_tool_call_output", "web_search_call", "ghost_snapshot", "compaction",
}
_HEADER_KEYS = {"id", "timestamp", "instructions", "git"}


def is_line(obj: dict) -> bool:
    kind = obj.get("type")
    if kind in LINE_TYPES and isinstance(obj.get("payload"), dict):
        return True
    if kind in _ITEM_TYPES and "role" not in obj:
        return True
    return is_header(obj) or _is_state(obj)


def is_header(obj: dict) -> bool:
    """The older rollout's first line: the session itself, with no type."""
    return "id" in obj and "timestamp" in obj and obj.keys() <= _HEADER_KEYS


def _is_state(obj: dict) -> bool:
    return obj.get("record_type") == "state" and "type" not in obj and "role" not in obj


# Text that Codex sends in the user's role but the person never typed: environment and AGENTS.md context,
# skills, `!cmd` shell runs, the note left after an interrupted turn.
_HARNESS_PREFIXES = (
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions for ", "<INSTRUCTIONS>",
    "<turn_aborted>", "<user_shell_command>", "<user_shell_cmd>", "<skill>", "<skill ",
    "<collaboration_mode>", "<permissions instructions>", "<permissions_instructions>",
)
# Items that are one tool step each: the model's calls sit with the assistant, results come back as tool
# output.
_CALLS = {"function_call", "local_shell_call", "custom_tool_call", "web_search_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
_CWD = re.compile(r"<cwd>([^<]+)</cwd>")


def parse(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    kind = obj.get("type")
    if kind in LINE_TYPES:
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            raise Shape("payload is not an object")
        if kind == "session_meta":
            # A forked rollout may copy its parent's lines after its own meta: the first id names this file.
            if not state.get("session"):
                state["session"] = str_or_none(payload.get("id"))
            if not state.get("project"):
                state["project"] = basename(payload.get("cwd"))
                state["cwd"] = str_or_none(payload.get("cwd"))
        elif kind == "turn_context" and not state.get("project"):
            state["project"] = basename(payload.get("cwd"))
            state["cwd"] = str_or_none(payload.get("cwd"))
        elif kind == "response_item":
            _keep(state, "item", _item(payload, lineno, state, normalize_ts(obj.get("timestamp"))))
        elif kind == "event_msg":
            _event(payload, lineno, state, normalize_ts(obj.get("timestamp")))
        # compacted holds a summary nobody said.
        return
    if is_header(obj):
        if not state.get("session"):
            state["session"] = str_or_none(obj.get("id"))
        return
    if "record_type" in obj:
        return  # the older rollout's state markers
    if obj.get("type") is None:
        raise Shape("not a Codex record (no type)")
    _keep(state, "item", _item(obj, lineno, state, normalize_ts(obj.get("timestamp"))))
    return
    yield


def _keep(state: dict, source: str, messages: Iterator[Message]) -> None:
    buf = state.setdefault("buffer", [])
    for msg in messages:
        if not buf and state.get("session"):
            msg = Message(**{**msg.__dict__, "start": True})  # the rollout's own header came first
        buf.append((source, msg))


def _event(payload: dict, lineno: int, state: dict, ts: str | None) -> None:
    """event_msg repeats the messages as UI events (codex-rs `rollout/policy.rs` persists `user_message` and
    `agent_message`); three matter: a `user_message` or `agent_message` whose message has no response_item (a
    rollout may hold only the events), and `thread_rolled_back` (undo the last turns)."""
    kind = payload.get("type")
    if kind in ("user_message", "agent_message"):
        text = payload.get("message")
        if isinstance(text, str) and text.strip():
            user = kind == "user_message"
            harness = user and text.lstrip().startswith(_HARNESS_PREFIXES)
            _keep(state, "event", iter([Message(
                role="user" if user else "assistant", text=text, ref=line_ref(state, lineno), ts=ts,
                session=state.get("session"), project=state.get("project"), harness=harness)]))
    elif kind == "thread_rolled_back":
        n = payload.get("num_turns")
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            kept = _dedupe(state.get("buffer", []))
            prompts = [i for i, (_src, m) in enumerate(kept) if m.role == "user" and not m.harness]
            cut = prompts[-n] if len(prompts) >= n else 0
            state["rolled_back"] = state.get("rolled_back", 0) + sum(
                1 for _src, m in kept[cut:] if m.role == "user" and not m.harness)
            state["buffer"] = kept[:cut]


def _dedupe(buf: list[tuple[str, Message]]) -> list[tuple[str, Message]]:
    """Drop the `agent_message` events of a rollout whose answers are response_items (they repeat them), and
    the `user_message` events that repeat a response_item prompt between the same two answers."""
    if any(src == "item" and m.role == "assistant" and m.text for src, m in buf):
        buf = [(src, m) for src, m in buf if not (src == "event" and m.role == "assistant")]
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


def finish(state: dict) -> Iterator[Item]:
    kept = _dedupe(state.get("buffer", []))
    cwd = state.get("cwd")
    for _src, m in kept:
        yield Message(**{**m.__dict__, "cwd": cwd}) if cwd and m.cwd is None else m
    for _i in range(state.get("rolled_back", 0)):
        yield Message(role="rewound", text="", ref=state["name"], session=state.get("session"))


def _item(item: dict, lineno: int, state: dict, ts: str | None) -> Iterator[Item]:
    kind = item.get("type")
    ref = str_or_none(item.get("id")) or line_ref(state, lineno)
    if kind in _CALLS:
        yield Message(role="assistant", text="", ref=ref, ts=ts, session=state.get("session"),
                      project=state.get("project"), tools=1)
        return
    if kind in _OUTPUTS:
        yield Message(role="tool", text="", ref=ref, ts=ts, session=state.get("session"),
                      project=state.get("project"), tools=1)
        return
    if kind != "message":
        return  # reasoning (often encrypted), snapshots, compaction markers: never what was said
    role = role_of(item.get("role"))
    text, tools = content_text(item.get("content"))
    harness = role == "user" and text.lstrip().startswith(_HARNESS_PREFIXES)
    if harness and not state.get("project"):
        # The older rollout has no cwd field; its environment context still says where Codex ran.
        m = _CWD.search(text)
        state["project"] = basename(m.group(1)) if m else None
        state["cwd"] = m.group(1).strip() if m else None
    yield Message(role=role, text=text, ref=ref, ts=ts, session=state.get("session"),
                  project=state.get("project"), tools=tools, harness=harness)
