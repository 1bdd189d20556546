"""Error types. Each carries the exit code the CLI turns it into. Imports nothing from memvault.

A subclass names its code in its header: `class NoMatch(MemvaultError, code=1)`.
"""

from __future__ import annotations


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


class ReadOnlyVault(MemvaultError, code=3):
    """A writing command on a vault this user cannot write (a read-only mount, another user's vault)."""


class Busy(MemvaultError, code=4):
    """Another process holds the lock."""


class LLMError(MemvaultError, code=5):
    """The model endpoint failed or answered nonsense."""


class EmbedError(MemvaultError, code=5):
    """The embeddings endpoint failed or answered something unusable. Names the endpoint, never the key."""


class Interrupted(MemvaultError, code=130):
    """Stopped by a signal (Ctrl-C)."""
