"""Options that take one of a fixed set of values: an unknown value is a usage error (exit 2) naming the valid
ones, never a silent "no match". Pure; the callers know the set (card kinds come from memvault.yaml)."""

from __future__ import annotations

from collections.abc import Iterable

from memvault.errors import UsageError


def check_choice(what: str, value: str | None, allowed: Iterable[str]) -> None:
    """Raise UsageError ("unknown kind 'x'; choose one of: …") when `value` is given and not one of `allowed`."""
    allowed = list(allowed)
    if value is None or value in allowed:
        return
    shown = value if len(value) <= 40 else value[:40] + "…"
    raise UsageError(f"unknown {what} {shown!r}; choose one of: {', '.join(allowed)}")
