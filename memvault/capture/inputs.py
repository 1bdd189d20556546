"""Capture's inputs: the files a folder holds (`walk_folder`), and opening one input: sniffing its format from
the first bytes (stdin cannot seek back, so the bytes read are replayed), including a first line longer than
the sniffing window. Reads only."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from memvault.capture import formats
from memvault.capture.formats.lines import Replay
from memvault.errors import InputError

SNIFF_BYTES = 64 * 1024
# The names a chat log goes by; in a folder, a file of any other name (a config, an image, a script) is skipped.
LOG_SUFFIXES = (".jsonl", ".json", ".ndjson", ".txt", ".md", ".markdown", ".log")


@dataclass
class Folder:
    """What `capture DIR` finds: the files to read (sorted), the ones it skips with the reason, and the
    folders it cannot list (refused, as an unreadable file is)."""

    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def walk_folder(folder: Path) -> Folder:
    """Every file under `folder`, recursively, in name order. Hidden files and folders (`.git`, `.DS_Store`),
    files whose name no chat log has, and a memvault vault are skipped; symbolic links to folders are not
    followed (no loops)."""
    out = Folder()

    def unreadable(exc: OSError) -> None:
        out.unreadable.append((str(exc.filename or folder), f"cannot read ({exc.strerror or exc})"))

    for here, dirs, names in os.walk(folder, onerror=unreadable):
        if "memvault.yaml" in names and "episodes" in dirs:
            # Trigger: a vault inside the folder (`capture ~/notes` with the vault in it). Why: its own day
            # files and cards are no chat logs, and reading them back would store turns twice. Outcome: skipped.
            out.skipped.append((here, "a memvault vault"))
            dirs[:] = []
            continue
        for d in sorted(d for d in dirs if d.startswith(".")):
            out.skipped.append((os.path.join(here, d), "hidden folder"))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(here) / name
            if name.startswith("."):
                out.skipped.append((str(path), "hidden file"))
            elif not name.lower().endswith(LOG_SUFFIXES):
                out.skipped.append((str(path), "not a chat-log file name (" + ", ".join(LOG_SUFFIXES) + ")"))
            else:
                out.files.append(path)
    return out


def open_messages(stream: BinaryIO, fmt: str, name: str, sidechains: bool,
                  max_line_bytes: int) -> tuple[str, Iterator]:
    """(format used, the input's messages): sniffed from its first bytes with `fmt` auto. UnknownShape (exit 2)
    when the format cannot be told."""
    head = stream.read(SNIFF_BYTES)
    if isinstance(head, str):
        raise InputError(f"{name}: input must be read as bytes")
    if fmt == "auto":
        if not head.strip():
            return "empty", iter(())
        try:
            fmt = formats.sniff_format(head)
        except InputError as exc:
            if b"\n" in head or len(head) < SNIFF_BYTES:
                raise UnknownShape(name, exc.message) from None
            # Trigger: the first line is longer than the sniffing window (a pasted dump as the first message).
            # Why: its cut JSON cannot be parsed, but its leading keys or the next lines tell the format.
            # Outcome: the prefix's keys, else the lines after it, decide; the bytes read are replayed.
            fmt, head = _sniff_past_first_line(head, stream, max_line_bytes)
            if fmt is None:
                raise UnknownShape(name, exc.message) from None
    elif fmt not in formats.FORMATS:
        raise InputError(f"unknown format {fmt!r}; choose one of auto, {', '.join(formats.FORMATS)}")
    joined = io.BufferedReader(Replay(head, stream), buffer_size=1 << 16)
    return fmt, formats.iter_messages(
        joined, fmt, name, sidechains=sidechains, max_line_bytes=max_line_bytes
    )


def _sniff_past_first_line(head: bytes, stream: BinaryIO, max_line_bytes: int) -> tuple[str | None, bytes]:
    """(format or None, every byte read so far to replay) for an input whose first line is longer than `head`.

    Memory stays bounded by the line cap: of a first line longer than `max_line_bytes`, only its first
    `max_line_bytes + 1` bytes are kept, so the line reader still skips it and reports it as too long."""
    fmt = formats.sniff_cut_line(head)
    if fmt is not None:
        return fmt, head
    line = bytearray(head)
    while True:
        chunk = stream.readline(SNIFF_BYTES)
        if not chunk:
            break
        if len(line) <= max_line_bytes:
            line += chunk[: max_line_bytes + 1 - len(line)]
        if chunk.endswith(b"\n"):
            break
    first = bytes(line).rstrip(b"\n") + b"\n"
    after = stream.read(SNIFF_BYTES)
    try:
        fmt = formats.sniff_format(after) if after.strip() else None
    except InputError:
        fmt = None
    return fmt, first + after


class UnknownShape(InputError):
    """An input whose format cannot be told from its start; the message names the input."""

    def __init__(self, name: str, reason: str):
        self.reason = reason
        super().__init__(f"{name}: {reason}")
