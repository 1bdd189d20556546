"""The openai format: a `{"messages": [...]}` document, a bare list of messages, or one such document per
line (the fine-tuning dataset shape). A document holds each conversation from its first message.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator

from memvault.model import InputProblem, Message

from .content import chat_message
from .document import iter_document
from .lines import json_line
from .records import Item, Shape, str_or_none


def read(stream: typing.BinaryIO, name: str) -> Iterator[Item]:
    """The messages of one openai input, whole document or one document per line."""
    return iter_document(stream, name, lambda doc: _messages(doc, name, None),
                         lambda text: _lines(text, name))


def _lines(text: str, name: str) -> Iterator[Item]:
    """One `{"messages": […]}` per line: the fine-tuning dataset shape of the same format."""
    # split("\n"), not splitlines(): JSON written with ensure_ascii=False may hold U+2028 inside a string
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        doc = json_line(line, name, lineno)
        if isinstance(doc, InputProblem):
            yield doc
            continue
        yield from _messages(doc, name, lineno)


def _messages(doc: object, name: str, lineno: int | None) -> Iterator[Item]:
    session = project = None
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        session, project = str_or_none(doc.get("session")), str_or_none(doc.get("project"))
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
                raise Shape("not an object")
            sid = str_or_none(m.get("session_id")) or str_or_none(m.get("session")) or session
            msg = chat_message(m, str_or_none(m.get("id")) or f"{where}#{i}", sid, project)
            if sid not in first:  # a whole document holds each conversation from its first message
                first.add(sid)
                msg = Message(**{**msg.__dict__, "start": True})
            yield msg
        except Shape as e:
            yield InputProblem(name, lineno, f"message {i}: unexpected shape: {e}")
