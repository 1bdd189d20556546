"""Edit a JSON document as text: set or remove one member, append or remove array items, and leave every other
byte as it was (the person's formatting, key order, comments, and the settings memvault does not own).

JSONC too (Gemini CLI's settings.json may hold `//` and `/* */` comments, which Gemini itself reads): every
position is found in a copy of the text with its comments blanked out (same length, same line breaks), and the
edit is made on the text itself, so the comments stay where they were.

Pure (standard library only). Positions come from the standard decoder (`raw_decode`, `scanstring`), so text is
only cut at member and item boundaries it found. A path is a sequence of keys (str, into objects) and indexes
(int, into arrays). New text follows the document's layout: the indentation of the container's members (else
the container's line plus the document's unit), or one line for a container written on one line. Inserting a
member or item and then removing it gives back the same bytes.

A document that is not a JSON object, or a path through something else than what it names, is a ValueError
with a line number, never a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from json.decoder import scanstring
from typing import Any, Union

Path = Sequence[Union[str, int]]
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Span:
    key: str | None  # None for an array item
    start: int  # a member: its key's opening quote; an item: its first character
    value_start: int
    value_end: int


def blank_comments(text: str) -> str:
    """`text` with its `//` and `/* */` comments (outside strings) replaced by spaces, line breaks kept: the same
    length, so positions in it are positions in `text`. A comment left open runs to the end."""
    if "/" not in text:
        return text
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [c if c in "\r\n" else " " for c in text[i:end]]
            i = end
        else:
            i += 1
    return "".join(out)


def _ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


def _where(text: str, pos: int) -> str:
    return f"line {text.count(chr(10), 0, pos) + 1}"


def _spans(text: str, start: int) -> tuple[list[Span], int]:
    """The members (object) or items (array) of the container opening at `start`, and its closing position."""
    text = blank_comments(text)
    is_obj = text.startswith("{", start)
    close_ch = "}" if is_obj else "]"
    out: list[Span] = []
    pos = _ws(text, start + 1)
    if text.startswith(close_ch, pos):
        return out, pos
    while True:
        key, first = None, pos
        if is_obj:
            if not text.startswith('"', pos):
                raise ValueError(f"{_where(text, pos)}: expected a key")
            key, after = scanstring(text, pos + 1)
            colon = _ws(text, after)
            if not text.startswith(":", colon):
                raise ValueError(f"{_where(text, colon)}: expected ':'")
            pos = _ws(text, colon + 1)
        try:
            _value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{_where(text, exc.pos)}: {exc.msg}") from None
        out.append(Span(key, first, pos, end))
        pos = _ws(text, end)
        if text.startswith(",", pos):
            pos = _ws(text, pos + 1)
        elif text.startswith(close_ch, pos):
            return out, pos
        else:
            raise ValueError(f"{_where(text, pos)}: expected ',' or '{close_ch}'")


def check(text: str) -> Any:
    """The parsed document, which must be a JSON object; else ValueError naming the line."""
    try:
        value = json.loads(blank_comments(text))
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {exc.lineno}: {exc.msg}") from None
    if not isinstance(value, dict):
        raise ValueError("line 1: the document is not a JSON object")
    return value


def _container(text: str, path: Path) -> int:
    """Position of the `{` or `[` the path leads to (KeyError when a step is missing)."""
    check(text)
    text = blank_comments(text)
    pos = _ws(text, 0)
    for step in path:
        spans, _close = _spans(text, pos)
        if isinstance(step, int):
            if not text.startswith("[", pos) or not 0 <= step < len(spans):
                raise KeyError(step)
            pos = spans[step].value_start
        else:
            found = next((s for s in spans if s.key == step), None) if text.startswith("{", pos) else None
            if found is None:
                raise KeyError(step)
            pos = found.value_start
        if not text.startswith(("{", "["), pos):
            raise ValueError(f"{_where(text, pos)}: {step!r} is not an object or a list")
    return pos


def get(text: str, path: Path) -> Any:
    """The value at `path`, or None when a step on the way is missing."""
    value: Any = check(text)
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    return re.match(r"[ \t]*", text[line_start:]).group(0)


def unit(text: str) -> str:
    """The document's indentation unit: that of its first indented line, else two spaces."""
    m = re.search(r"\n([ \t]+)\S", text)
    return m.group(1) if m else "  "


def _render(value: Any, indent: str, step: str, inline: bool) -> str:
    if inline:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return json.dumps(value, ensure_ascii=False, indent=step).replace("\n", "\n" + indent)


def _insert(text: str, open_pos: int, piece: Callable[[str, bool], str]) -> str:
    """Text with a new member or item (`piece(indent, inline)`) after the container's last one."""
    spans, close = _spans(text, open_pos)
    if spans:
        last = spans[-1]
        if "\n" not in text[open_pos:spans[0].start]:
            return text[:last.value_end] + ", " + piece("", True) + text[last.value_end:]
        indent = _line_indent(text, spans[0].start)
        return text[:last.value_end] + ",\n" + indent + piece(indent, False) + text[last.value_end:]
    outer = _line_indent(text, open_pos)
    indent = outer + unit(text)
    inside = text[open_pos + 1:close]
    if inside.strip():  # only a comment inside: it stays, after the new member
        return text[:open_pos + 1] + "\n" + indent + piece(indent, False) + inside + text[close:]
    return text[:open_pos + 1] + "\n" + indent + piece(indent, False) + "\n" + outer + text[close:]


def set_value(text: str, path: Path, value: Any) -> str:
    """Text with the member at `path` (its last step a key) set to `value`: replaced in place, or added with
    the objects on the way that are missing."""
    step = unit(text)
    for depth in range(len(path) - 1, -1, -1):  # the deepest container that exists
        try:
            pos = _container(text, path[:depth])
            break
        except KeyError:
            continue
    else:  # pragma: no cover - the root always exists
        raise ValueError("no document")
    key = path[depth]
    if not isinstance(key, str) or not text.startswith("{", pos):
        raise ValueError(f"{'.'.join(map(str, path[:depth + 1]))}: not a key of an object")
    spans, _close = _spans(text, pos)
    member = next((s for s in spans if s.key == key), None)
    if member is not None and depth == len(path) - 1:
        inline = "\n" not in text[pos:member.start] if spans else False
        indent = _line_indent(text, member.start)
        return text[:member.value_start] + _render(value, indent, step, inline) + text[member.value_end:]
    nested: Any = value
    for later in reversed(path[depth + 1:]):
        nested = {later: nested}
    return _insert(text, pos, lambda indent, inline: json.dumps(key, ensure_ascii=False) + ": "
                   + _render(nested, indent, step, inline))


def remove(text: str, path: Path) -> str:
    """Text without the member or item at `path` (unchanged when there is none)."""
    try:
        pos = _container(text, path[:-1])
    except KeyError:
        return text
    spans, _close = _spans(text, pos)
    last = path[-1]
    if isinstance(last, int):
        i = last if text.startswith("[", pos) and 0 <= last < len(spans) else None
    else:
        i = next((n for n, s in enumerate(spans) if s.key == last), None) if text.startswith("{", pos) else None
    if i is None:
        return text
    if i > 0:
        return text[:spans[i - 1].value_end] + text[spans[i].value_end:]
    if len(spans) > 1:
        return text[:spans[0].start] + text[spans[1].start:]
    return text[:pos + 1] + text[_ws(text, spans[0].value_end):]  # the only one: {} or [] is left


def append(text: str, path: Path, item: Any) -> str:
    """Text with `item` added at the end of the list at `path` (the list made when missing)."""
    current = get(text, path)
    if current is None:
        return set_value(text, path, [item])
    if not isinstance(current, list):
        raise ValueError(f"{'.'.join(map(str, path))} is not a list")
    step = unit(text)
    return _insert(text, _container(text, path), lambda indent, inline: _render(item, indent, step, inline))
