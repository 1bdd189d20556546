"""What `stats` counts of the raw layer (live turns, by project, sessions, the newest turn, damaged lines), without
parsing every line of every day file at every call (~300 ms at 21.6k turns, growing with the raw layer).

Each day file is summed up once, by the same parser as Vault.episodes(): its turns as (id, project, session, at)
in line order, the ids its revoke lines withdraw, and how many of its lines are damaged. The sums are kept in
`.memvault/tally.cache` (derived, deletable; no captured text: ids, project and session names, times) under the
file's (size, mtime_ns, ctime_ns, inode): capture's append, an editor's save, forget's rewrite and a git checkout
each move one of them, and that file is read again, whole (a day file is one day of turns: a few ms).
Trigger: a file whose mtime is less than 2 seconds old. Why: a second write within the same tick of a coarse
file clock (up to 2 s on some file systems) could leave all four alike; an older mtime moves at any write, and a
write that puts the old times back (`cp -p`, `touch -r`) moves ctime. Outcome: the file is counted but not kept,
and read again next time.
The files are then merged as Vault.episodes() merges them: the first line of an id counts, revoked ids do not.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.model import Episode, Revoke
from memvault.vault.episodes import records_in
from memvault.vault.files import read_cache, write_cache

if TYPE_CHECKING:
    from memvault.vault.store import Vault

CACHE = "tally.cache"
_VERSION = 1
_SETTLED_NS = 2_000_000_000


@dataclass(frozen=True)
class Tally:
    """The live turns of a vault, counted: what Vault.episodes() would give, without the turns' text."""

    by_project: dict[str, int]
    sessions: int
    newest: str | None
    ids: frozenset[str]
    damaged: int  # lines Vault.episodes() would report as problems

    @property
    def episodes(self) -> int:
        return len(self.ids)


def tally(vault: "Vault") -> Tally:
    """The live turns of `vault`, counted: the day files from the cache where their key holds, the others read."""
    folder = vault.cache
    cache_path = folder / CACHE if folder else None
    known = read_cache(cache_path, _VERSION)
    settled_before = time.time_ns() - _SETTLED_NS
    sums, keep = [], {}
    for path in vault.episode_files():
        rel = vault.rel(path)
        st = os.stat(path)  # before the read: a write after it moves the key, and the file is read again
        key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        found = known.get(rel)
        if not (isinstance(found, tuple) and len(found) == 7 and found[0] == key):
            found = (key, *_sum_file(vault, path))
        if st.st_mtime_ns < settled_before:
            keep[rel] = found
        sums.append(found)
    write_cache(cache_path, _VERSION, keep, known)
    return _merge(sums)


def _sum_file(vault: "Vault", path) -> tuple:
    """(ids, projects, sessions, times) of the file's turns in line order, the ids it revokes, damaged lines."""
    problems: list = []
    ids, projects, sessions, times, revoked = [], [], [], [], []
    for _path, _line, rec in records_in(vault, path, problems):
        if isinstance(rec, Episode):
            ids.append(rec.id)
            projects.append(rec.project)
            sessions.append(rec.session)
            times.append(rec.at)
        elif isinstance(rec, Revoke):
            revoked.extend(rec.ids)
    return tuple(ids), tuple(projects), tuple(sessions), tuple(times), tuple(revoked), len(problems)


def _merge(sums: list[tuple]) -> Tally:
    live: dict[str, tuple[str, str, str]] = {}
    # Files and lines from the last to the first, so that the first line of an id is the one that stays (a git
    # union merge may double a line), as in Vault.episodes().
    for _key, ids, projects, sessions, times, _revoked, _damaged in reversed(sums):
        live.update(zip(reversed(ids), zip(reversed(projects), reversed(sessions), reversed(times))))
    for s in sums:
        for ep_id in s[5]:
            live.pop(ep_id, None)
    rows = live.values()
    return Tally(by_project=dict(sorted(Counter(p for p, _s, _a in rows).items())),
                 sessions=len({s for _p, s, _a in rows}), newest=max((a for _p, _s, a in rows), default=None),
                 ids=frozenset(live), damaged=sum(s[6] for s in sums))
