"""Error types. Each carries the exit code the CLI turns it into. Imports nothing from memvault."""

from __future__ import annotations


class MemvaultError(Exception):
    """Base class: a problem we can explain to the user in one line."""

    exit_code = 70

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NoMatch(MemvaultError):
    exit_code = 1


class UsageError(MemvaultError):
    exit_code = 2


class VaultMissing(MemvaultError):
    exit_code = 3


class VaultFormatError(MemvaultError):
    """A vault file that does not parse. Never includes the offending text (it may hold a secret)."""

    exit_code = 3

    def __init__(self, path: str, line: int | None, reason: str):
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


class InputError(MemvaultError):
    """Bad input data (a chat log we could not read at all)."""

    exit_code = 2


class Busy(MemvaultError):
    exit_code = 4


class LLMError(MemvaultError):
    exit_code = 5


class EmbedError(MemvaultError):
    """The embeddings endpoint failed or answered something unusable. Names the endpoint, never the key."""

    exit_code = 5


class Interrupted(MemvaultError):
    exit_code = 130
