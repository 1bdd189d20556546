"""Low-level file operations: the only code in memvault that writes, renames, removes or locks files.

Whole-file writes are atomic (temp file in the same folder, fsync, os.replace). Appends use O_APPEND with one
write() per batch of whole lines, after repairing a torn last line; the caller holds the append lock (flock).
Knows nothing of the vault's layout: callers pass paths.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Callable, Iterator

from memvault.vault.faults import crash_point

TYPE_CHECKING = False  # typing's own constant: pathlib only for annotations (a search imports no pathlib)
if TYPE_CHECKING:
    from pathlib import Path


def atomic_write(path: Path, data: str | bytes, durable: bool = True) -> None:
    """Write a whole file so that readers see the old bytes or the new bytes, never a mix.

    `durable=False` skips the fsync, for many new derived files written in one go (reindex): the caller
    syncs once at the end (`sync_all`) instead of paying one fsync per file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    import tempfile  # here, not at the top: ~5 ms of every search's start-up, and a search writes nothing

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        crash_point("atomic-write")  # the temp file is whole, the rename not done: what a crash leaves behind
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = os.fspath(path)  # a full disk is reported naming the file (cli.common.guard)
        raise


def read_cache(path: Path | None, key, field: str = "files") -> dict:
    """The `field` (a dict) of a derived cache that write_cache wrote under the same `key` (a version, a digest of
    the rules it depends on); {} when there is none, it is another key's, or it is damaged."""
    import marshal

    try:
        data = marshal.loads(path.read_bytes()) if path is not None else {}
        found = data[field] if data.get("key") == key else {}
    except (OSError, ValueError, EOFError, TypeError, KeyError, AttributeError):
        return {}
    return found if isinstance(found, dict) else {}


def write_cache(path: Path | None, key, found: dict, known: dict, field: str = "files") -> None:
    """Keep `found` as the `field` of a cache under `key` for read_cache, when it differs from what read_cache
    gave (`known`). Best effort: the cache is derived, so a full disk, a folder this user cannot write or a value
    marshal cannot hold only costs the next run its speed."""
    import marshal

    if found != known and path is not None:
        with contextlib.suppress(OSError, ValueError):
            atomic_write(path, marshal.dumps({"key": key, field: found}))


def sync_all() -> None:
    """Flush every written file to disk (after writes made with `durable=False`)."""
    os.sync()


def repair_torn_tail(path: Path) -> int:
    """Cut a last line that a crash left without its newline. Returns the number of bytes removed.

    Trigger: the file does not end in b"\\n". Why: a torn line is an incomplete write of ours and appending after
    it would glue a good line onto garbage. Outcome: the fragment is dropped (capture is idempotent, so the
    next capture of the same log stores that turn again).
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # Walk back to the previous newline in chunks.
        pos = size
        while pos > 0:
            step = min(65536, pos)
            fh.seek(pos - step)
            chunk = fh.read(step)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                pos = pos - step + nl + 1
                break
            pos -= step
        fh.truncate(pos)
        fh.flush()
        os.fsync(fh.fileno())
        return size - pos


def append_lines(path: Path, lines: list[str]) -> None:
    """Append whole lines with one write(). The caller holds the append lock.

    Trigger: the write or its fsync fails (a full disk: ENOSPC, a quota). Why: a part of the lines may be in the
    file already, a torn last line that doctor would report. Outcome: the file is cut back to the size it had
    before, and the error goes up (the CLI says "no space left on PATH")."""
    if not lines:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    repair_torn_tail(path)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        start = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:  # a regular file takes it in one go; loop only for pathological short writes
                written = os.write(fd, view)
                view = view[written:]
                if view:
                    crash_point("append-part")
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass
            if exc.filename is None:
                exc.filename = os.fspath(path)
            raise
    finally:
        os.close(fd)


def iter_lines(path: Path, max_line_bytes: int = 64 * 1024 * 1024) -> Iterator[tuple[int, bytes | None]]:
    """(line number, raw line without newline) for each line; None for a line over the cap (not loaded)."""
    with open(path, "rb") as fh:
        lineno = 0
        while True:
            chunk = fh.readline(max_line_bytes + 1)
            if not chunk:
                return
            lineno += 1
            if len(chunk) > max_line_bytes and not chunk.endswith(b"\n"):
                while chunk and not chunk.endswith(b"\n"):
                    chunk = fh.readline(1024 * 1024)
                yield lineno, None
                continue
            yield lineno, chunk.rstrip(b"\n")


def rewrite_lines(path: Path, edit: Callable[[int, bytes], bytes | None]) -> bool:
    """Rewrite a line file through `edit(line number, raw line)`, which returns the line to keep (the same bytes,
    or new ones) or None to drop it. The file is replaced atomically, and only when a line changed; returns
    whether it was. A line over iter_lines' cap is dropped, as no edit can read it."""
    out: list[bytes] = []
    changed = False
    for lineno, raw in iter_lines(path):
        new = None if raw is None else edit(lineno, raw)
        changed = changed or new != raw
        if new is not None:
            out.append(new)
    if changed:
        atomic_write(path, b"".join(line + b"\n" for line in out))
    return changed


@contextlib.contextmanager
def flock(path: str | os.PathLike, blocking: bool) -> Iterator[int]:
    """An exclusive flock on `path` (created if missing) for the `with` block; BlockingIOError when not
    `blocking` and another process holds it. Yields the open descriptor; closing it releases the flock (the
    kernel also releases it when the process dies, kill -9). contextlib's decorator, not a hand-written class:
    a search's process imports contextlib anyway (search/index/fresh.py), and the classes saved under 2 % of a
    whole search's CPU time (issue 37: two same-hour A/Bs at 10k cards, wall time within noise)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            raise BlockingIOError from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


def is_locked(path: Path) -> bool:
    """Whether another process holds the flock on `path` now. Opens it read-only and never creates it, so it
    also answers on a read-only vault."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)
    finally:
        os.close(fd)


def ends_with_newline(path: Path) -> bool:
    """True when the file is empty or its last byte is a newline (no torn line at the end)."""
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def remove_file(path: str | os.PathLike) -> bool:
    """Remove one file; a file that is already gone is fine. Returns whether a file was removed."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def remove_empty_dirs(paths: list[str | os.PathLike]) -> list[str]:
    """Remove each folder that is empty (deepest first); a folder with anything in it, or already gone, stays as
    it is. Returns the folders removed."""
    done = []
    for path in sorted(map(str, paths), key=len, reverse=True):
        try:
            os.rmdir(path)
        except OSError:  # not empty, gone, or not ours to remove: left alone
            continue
        done.append(path)
    return done


def make_symlink(target: str, link: str | os.PathLike) -> bool:
    """Make `link` a symbolic link to `target` (a name in the link's folder); False where the file system or the
    OS allows none."""
    try:
        os.symlink(target, link)
    except (OSError, NotImplementedError):
        return False
    return True


def replace_durably(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Rename `src` over `dst` (atomic: a reader finds one or the other) and fsync their folder, so that the rename
    survives a crash."""
    os.replace(src, dst)
    # Best effort: some systems cannot open a folder to sync it (Windows); the rename stands either way, and a
    # crash before it reaches the disk leaves the file that was there (derived data, rebuilt when missing).
    try:
        fsync_path(os.path.dirname(os.fspath(dst)) or ".")
    except OSError:
        pass


def fsync_path(path: str | os.PathLike) -> None:
    """Flush one file or folder to disk by name (a file another library wrote with its own syncs off)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_tree(path: str | os.PathLike) -> None:
    """Remove a folder and everything in it (derived data only, e.g. an old search list); gone already is fine."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def ensure_dir(path: Path) -> Path:
    """The folder `path`, created with its parents if missing."""
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_at(path: Path, offset: int, data: bytes) -> None:
    """Write `data` at byte `offset` of `path` (created if missing), then fsync: the rows of a derived matrix
    file (search/dense), whose caller records them as valid only after this returns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.pwrite(fd, view, offset)
            view = view[written:]
            offset += written
        os.fsync(fd)
    finally:
        os.close(fd)
