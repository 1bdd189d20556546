"""The cursor format: a Cursor agent transcript, one JSON line per message
(`~/.cursor/projects/<workspace>/agent-transcripts/<id>/<id>.jsonl`, sub-agents under `subagents/`).

A line is `{"role": "user" | "assistant", "message": {"content": [parts]}}`: no ids, no times, no session
line. The session is the file's name (the conversation's id); the person's words sit in `<user_query>`, beside
context blocks Cursor adds (`<user_info>`, `<attached_files>` …) that nobody typed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memvault.model import Message

from .content import content_text, role_of
from .records import Item, Shape, line_ref, session_from_name

_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
# A user message that is only context Cursor attached, with no query in it.
_CONTEXT = re.compile(r"^\s*<(user_info|attached_files|open_and_recently_viewed_files|"
                      r"system_reminder|additional_data|git_status|agent_transcripts|rules|project_layout)\b")


def is_line(obj: dict) -> bool:
    """A Cursor transcript line: a role beside a `message` object (a plain chat line has `content` instead)."""
    return ("role" in obj and isinstance(obj.get("message"), dict) and "content" not in obj
            and "type" not in obj)


def parse(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    if "session" not in state:
        state["session"] = session_from_name(state["name"])
    message = obj.get("message")
    if not isinstance(message, dict):
        raise Shape("message is not an object")
    role = role_of(obj.get("role"))
    text, tools = content_text(message.get("content"))
    harness = False
    if role == "user":
        queries = _QUERY.findall(text)
        if queries:
            text = "\n\n".join(q for q in queries if q)
        else:
            harness = _CONTEXT.match(text) is not None
    yield Message(role=role, text=text, ref=line_ref(state, lineno), session=state["session"], tools=tools,
                  harness=harness)

