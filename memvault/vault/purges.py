"""Purge as a roll-forward protocol: the journal line of `forget --purge` is the intent, these steps finish it.

`forget --purge` commits its journal line (`{"type": "forget", "mode": "purge", "card", "cited", "episodes",
"change"}`) right after the card file is gone; the text may still sit in other places, each removed by one
idempotent step here: before-images of the card (and of the cards that quoted it) in the journal are blanked,
the purged turns leave their day files and a `revoke` line (reason `purge`) is appended, and the derived files
that may hold them (.memvault/ search index and vectors) are deleted. A purge is *done* once every step ran;
the done ones are listed in .memvault/purges.json (derived: when it is lost, each purge is simply finished once
more, which deletes the search index once). A crash between the steps leaves a purge that is not done: the next
writing command (`settle`), `doctor --fix` and a rerun of the same `forget` finish it, and `doctor` reports it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from memvault.model import Episode, Revoke
from memvault.vault import codec
from memvault.vault.edge import check_inside
from memvault.vault.faults import crash_point
from memvault.vault.files import atomic_write, iter_lines, remove_file, rewrite_lines
from memvault.vault.store import Vault, append_lines

STATE = "purges.json"
# What a purge deletes of .memvault/ besides vectors: the search index, doctor's caches (of clean files: it names
# files, and an entity page's name may be the text; of parsed cards and their conflicts), and their temp files a
# stopped writer left.
DERIVED = ("index*", "search*", "secrets.cache", "doctor-*.cache", ".index*.tmp", ".search*.tmp",
           ".secrets.cache.*.tmp", ".doctor-*.cache.*.tmp")
MARK = b'"purge"'  # every purge journal line holds it ("mode":"purge"); other lines rarely do


@dataclass
class Purge:
    """One purge journal line: what it removed, and what it still has to remove."""

    change: str
    card: str
    at: str
    cited: list[str] = field(default_factory=list)
    episodes: list[str] = field(default_factory=list)
    where: str = ""  # journal file and line, for doctor

    @property
    def ids(self) -> list[str]:
        return [self.card, *self.cited]


def _state(vault: Vault) -> dict[str, Any]:
    try:
        data = json.loads((vault.local / STATE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _stat(path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def journal_purges(vault: Vault, files=None) -> list[Purge]:
    """Every purge line of the journal, or of `files` (a byte test per line first: only purge lines parse)."""
    out = []
    for path in vault.journal_files() if files is None else files:
        for lineno, raw in iter_lines(path):
            if raw is None or MARK not in raw:
                continue
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("type") == "forget" and rec.get("mode") == "purge" \
                    and isinstance(rec.get("card"), str):
                out.append(Purge(change=str(rec.get("change") or rec["card"]), card=rec["card"],
                                 at=str(rec.get("at") or ""), cited=[str(c) for c in rec.get("cited") or []],
                                 episodes=[str(e) for e in rec.get("episodes") or []],
                                 where=f"{vault.rel(path)}:{lineno}"))
    return out


def unfinished(vault: Vault, remember: bool = True) -> list[Purge]:
    """The purges of the journal not yet marked done. Cheap when nothing changed: only the journal files whose
    size or time differ from when all their purges were last seen done are read (one stat per month).
    `remember` (writers only) records the files found with every purge done."""
    state = _state(vault)
    done = set(state.get("done") or [])
    seen = dict(state.get("seen") or {})
    out: list[Purge] = []
    learned = False
    for path in vault.journal_files():
        sig = _stat(path)
        if seen.get(path.name) == sig:
            continue
        mine = [p for p in journal_purges(vault, [path]) if p.change not in done]
        out += mine
        if not mine:
            seen[path.name] = sig
            learned = True
    if remember and (learned or not state):  # written once at least: `remains` trusts derived files without it
        _save(vault, {"done": sorted(done), "seen": seen})
    return out


def mark_done(vault: Vault, changes: Iterable[str]) -> None:
    state = _state(vault)
    _save(vault, {"done": sorted(set(state.get("done") or []) | set(changes)), "seen": state.get("seen") or {}})


def _save(vault: Vault, state: dict[str, Any]) -> None:
    atomic_write(vault.local / STATE, json.dumps(state, sort_keys=True))


def finish(vault: Vault, purge: Purge, erase_vectors: Callable[[Purge, list[str]], list[str]] | None = None
           ) -> list[str]:
    """Run every step of one purge (each does nothing when already done); the vault paths it changed.
    `erase_vectors(purge, purged episode ids)` erases the purged items' vectors and returns the files it
    changed; without it (a roll-forward in the vault layer) every vector file goes (derived, `embed` refills)."""
    files = blank_journal(vault, purge.ids)
    crash_point("purge:journal")
    changed, purged = purge_episodes(vault, set(purge.episodes), purge.at)
    files += changed
    crash_point("purge:episodes")
    if erase_vectors is not None:
        files += erase_vectors(purge, purged)
    else:
        files += drop_derived(vault, ("vectors*",))
    crash_point("purge:vectors")
    # The search index, and doctor's cache of clean files (it names files: an entity page's name may be the text)
    files += drop_derived(vault, DERIVED)
    crash_point("purge:index")
    mark_done(vault, [purge.change])
    return list(dict.fromkeys(files))


def finish_all(vault: Vault) -> list[str]:
    """Finish every purge the journal names that is not done (the caller holds the card-change lock)."""
    files: list[str] = []
    todo = unfinished(vault)
    for purge in todo:
        files += finish(vault, purge)
    if todo:
        unfinished(vault)  # records the journal as it is now: every purge done
    return files


def remains(vault: Vault, purge: Purge) -> list[str]:
    """Where the text of an unfinished purge still is (vault paths, `.memvault/` for derived files): read only."""
    where = []
    ids = set(purge.ids)
    for path in vault.journal_files():
        for _lineno, raw in iter_lines(path):
            if raw is None or b'"before"' not in raw or not any(i.encode() in raw for i in ids):
                continue
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if isinstance(rec, dict) and _blank_record(dict(rec), ids, dry=True):
                where.append(vault.rel(path))
                break
    wanted = [e.encode() for e in purge.episodes]
    for path in vault.episode_files() if wanted else []:
        data = path.read_bytes()
        if any(e in data for e in wanted) and any(isinstance(r, Episode) and r.id in purge.episodes
                                                  for _p, _n, r in vault.iter_records(files=[path], problems=[])):
            where.append(vault.rel(path))
    local = vault.cache or vault.local
    # Derived files count only where this copy of the vault keeps the record of purges: in a fresh clone (no
    # purges.json yet) an index was built after every purge the journal names, from files without the text.
    if (vault.local / STATE).exists() and any(any(local.glob(p)) for p in (*DERIVED, "vectors*")):
        where.append(".memvault/ (search index, vectors)")
    return where


def blank_journal(vault: Vault, ids: list[str]) -> list[str]:
    """Replace every before-image of these cards in the journal by a `purged` marker (ids stay: not text)."""
    wanted = set(ids)
    keys = [i.encode() for i in wanted]

    def edit(_lineno: int, raw: bytes) -> bytes:
        if b'"before"' not in raw or not any(k in raw for k in keys):
            return raw
        try:
            rec = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(rec, dict) and _blank_record(rec, wanted):
            return codec.dump_json_line(rec).encode("utf-8")
        return raw

    with vault.append_lock():
        return [vault.rel(path) for path in vault.journal_files() if rewrite_lines(path, edit)]


def _blank_record(rec: dict[str, Any], ids: set[str], dry: bool = False) -> bool:
    touched = False
    for key in ("updated", "superseded"):
        for item in rec.get(key) or []:
            if isinstance(item, dict) and item.get("id") in ids and item.get("before") is not None:
                if not dry:
                    item["before"] = None
                    item["purged"] = True
                touched = True
    return touched


def purge_episodes(vault: Vault, ids: set[str], at: str) -> tuple[list[str], list[str]]:
    """Remove these turns from their day files and append one `revoke` line (reason purge) for those no purge
    revoked yet, so a clone that still has them drops them too. (changed vault paths, purged ids)."""
    files: list[str] = []
    purged: list[str] = []
    revoked: set[str] = set()
    if not ids:
        return files, purged
    keys = [i.encode() for i in ids]
    with vault.append_lock():
        for path in vault.episode_files():
            def edit(lineno: int, raw: bytes, rel: str = vault.rel(path)) -> bytes | None:
                if not any(k in raw for k in keys):
                    return raw
                try:
                    rec = codec.parse_record_line(raw, rel, lineno)
                except Exception:  # noqa: BLE001 - a damaged line is kept as it was; doctor reports it
                    return raw
                if isinstance(rec, Episode) and rec.id in ids:
                    purged.append(rec.id)
                    return None
                if isinstance(rec, Revoke) and rec.reason == "purge":
                    revoked.update(rec.ids)
                return raw

            if rewrite_lines(path, edit):
                files.append(vault.rel(path))
        missing = ids - revoked
        if missing:
            day = at if len(at) >= 10 else _now()
            line = codec.revoke_to_line(Revoke(ids=tuple(sorted(missing)), reason="purge", at=day))
            append_lines(check_inside(vault.root, vault.day_file(day)), [line])
            rel = vault.rel(vault.day_file(day))
            if rel not in files:
                files.append(rel)
    return files, sorted(set(purged))


def drop_derived(vault: Vault, patterns: Iterable[str]) -> list[str]:
    """Delete derived files of .memvault/ (or the user cache) matching `patterns`; they rebuild."""
    gone = []
    local = vault.cache or vault.local
    for pattern in patterns:
        for path in sorted(local.glob(pattern)):
            if path.is_file() and remove_file(path):
                gone.append(vault.rel(path))
    return gone


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

