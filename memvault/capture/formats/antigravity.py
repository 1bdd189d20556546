"""The antigravity format: an Antigravity CLI conversation's readable log,
`~/.gemini/antigravity-cli/brain/<conversation id>/.system_generated/logs/transcript_full.jsonl`
(`transcript.jsonl` beside it is cut short; the conversation itself is kept as protobuf, which is not read).

Each line is one step of the agent: `type`, `source`, `status`, `created_at`, `content`. A `USER_INPUT` step
is the person's prompt, a `PLANNER_RESPONSE` step the agent's reply; every other step (a command run, a file
viewed or edited, a search) is a tool step, counted and never stored. Antigravity publishes no schema for this
file: the step names are those its logs show.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePath

from memvault.model import Message

from .records import Item, Shape, line_ref
from .times import normalize_ts

USER = "USER_INPUT"
REPLY = "PLANNER_RESPONSE"
_STEP = re.compile(r"^[A-Z][A-Z0-9_]+$")


def is_line(obj: dict) -> bool:
    kind = obj.get("type")
    return (isinstance(kind, str) and _STEP.match(kind) is not None and "content" in obj and "role" not in obj
            and ("created_at" in obj or "source" in obj or "status" in obj))


def parse(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    if "session" not in state:
        state["session"] = _session_from_name(state["name"])
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise Shape("not an Antigravity step (no type)")
    content = obj.get("content")
    text = content if isinstance(content, str) else ""
    ref, ts, session = line_ref(state, lineno), normalize_ts(obj.get("created_at")), state["session"]
    if kind == USER:
        yield Message(role="user", text=text, ref=ref, ts=ts, session=session)
    elif kind == REPLY:
        yield Message(role="assistant", text=text, ref=ref, ts=ts, session=session)
    else:
        yield Message(role="tool", text="", ref=ref, ts=ts, session=session, tools=1)


def _session_from_name(name: str) -> str | None:
    """The conversation id: the `brain/<id>` folder the log sits in; None on stdin."""
    if name.startswith("<"):
        return None
    parts = PurePath(name.replace("\\", "/")).parts
    if "brain" in parts and parts.index("brain") + 1 < len(parts) - 1:
        return parts[parts.index("brain") + 1]
    return None
