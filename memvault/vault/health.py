"""Whether memory is still being saved: the outcome of the last capture run by an agent's hook and of the last
distill, kept in `.memvault/health.json` (a local file of the vault, never committed), so the session-start
brief can say when memory stopped working instead of failing in silence.

One entry per job ("capture", "distill"), the last run's: when, what ran it, whether it worked, what it stored,
and, when it failed or stored nothing, the problem and how to fix it (no captured text: counts, error messages of
memvault's own, file paths). Parallel hooks may race on the file: each write is atomic, the last one wins, which
is the newest outcome either way.
"""

from __future__ import annotations

import json
import os
from typing import Any

from memvault.vault.files import atomic_write
from memvault.vault.local import LOCAL

NAME = "health.json"
JOBS = ("capture", "distill")


def _path(root: str | os.PathLike) -> str:
    return os.path.join(root, LOCAL, NAME)


def read(root: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The last outcome of each job ({} when none is recorded or the file is unreadable)."""
    try:
        with open(_path(root), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if k in JOBS and isinstance(v, dict)} if isinstance(data, dict) else {}


def record(root: str | os.PathLike, job: str, entry: dict[str, Any]) -> None:
    """Keep `entry` as the job's last outcome. Never raises for a vault that cannot be written: health is a note,
    and the job itself already said what went wrong."""
    from pathlib import Path

    data = read(root)
    data[job] = entry
    try:
        atomic_write(Path(_path(root)), json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
                     durable=False)
    except OSError:
        pass


def problems(root: str | os.PathLike) -> list[dict[str, Any]]:
    """The jobs whose last run failed or stored nothing, oldest first."""
    out = [dict(e, job=job) for job, e in read(root).items() if not e.get("ok", True)]
    return sorted(out, key=lambda e: str(e.get("at", "")))


__all__ = ["JOBS", "problems", "read", "record"]
