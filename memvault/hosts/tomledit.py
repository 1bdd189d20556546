"""Edit one table of a TOML document as text (e.g. `[mcp_servers.memvault]` in Codex's config.toml), leaving
every other byte as it was. Python has a TOML reader (tomllib) but no writer; a table memvault owns is a block of
lines from its header to the next header, which is simple to replace, and every edit is checked by parsing the
result: it must equal the original document with only that table changed, or the edit is refused (a table
defined inline, a header inside a multi-line string …) with a message naming the file's problem, never a guess.

Pure (standard library only).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

_HEADER = re.compile(r"^[ \t]*\[\[?(?P<name>[^\]\n]*)\]\]?[ \t]*(?:#.*)?$")
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def parse(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from None


def _key(name: str) -> tuple[str, ...]:
    """The dotted key of a header's name (`mcp_servers."memvault"` -> ("mcp_servers", "memvault"))."""
    parts = []
    for raw in re.findall(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[^.]+', name):
        raw = raw.strip()
        parts.append(raw[1:-1] if raw[:1] in "\"'" else raw)
    return tuple(parts)


def _blocks(text: str, table: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) line ranges of the table's block and of its sub-tables' blocks."""
    lines = text.split("\n")
    want = tuple(table)
    out: list[tuple[int, int]] = []
    start = None
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if not m:
            continue
        if start is not None:
            out.append((start, i))
            start = None
        if _key(m.group("name"))[:len(want)] == want:
            start = i
    if start is not None:
        out.append((start, len(lines)))
    return out


def quote(value: str) -> str:
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, f"\\u{ord(ch):04x}"))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise ValueError(f"cannot write a {type(value).__name__} as a TOML value here")


def _name(table: Sequence[str]) -> str:
    return ".".join(k if _BARE.match(k) else quote(k) for k in table)


def render(table: Sequence[str], values: Mapping[str, Any]) -> str:
    """The table's block: scalar and list keys under its header, then one sub-table per mapping value."""
    lines = [f"[{_name(table)}]"]
    lines += [f"{_name([k])} = {_value(v)}" for k, v in values.items() if not isinstance(v, Mapping)]
    for k, v in values.items():
        if isinstance(v, Mapping):
            lines += ["", f"[{_name([*table, k])}]"] + [f"{_name([kk])} = {_value(vv)}" for kk, vv in v.items()]
    return "\n".join(lines) + "\n"


def without(data: dict[str, Any], table: Sequence[str]) -> dict[str, Any]:
    """A copy of parsed `data` without the table, and without parents it leaves empty."""
    import copy

    data = copy.deepcopy(data)
    trail = [data]
    for key in table[:-1]:
        nxt = trail[-1].get(key)
        if not isinstance(nxt, dict):
            return data
        trail.append(nxt)
    trail[-1].pop(table[-1], None)
    for key, parent in zip(reversed(table[:-1]), reversed(trail[:-1])):  # parents left empty: as if never made
        if parent.get(key) == {}:
            parent.pop(key)
    return data


def _cut(text: str, table: Sequence[str]) -> tuple[list[str], int | None]:
    """The text's lines without the table's blocks (each with the blank line before it, which set_table adds;
    blank lines at a block's end stay as the separator before what follows), and the index in those lines where
    the first block was (None: no block)."""
    lines = text.split("\n")
    blocks = _blocks(text, table)
    if not blocks:
        return lines, None
    drop = set()
    for start, end in blocks:
        if end == len(lines) and lines[-1] == "":
            end -= 1  # the text's final newline is not the block's
        while end - 1 > start and not lines[end - 1].strip() and end < len(lines) - 1:
            end -= 1
        drop.update(range(start, end))
        if start > 0 and not lines[start - 1].strip():
            drop.add(start - 1)
    kept = [line for i, line in enumerate(lines) if i not in drop]
    at = sum(1 for i in range(blocks[0][0]) if i not in drop)
    return kept, at


def set_table(text: str, table: Sequence[str], values: Mapping[str, Any]) -> str:
    """Text with the table (and its sub-tables) replaced by `values` where it was, else added at the end after
    a blank line."""
    before = parse(text)
    block = render(table, values)
    kept, at = _cut(text, table)
    if at is None:
        if get_table(before, table) is not None:
            raise ValueError(f"[{_name(table)}] is defined in a form memvault does not edit (inline or dotted "
                             "keys): change it by hand")
        if not text.strip():
            out = block
        else:
            out = text + ("\n" if text.endswith("\n") else "\n\n") + block
    else:
        lead = [""] if at > 0 and kept[at - 1].strip() else []
        out = "\n".join(kept[:at] + lead + block.rstrip("\n").split("\n") + kept[at:])
        if not out.endswith("\n"):
            out += "\n"
    try:
        after = parse(out)
    except ValueError:
        after = None
    if after is None or without(after, table) != without(before, table) or get_table(after, table) != get_table(
            parse(block), table):
        raise ValueError(f"could not write [{_name(table)}] without changing other settings: change it by hand")
    return out


def remove_table(text: str, table: Sequence[str]) -> str:
    """Text without the table and its sub-tables (unchanged when there is none)."""
    before = parse(text)
    kept, at = _cut(text, table)
    if at is None:
        return text
    out = "\n".join(kept)
    try:
        after = parse(out)
    except ValueError:
        after = None
    if after is None or without(after, table) != without(before, table):
        raise ValueError(f"could not remove [{_name(table)}] without changing other settings: change it by hand")
    return out


def get_table(data: Mapping[str, Any], table: Sequence[str]) -> Any:
    node: Any = data
    for key in table:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node
