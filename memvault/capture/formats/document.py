"""Whole-document input (openai, chatgpt): read all bytes, decode, parse the JSON once, report what fails."""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Iterator

from memvault.model import InputProblem

from .records import Item


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
