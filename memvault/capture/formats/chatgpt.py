"""The chatgpt format: ChatGPT's `conversations.json` export. Each conversation is a tree (`mapping`); the
branch the person last saw (`current_node`, else the newest child at each step) is read.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator

from memvault.model import InputProblem, Message

from .content import role_of
from .document import each_conversation, iter_document
from .records import Item, Shape, str_or_none
from .times import normalize_ts


def read(stream: typing.BinaryIO, name: str) -> Iterator[Item]:
    """The messages of one export: every conversation's branch, in the export's order."""
    return iter_document(stream, name, lambda doc: _document(doc, name))


def _document(doc: object, name: str) -> Iterator[Item]:
    return each_conversation(doc, name, "mapping", dict, lambda conv, ci: _conversation(conv, ci, name))


def _path(mapping: dict, current: object) -> list[tuple[str, dict]] | None:
    """Nodes from the root to `current`: the branch the person last saw. None when the tree is broken."""
    if not isinstance(current, str) or current not in mapping:
        current = _newest_leaf(mapping)
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


def _newest_leaf(mapping: dict) -> str | None:
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
_TEXT_TYPES = {"text", "multimodal_text"}
_DROPPED_TYPES = {"thoughts", "reasoning_recap", "user_editable_context", "model_editable_context"}


def _conversation(conv: dict, ci: int, name: str) -> Iterator[Item]:
    mapping = conv["mapping"]
    session = str_or_none(conv.get("id")) or str_or_none(conv.get("conversation_id"))
    path = _path(mapping, conv.get("current_node"))
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
            item = _message(msg, node_id, session)
        except Shape as e:
            yield InputProblem(name, None, f"conversation {ci}, message {depth}: unexpected shape: {e}")
            continue
        if item is not None:
            if item.ts is None and created:  # a turn without its own time happened in the conversation
                item = Message(**{**item.__dict__, "ts": created})
            if start:
                item = Message(**{**item.__dict__, "start": True})
                start = False
            yield item


def _message(msg: object, node_id: str, session: str | None) -> Message | None:
    if not isinstance(msg, dict):
        raise Shape("message is not an object")
    author = msg.get("author") if isinstance(msg.get("author"), dict) else {}
    role = role_of(author.get("role"))
    meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
    content = msg.get("content") if isinstance(msg.get("content"), dict) else {}
    ctype = content.get("content_type")
    if meta.get("is_visually_hidden_from_conversation") or ctype in _DROPPED_TYPES:
        return None
    ts = normalize_ts(msg.get("create_time"))
    if role == "tool":
        return Message(role="tool", text="", ref=node_id, ts=ts, session=session, tools=1)
    recipient = msg.get("recipient")
    if role == "assistant" and isinstance(recipient, str) and recipient != "all":
        # The assistant addressing a tool (python, browser, dalle …): a tool call, not a reply.
        return Message(role="assistant", text="", ref=node_id, ts=ts, session=session, tools=1)
    if ctype not in _TEXT_TYPES:
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
