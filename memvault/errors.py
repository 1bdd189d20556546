"""Error types. Each carries the exit code the CLI turns it into. Imports nothing from memvault.

A subclass names its code in its header: `class NoMatch(MemvaultError, code=1)`.
"""

from __future__ import annotations

import errno


class MemvaultError(Exception):
    """Base class: a problem we can explain to the user in one line."""

    exit_code = 70

    def __init_subclass__(cls, code: int | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.exit_code = code

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NoMatch(MemvaultError, code=1):
    """Nothing matched (exit 1, like grep)."""


class UsageError(MemvaultError, code=2):
    """A command line or setting that cannot work."""


class InputError(MemvaultError, code=2):
    """Bad input data (a chat log we could not read at all)."""


class VaultMissing(MemvaultError, code=3):
    """No vault where one was looked for."""


class VaultFormatError(MemvaultError, code=3):
    """A vault file that does not parse. Never includes the offending text (it may hold a secret)."""

    def __init__(self, path: str, line: int | None, reason: str):
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


class OutsideVault(VaultFormatError, ValueError):
    """A write that would go through a link to a place outside the vault (memvault.vault.edge). A ValueError
    too, so that callers skipping an unsafe entity page name skip it alike."""


class ReadOnlyVault(MemvaultError, code=3):
    """A writing command on a vault this user cannot write (a read-only mount, another user's vault)."""


class Busy(MemvaultError, code=4):
    """Another process holds the lock."""


class LLMError(MemvaultError, code=5):
    """The model endpoint failed or answered nonsense."""


class EmbedError(MemvaultError, code=5):
    """The embeddings endpoint failed or answered something unusable. Names the endpoint, never the key."""


class NoSpace(MemvaultError, code=6):
    """The disk (or the user's quota) is full: a write failed for want of space. Nothing half-written stays
    (appends are cut back, whole-file writes go through a temp file): free space and run the command again."""

    @classmethod
    def at(cls, path: str) -> "NoSpace":
        return cls(f"no space left on {path}: free some space and run the command again")


# The file name memvault.__main__ gives the errors of writing standard output (an OSError of a write names no
# file): `memvault stats > /dev/full` was told the vault's .memvault/ folder was full.
STDOUT = "standard output"
_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", 122))  # a full disk, or a full quota


def unwritable_stdout(exc: BaseException) -> MemvaultError | None:
    """The one line for an error writing standard output, `cannot write standard output: No space left on
    device`, exit 6 for a full disk (as NoSpace) and 70 for any other; None for an error of anything else.
    A closed pipe (`| head`) is no error: the callers end quietly on BrokenPipeError before asking this."""
    if not isinstance(exc, OSError) or exc.filename != STDOUT:
        return None
    message = f"cannot write {STDOUT}: {exc.strerror or type(exc).__name__}"
    return NoSpace(message) if exc.errno in _FULL else MemvaultError(message)


def no_space(exc: BaseException, where: str = "") -> NoSpace | None:
    """NoSpace for an OSError ENOSPC/EDQUOT or SQLite's "database or disk is full" (on it or what it was raised
    from), naming the file when the error does (else `where`); None for any other error."""
    seen = 0
    while exc is not None and seen < 5:
        code = getattr(exc, "sqlite_errorcode", None)
        if getattr(exc, "errno", None) in _FULL or code == 13 or "disk is full" in str(exc):
            path = getattr(exc, "filename", None) or where or "the disk"
            return NoSpace.at(path)
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


class Interrupted(MemvaultError, code=130):
    """Stopped by a signal (Ctrl-C)."""
