"""Whole-document input (openai, chatgpt): read all bytes, decode, parse the JSON once, report what fails."""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Iterator

from memvault.model import InputProblem

from .records import Item


def each_conversation(doc: object, name: str, key: str, kind: type,
                      read_one: Callable[[dict, int], Iterator[Item]]) -> Iterator[Item]:
    """An export's conversations (a list of them, or one): each whose `key` holds a `kind` goes to
    `read_one(conversation, its number)`; any other is reported and skipped."""
    for ci, conv in enumerate(doc if isinstance(doc, list) else [doc], start=1):
        if not isinstance(conv, dict) or not isinstance(conv.get(key), kind):
            yield InputProblem(name, None, f"conversation {ci}: unexpected shape: no {key}")
            continue
        yield from read_one(conv, ci)


def iter_document(stream: typing.BinaryIO, name: str, read_doc: Callable[[object], Iterator[Item]],
                  read_lines: Callable[[str], Iterator[Item]] | None = None) -> Iterator[Item]:
    """The items `read_doc` finds in the parsed document. With `read_lines`, text holding one JSON value per
    line (parsing stops at "Extra data") goes there instead."""
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
        if read_lines is not None and e.msg == "Extra data":
            yield from read_lines(text)
            return
        yield InputProblem(name, e.lineno, f"invalid JSON: {e.msg} (line {e.lineno} column {e.colno})")
        return
    except RecursionError:
        yield InputProblem(name, None, "invalid JSON: nested too deeply")
        return
    yield from read_doc(doc)
