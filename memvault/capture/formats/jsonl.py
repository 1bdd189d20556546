"""The jsonl format: one OpenAI-style message object per line, with optional `id`, `session`, `project`."""

from __future__ import annotations

from collections.abc import Iterator

from .content import chat_message
from .records import Item, line_ref, str_or_none


def parse(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    ref = str_or_none(obj.get("id")) or line_ref(state, lineno)
    yield chat_message(obj, ref, str_or_none(obj.get("session")), str_or_none(obj.get("project")))
