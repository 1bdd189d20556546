"""Line input with bounded memory: the line reader that skips a line longer than the cap, and the loop that
turns each line of a JSON-lines input into a record for one format's `parse` (and its `finish` at the end).
"""

from __future__ import annotations

import io
import json
import typing
from collections.abc import Callable, Iterator

from memvault.model import InputProblem

from .records import Item, Shape


_CHUNK = 64 * 1024

# A line format's reader: (record, line number, the input's state) -> its items; a finisher yields what was
# held back (a tree's branch, deduplicated events) once every line is read.
Parse = Callable[[dict, int, dict], Iterator[Item]]
Finish = Callable[[dict], Iterator[Item]]


def iter_lines(stream: typing.BinaryIO, name: str,
               max_line_bytes: int) -> Iterator[tuple[int, str | None, list[InputProblem]]]:
    """(line number, decoded line or None when skipped, problems) with memory bounded by max_line_bytes."""
    lineno = 0
    while True:
        raw = _read_line(stream, max_line_bytes)
        if raw == b"":
            return
        lineno += 1
        if raw is None:
            reason = f"line longer than {max_line_bytes} bytes, skipped"
            yield lineno, None, [InputProblem(name, lineno, reason)]
            continue
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        problems = []
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = raw.decode("utf-8", errors="replace")
            problems.append(InputProblem(name, lineno, "invalid UTF-8, replaced"))
        yield lineno, line.rstrip("\r\n"), problems


def _read_line(stream: typing.BinaryIO, max_line_bytes: int) -> bytes | bytearray | None:
    """The next line (b"" at the end), or None when it was longer than the cap and has been skipped.

    Reads in bounded chunks into one growing buffer: `readline(limit)` alone would hold about twice the
    limit while it joins its pieces.
    """
    chunk = stream.readline(_CHUNK)
    if not chunk:
        return b""
    if chunk.endswith(b"\n"):  # the common case: a short line
        return chunk if len(chunk) - 1 <= max_line_bytes else None
    buf = bytearray(chunk)
    too_long = False
    while True:
        if len(buf) > max_line_bytes:
            too_long = True
            break
        chunk = stream.readline(_CHUNK)
        if not chunk:
            break
        ends = chunk.endswith(b"\n")
        if len(buf) + len(chunk) - ends > max_line_bytes:
            too_long = True
            break
        buf += chunk
        if ends:
            break
    if not too_long:
        return buf
    # Trigger: a line longer than the cap (a pasted dump, a corrupt file). Why: holding it would make memory
    # grow with the input. Outcome: drop what we have, skip the rest chunk by chunk, report it, go on.
    del buf
    while not chunk.endswith(b"\n"):
        chunk = stream.readline(_CHUNK)
        if not chunk:
            break
    return None


def json_line(line: str, name: str, lineno: int) -> object:
    """The JSON value of one line, or the `InputProblem` that says why it is not JSON."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        return InputProblem(name, lineno, f"invalid JSON: {e.msg} (column {e.colno})")
    except RecursionError:
        return InputProblem(name, lineno, "invalid JSON: nested too deeply")


def iter_json_lines(stream: typing.BinaryIO, name: str, parse: Parse, finish: Finish | None, sidechains: bool,
                    max_line_bytes: int) -> Iterator[Item]:
    """Every line as a JSON object handed to `parse` with the input's shared state; then `finish(state)`.

    A line that is not JSON, not an object, or not of the format's shape (`Shape`) becomes an `InputProblem`.
    """
    state: dict = {"name": name, "sidechains": sidechains}
    for lineno, line, problems in iter_lines(stream, name, max_line_bytes):
        yield from problems
        if line is None or not line.strip():
            continue
        obj = json_line(line, name, lineno)
        if isinstance(obj, InputProblem):
            yield obj
            continue
        if not isinstance(obj, dict):
            yield InputProblem(name, lineno, "unexpected shape: not a JSON object")
            continue
        try:
            yield from parse(obj, lineno, state)
        except Shape as e:
            yield InputProblem(name, lineno, f"unexpected shape: {e}")
    if finish is not None:
        yield from finish(state)


class Replay(io.RawIOBase):
    """Bytes already read (to sniff a format or tell a file's shape), then the rest of the stream: stdin
    cannot seek back."""

    def __init__(self, head: bytes, rest: typing.BinaryIO):
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        if self._head:
            n = min(len(buf), len(self._head))
            buf[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buf))
        n = len(data)
        buf[:n] = data
        return n
