"""Options that take one of a fixed set of values: an unknown value is a usage error (exit 2) naming the valid
ones, never a silent "no match"; and project names, which must stay one printable label. Pure; the callers know
the set (card kinds come from memvault.yaml)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from memvault.errors import UsageError


def check_choice(what: str, value: str | None, allowed: Iterable[str]) -> None:
    """Raise UsageError ("unknown kind 'x'; choose one of: …") when `value` is given and not one of `allowed`."""
    allowed = list(allowed)
    if value is None or value in allowed:
        return
    shown = value if len(value) <= 40 else value[:40] + "…"
    raise UsageError(f"unknown {what} {shown!r}; choose one of: {', '.join(allowed)}")


# C0 and C1 control characters (a newline splits every line-based output), Unicode line and paragraph
# separators, and both path separators (a project name is a folder-like label, never a path).
# Compiled on first use: a class reaching past U+00FF costs ~0.8 ms to compile, and a search without --project
# never needs it.
@functools.cache
def _not_in_a_name() -> re.Pattern[str]:
    return re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029/\\]")


def project_problem(value: str) -> str | None:
    """Why `value` cannot be a project name, or None when it can."""
    if not value.strip():
        return "is empty"
    if _not_in_a_name().search(value):
        return "holds a control character, a line break or a path separator (/ or \\)"
    if value.strip() in (".", ".."):
        return "is . or .."
    return None


def check_project(value: str | None) -> None:
    """Raise UsageError (exit 2) when a project name given on the command line or by an agent is unusable."""
    if not value:
        return  # none given ("" too, as `--project "$EMPTY"` in a hook has always meant)
    why = project_problem(value)
    if why:
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise UsageError(f"project name {shown!r} {why}; use letters, digits, spaces, . _ -")


def clean_project(value: str | None) -> str | None:
    """A project name read from a chat log (a cwd's last folder, a field of a JSON line), made usable: control
    characters and path separators become '-'; None when nothing usable is left."""
    if value is None:
        return None
    cleaned = _not_in_a_name().sub("-", value).strip()
    return None if project_problem(cleaned) else cleaned
