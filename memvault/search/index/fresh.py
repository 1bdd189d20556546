"""A build from nothing into a new file: the first search of a big vault, `reindex`, a new schema version.

Why: SQLite's write-ahead log, which lets readers read while a writer writes, cost a build from nothing a copy of
every page (at 1M cards the WAL wrote 6.6 GB for a 2 GB index; the build's commit and checkpoint alone ~12 s,
~22 s of the whole build in all). Nobody reads a file nobody knows yet, so a build of an empty index of
BULK cards or more writes `search-<id>.sqlite` without a journal and without syncing each write, then:
- switches it to WAL (what every reader expects), closes it and fsyncs it;
- points `search.sqlite` at it: a symlink made under a temporary name and renamed over `search.sqlite` (atomic).
  SQLite names a database's `-wal` and `-shm` after the file a symlink points to, so a reader of the old file
  (by the symlink before the swap, or a plain `search.sqlite` of an older build) and a reader of the new one
  never share them;
- deletes the files of earlier builds (a reader that has one open keeps reading it until it closes).
A crash (kill -9, power) before the rename leaves `search.sqlite` as it was and an orphan `search-<id>.sqlite`,
which the next build from nothing deletes. One build at a time: `.memvault/build.lock`; a process that finds it
taken waits for it and then opens what that build made. Where no symlink can be made, the build is the old one:
in place, in `search.sqlite`, through the WAL.
"""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False  # typing's own constant, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

from memvault.search.index import schema
from memvault.vault.files import flock, fsync_path, make_symlink, remove_file, replace_durably

PREFIX, SUFFIX = "search-", ".sqlite"
LOCK = "build.lock"


def enough_cards(root: str) -> bool:
    """Whether the vault holds cards.BULK card files or more (a bulk build; counts the month folders' entries and
    stops there)."""
    from memvault.search.index import cards

    at_least, n = cards.BULK, 0
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        with os.scandir(os.path.join(root, "cards")) as months:
            for month in months:
                if month.name.startswith(".") or not month.is_dir():
                    continue
                with os.scandir(month.path) as it:
                    for entry in it:
                        n += entry.name.endswith(".md") and not entry.name.startswith(".")
                        if n >= at_least:
                            return True
    return False


def build(idx: Any, refresh: Callable[[], Any], replace: bool = False) -> Any:
    """Run `refresh` (the refresh transaction) against a new file and put it in place; returns its report, or
    None when the caller should refresh the index as it is (another process built it meanwhile, or no symlink
    can be made here). `replace` (reindex): build even when the index holds cards (searches read it until the
    swap), after waiting for a build in progress."""
    lock = os.path.join(idx.local, LOCK)
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(flock(lock, blocking=False))
        except BlockingIOError:
            # Another process is building this index from nothing: wait for it; then refresh what it made, or
            # (`replace`: the caller asked for a whole new index) build again.
            held.enter_context(flock(lock, blocking=True))
            if not replace:
                idx._reconnect()
                return None
        idx._reconnect()  # another build may have finished between our look and the lock
        if not replace and (idx.card_count() or idx.db.execute("SELECT 1 FROM cards LIMIT 1").fetchone()):
            return None
        return _build_locked(idx, refresh)


def _build_locked(idx: Any, refresh: Callable[[], Any]) -> Any:
    ident = os.urandom(6).hex()
    name = f"{PREFIX}{ident}{SUFFIX}"
    new = os.path.join(idx.local, name)
    link = os.path.join(idx.local, f".{PREFIX}{ident}.link")
    if not make_symlink(name, link):  # (relative: the folder can move)
        return None  # no symlinks here (some file systems): the build in place
    old_db = idx.db
    try:
        idx.db = schema.connect_unjournaled(new, idx.mode)
        report = refresh()
        idx.db.execute("PRAGMA journal_mode=WAL")
        idx.db.close()
        fsync_path(new)
        replace_durably(link, idx.path)
    except BaseException:
        with contextlib.suppress(Exception):
            idx.db.close()
        idx.db = old_db
        remove_file(link)
        schema.remove_files(new)
        raise
    idx.db = old_db
    idx._reconnect()  # now the new file, through the symlink
    _remove_others(idx.local, name)
    return report


def _remove_others(local: str, keep: str) -> None:
    """Delete the files of earlier builds: other `search-<id>.sqlite` (with their -wal, -shm) and the -wal, -shm
    a plain `search.sqlite` of an older layout left (the file itself was replaced by the symlink)."""
    for suffix in ("-wal", "-shm"):
        remove_file(os.path.join(local, schema.FILE + suffix))
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(local):
            if _ours(entry.name) not in (None, keep):
                remove_file(entry.path)


def _ours(name: str) -> str | None:
    """The build file a name belongs to (`search-<id>.sqlite` for itself, its -wal, -shm and its temporary
    `.search-<id>.link`), or None for any other file (search-settings.json, ...)."""
    link = name.startswith(f".{PREFIX}") and name.endswith(".link")
    stem = name[len(PREFIX) + 1:-len(".link")] if link else name[len(PREFIX):].partition(SUFFIX)[0]
    rest = "" if link else name[len(PREFIX) + len(stem) + len(SUFFIX):]
    if not (link or name.startswith(PREFIX)) or len(stem) != 12 or rest not in ("", "-wal", "-shm", "-journal"):
        return None
    if any(c not in "0123456789abcdef" for c in stem):
        return None
    return "" if link else f"{PREFIX}{stem}{SUFFIX}"
