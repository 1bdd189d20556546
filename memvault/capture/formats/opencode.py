"""The opencode format: one OpenCode session as `opencode export <session id>` writes it, a pretty-printed
`{"info": {session}, "messages": [{"info": {message}, "parts": [...]}], "todos": [...]}`.

A message's `info` has `id`, `role`, `time.created` (epoch ms) and, for the assistant, `path.cwd`; its parts
are `text` (what was said; `synthetic` text is file content OpenCode inserted, not typed), `reasoning` (dropped),
`tool` (counted), and bookkeeping (`step-start`, `step-finish`, `snapshot`, `patch`, `file`, `agent`,
`compaction`). OpenCode keeps its sessions in a database (`~/.local/share/opencode/`), which memvault does not
open: export a session and capture the export.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator

from memvault.model import InputProblem, Message

from .content import role_of
from .document import iter_document
from .records import Item, Shape, basename, started, str_or_none
from .times import normalize_ts


def is_document(obj: object) -> bool:
    return (isinstance(obj, dict) and isinstance(obj.get("info"), dict) and isinstance(obj.get("messages"), list)
            and all(isinstance(m, dict) and "parts" in m for m in obj["messages"][:3]))


def read(stream: typing.BinaryIO, name: str) -> Iterator[Item]:
    return iter_document(stream, name, lambda doc: _document(doc, name))


def _document(doc: object, name: str) -> Iterator[Item]:
    if not is_document(doc):
        yield InputProblem(name, None, 'unexpected shape: not an OpenCode export ("info" and "messages")')
        return
    info = doc["info"]
    session = str_or_none(info.get("id"))
    cwd = str_or_none(info.get("directory"))
    yield from started(_messages(doc["messages"], name, session, cwd))


def _messages(messages: list, name: str, session: str | None, cwd: str | None) -> Iterator[Item]:
    for mi, m in enumerate(messages, start=1):
        try:
            yield _message(m, mi, name, session, cwd)
        except Shape as e:
            yield InputProblem(name, None, f"message {mi}: unexpected shape: {e}")


def _message(m: object, mi: int, name: str, session: str | None, cwd: str | None) -> Message:
    if not isinstance(m, dict) or not isinstance(m.get("info"), dict):
        raise Shape("no info")
    info = m["info"]
    role = role_of(info.get("role"))
    parts = m.get("parts") if isinstance(m.get("parts"), list) else []
    texts, tools = [], 0
    for part in parts:
        if not isinstance(part, dict):
            raise Shape("part is not an object")
        kind = part.get("type")
        if kind == "tool":
            tools += 1
        elif kind == "text" and isinstance(part.get("text"), str) and not part.get("synthetic") \
                and not part.get("ignored"):
            texts.append(part["text"])
    time = info.get("time") if isinstance(info.get("time"), dict) else {}
    path = info.get("path") if isinstance(info.get("path"), dict) else {}
    where = cwd or str_or_none(path.get("cwd"))
    return Message(role=role, text="\n".join(t for t in texts if t),
                   ref=str_or_none(info.get("id")) or f"{name}#{mi}", ts=normalize_ts(time.get("created")),
                   session=session, project=basename(where), cwd=where, tools=tools)
