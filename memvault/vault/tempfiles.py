"""Temp files a stopped writer left behind, and what happens after a writer died holding the card-change lock.

Every whole-file write goes through a temp file `.<name>.<random>.tmp` in the file's folder (files.atomic_write);
a crash between writing it and renaming it leaves it there, and it may hold text a later `forget --purge`
removes everywhere else. Writers of the vault's folders hold the card-change lock (`distill.lock`), so a temp
file older than the lock's current holder belongs to a writer that is gone: the next writer removes it
(`settle`), `doctor --fix` too, and `doctor` reports it.
"""

from __future__ import annotations

import time
from pathlib import Path

from memvault.vault.files import remove_file
from memvault.vault.store import Vault

LOCK = "distill.lock"
# Local files written under that lock whose temp copies may hold a card's text (the write-intent holds
# before-images); the other derived files of .memvault/ are written by readers too (a search's caches), whose
# temp files count as left behind only once they are an hour old (no such write takes a second).
LOCAL_NAMES = ("write-intent.json", "purges.json")
DERIVED_AGE_NS = 3600 * 10**9


def _folders(vault: Vault) -> list[Path]:
    root = vault.root
    out = [root, root / "entities", root / "journal", root / "audit"]
    out += sorted(p for p in (root / "cards").glob("*") if p.is_dir() and not p.is_symlink())
    out += sorted(p for p in (root / "episodes").glob("[0-9]*/[0-9]*") if p.is_dir() and not p.is_symlink())
    return out


def stale(vault: Vault, before_ns: int | None = None) -> list[Path]:
    """Temp files of ours older than `before_ns` (default: the lock's holder, or now when none holds it)."""
    if before_ns is None:
        before_ns = holder_since(vault)
    found = []
    candidates = [p for folder in _folders(vault) for p in folder.glob(".*.tmp")]
    mine = [p for name in LOCAL_NAMES for p in vault.local.glob(f".{name}.*.tmp")]
    derived = [p for p in vault.local.glob(".*.tmp") if p not in mine]
    old = min(before_ns, time.time_ns() - DERIVED_AGE_NS)
    for path, limit in [*((p, before_ns) for p in candidates + mine), *((p, old) for p in derived)]:
        try:
            st = path.lstat()
        except FileNotFoundError:
            continue
        if not path.is_symlink() and st.st_mtime_ns < limit:
            found.append(path)
    return sorted(found)


def holder_since(vault: Vault) -> int:
    """When the lock's current holder took it (the lock file's time: it writes its pid there), or now."""
    from memvault.vault.files import is_locked

    path = vault.local / LOCK
    if is_locked(path):
        try:
            return path.stat().st_mtime_ns
        except FileNotFoundError:
            pass
    return time.time_ns()


def sweep(vault: Vault, before_ns: int) -> list[str]:
    """Remove the stale temp files (the caller holds the lock, taken at `before_ns`); their vault paths."""
    return [vault.rel(p) for p in stale(vault, before_ns) if remove_file(p)]


def settle(vault: Vault, since_ns: int, holder_died: bool) -> list[str]:
    """What the card-change lock's new holder does first: a write-intent whose journal line exists is dropped
    (its before-images hold text), temp files of a writer that died go, and unfinished purges are finished.
    Returns the vault paths it changed or removed."""
    from memvault.vault import pages, purges

    done = []
    if (vault.local / pages.INTENT).exists() and pages.interrupted(vault) is None:
        pages.recover(vault)  # committed (or torn): only deletes the file, rolls nothing back
        done.append(f"{vault.rel(vault.local / pages.INTENT)}")
    if holder_died:
        done += sweep(vault, since_ns)
    done += purges.finish_all(vault)
    return done


def settle_if_free(vault: Vault) -> None:
    """What a writing command that does not take the card-change lock (capture, reindex) does first: when no
    card change runs now, take the lock for a moment, which finishes what a stopped writer left (`settle`), and
    roll back a change set stopped before its journal line, as the next distill would. Busy: the holder does."""
    from memvault.errors import Busy
    from memvault.vault.pages import recover

    try:
        with vault.exclusive("distill", "distill or another card change"):
            recover(vault)
    except Busy:
        pass
