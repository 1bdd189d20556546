"""Chat-log input formats: bytes in, `Message`s out, in input order.

Owns one module per format (jsonl, openai, chatgpt, claude_code, codex, sillytavern, cursor, gemini,
antigravity, claude_ai, opencode, text) and their shared
parts: `lines` (the bounded line reader and the JSON-lines loop), `document` (whole-document input), `times`
(timestamps), `content` (content parts and roles), `records` (format names, items, the Shape error) and
`sniff` (format detection).

Pure: stdlib + memvault.model + memvault.errors only; never the capture service, vault/, redact/ or any higher
package, and never a file opened for writing. Grouping messages into turns, hygiene and redaction happen
later (capture). A reason in an `InputProblem` never quotes the input: it may hold a secret.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator

from memvault.errors import InputError

from . import (antigravity, chatgpt, claude_ai, claude_code, codex, cursor, gemini, jsonl, openai, opencode,
               sillytavern, text)
from .lines import iter_json_lines
from .records import FORMATS, Item
from .sniff import sniff_cut_line, sniff_format
from .times import normalize_ts

__all__ = ["FORMATS", "Item", "iter_messages", "normalize_ts", "sniff_cut_line", "sniff_format"]

# The line formats: each line's reader and, for those that hold lines back, what runs after the last line.
_LINE_FORMATS = {
    "jsonl": (jsonl.parse, None),
    "claude-code": (claude_code.parse, claude_code.finish),
    "codex": (codex.parse, codex.finish),
    "sillytavern": (sillytavern.parse, None),
    "cursor": (cursor.parse, None),
    "antigravity": (antigravity.parse, None),
}


def iter_messages(stream: typing.BinaryIO, fmt: str, name: str, *, sidechains: bool = False,
                  max_line_bytes: int = 8 * 1024 * 1024) -> Iterator[Item]:
    """Messages of one input, in input order, with an `InputProblem` for every part that could not be read."""
    if fmt == "openai":
        yield from openai.read(stream, name)
    elif fmt == "chatgpt":
        yield from chatgpt.read(stream, name)
    elif fmt == "claude-ai":
        yield from claude_ai.read(stream, name)
    elif fmt == "opencode":
        yield from opencode.read(stream, name)
    elif fmt == "gemini":
        yield from gemini.read(stream, name, sidechains, max_line_bytes)
    elif fmt == "text":
        yield from text.read(stream, name, max_line_bytes)
    elif fmt in _LINE_FORMATS:
        parse, finish = _LINE_FORMATS[fmt]
        yield from iter_json_lines(stream, name, parse, finish, sidechains, max_line_bytes)
    else:
        raise InputError(f"unknown format {fmt!r} (expected one of: {', '.join(FORMATS)})")
