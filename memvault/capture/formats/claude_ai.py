"""The claude-ai format: the Claude.ai data export (Settings > Privacy > Export data), whose
`conversations.json` is a list of conversations (`uuid`, `name`, `created_at`, `chat_messages`); each message
has `uuid`, `sender` (human | assistant), `created_at`, `text` and `content` blocks (text, thinking, tool_use,
tool_result). A single conversation object is read too. When messages carry `parent_message_uuid` (an edited
prompt or a retried answer leaves a branch), the branch to the newest message is read and the prompts left on
other branches are reported as rewound.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator

from memvault.model import InputProblem, Message

from .content import content_text, role_of
from .document import each_conversation, iter_document
from .records import Item, Shape, started, str_or_none
from .times import normalize_ts


def read(stream: typing.BinaryIO, name: str) -> Iterator[Item]:
    return iter_document(stream, name, lambda doc: _document(doc, name))


def _document(doc: object, name: str) -> Iterator[Item]:
    return each_conversation(doc, name, "chat_messages", list,
                             lambda conv, ci: started(_conversation(conv, ci, name)))


def _conversation(conv: dict, ci: int, name: str) -> Iterator[Item]:
    session = str_or_none(conv.get("uuid"))
    created = normalize_ts(conv.get("created_at"))
    raw = [m for m in conv["chat_messages"] if isinstance(m, dict)]
    kept = _branch(raw)
    for mi, m in enumerate(raw, start=1):
        ref = str_or_none(m.get("uuid")) or f"{name}#{ci}.{mi}"
        if kept is not None and id(m) not in kept:
            if m.get("sender") == "human":
                yield Message(role="rewound", text="", ref=ref, ts=normalize_ts(m.get("created_at")),
                              session=session)
            continue
        try:
            yield _message(m, ref, session, created)
        except Shape as e:
            yield InputProblem(name, None, f"conversation {ci}, message {mi}: unexpected shape: {e}")


def _branch(messages: list[dict]) -> set[int] | None:
    """The messages on the branch that ends at the newest one (by `id()`), or None when the export has no
    parent links (then every message is read in order)."""
    by_uuid = {m.get("uuid"): m for m in messages if isinstance(m.get("uuid"), str)}
    if not messages or not any("parent_message_uuid" in m for m in messages):
        return None
    newest = max(messages, key=lambda m: (str(m.get("created_at") or ""), messages.index(m)))
    kept: set[int] = set()
    node: dict | None = newest
    while node is not None and id(node) not in kept:
        kept.add(id(node))
        node = by_uuid.get(node.get("parent_message_uuid"))
    return kept


def _message(m: dict, ref: str, session: str | None, created: str | None) -> Message:
    role = role_of(m.get("sender"))
    blocks = m.get("content")
    if isinstance(blocks, list) and blocks:
        text, tools = content_text(blocks)
    else:
        text, tools = (m.get("text") if isinstance(m.get("text"), str) else ""), 0
    ts = normalize_ts(m.get("created_at")) or created
    return Message(role=role, text=text, ref=ref, ts=ts, session=session, tools=tools)
