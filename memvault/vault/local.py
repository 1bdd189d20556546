"""Where the vault's local files live, and whether the vault can be written at all.

`.memvault/` at the vault root holds two sorts of local files: the vault's own (locks, the write-intent of a
card change, distill state) and derived ones (the search index, vectors, parse caches), deletable at any time.
A vault that cannot be written (a read-only mount, another user's vault) still answers every reading command:
its derived files then live in a per-user cache, `$XDG_CACHE_HOME/memvault/<hash of the vault's path>/`
(`~/.cache/...` by default), or, when that cannot be written either, nowhere (the index is built in memory for
the one command). Writing commands refuse such a vault with ReadOnlyVault (exit 3) before they change anything.
"""

from __future__ import annotations

import errno
import os

from memvault.errors import ReadOnlyVault

TYPE_CHECKING = False  # typing's own constant: pathlib only for annotations (a search imports no pathlib)
if TYPE_CHECKING:
    from pathlib import Path

LOCAL = ".memvault"
# Errors of a write that say the place cannot be written (not that it is full or broken).
READ_ONLY_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)


def writable(root: str | os.PathLike) -> bool:
    """Whether this process can write the vault: its root and its .memvault/ (when there is one)."""
    local = os.path.join(root, LOCAL)
    if not os.access(root, os.W_OK | os.X_OK):
        return False
    return not os.path.exists(local) or os.access(local, os.W_OK | os.X_OK)


def require_writable(root: Path, what: str = "this command") -> None:
    """Raise ReadOnlyVault (exit 3) when the vault cannot be written."""
    if not writable(root):
        raise ReadOnlyVault(f"the vault {root} cannot be written by this user (a read-only mount, or another "
                            f"user's files): {what} writes to it; reading commands work (search, show, "
                            "timeline, context, stats, …)")


def derived_dir(root: str | os.PathLike) -> Path | None:
    """Where the derived files of the vault at `root` go: its .memvault/ when it can be written, else the
    per-user cache folder for it; None when neither can be written (keep them in memory)."""
    where = derived_path(root)
    if where is None:
        return None
    from pathlib import Path

    return Path(where)


def derived_path(root: str | os.PathLike) -> str | None:
    """derived_dir as a string path: the search's fast path does without pathlib (~17 M instructions to import,
    urllib.parse and ipaddress with it, in every search process)."""
    root = os.fspath(root)
    local = os.path.join(root, LOCAL)
    if os.path.isdir(local) and os.access(local, os.W_OK | os.X_OK) or not os.path.exists(local) and writable(root):
        return local
    return _user_cache(root)


def user_cache(root: str | os.PathLike) -> Path | None:
    """$XDG_CACHE_HOME/memvault/<16 hex of sha256 of the vault's resolved path>/, created (0700); None when it
    cannot be."""
    where = _user_cache(root)
    if where is None:
        return None
    from pathlib import Path

    return Path(where)


def _user_cache(root: str | os.PathLike) -> str | None:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None  # the XDG rule: a relative path is invalid and ignored
    import hashlib  # only a vault this user cannot write needs it: not on every search's start-up

    key = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    path = os.path.join(base, "memvault", key)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK | os.X_OK) else None
