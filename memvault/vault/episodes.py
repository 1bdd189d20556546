"""Episode files read back: records, the capture index (EpisodeIndex, cached), lookups by id, revocations.

Reads only; the one write is the derived cache .memvault/episodes.cache (through files.write_cache). The
Vault class (memvault.vault.store) exposes these as methods; they take the vault as their first argument.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.errors import VaultFormatError
from memvault.model import Episode, Revoke
from memvault.vault import codec
from memvault.vault.files import ends_with_newline, iter_lines, read_cache, write_cache

if TYPE_CHECKING:
    from memvault.vault.store import Vault

_EPISODE_ID = re.compile(r"^ep-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-[0-9A-Za-z]+$")
_CACHE_VERSION = 5


def report(problems: list[VaultFormatError] | None, exc: VaultFormatError) -> None:
    """Collect `exc` in `problems`, or raise it when the caller keeps no list."""
    if problems is None:
        raise exc
    problems.append(exc)


def records_in(vault: "Vault", path: Path, problems: list[VaultFormatError] | None
               ) -> Iterator[tuple[Path, int, Episode | Revoke | dict[str, Any]]]:
    """(path, line number, record) for each good line of one episode file; bad lines go to `problems`."""
    rel = vault.rel(path)
    for lineno, raw in iter_lines(path):
        if raw is None:
            report(problems, VaultFormatError(rel, lineno, "line too long, skipped"))
            continue
        if not raw.strip():
            continue
        try:
            yield path, lineno, codec.parse_record_line(raw, rel, lineno)
        except VaultFormatError as exc:
            report(problems, exc)


def episodes_by_id(vault: "Vault", ids) -> tuple[dict[str, Episode], dict[str, str]]:
    """(id -> episode, id -> revoke reason) for these episode ids, without reading the whole history.

    An id names its day (ep-YYYYMMDDTHHMMSSZ-…, the day file it was appended to), so only those files are
    parsed; revoke lines are appended on or after that day, so the later files are searched for them with
    a byte test first. Ids of any other shape are simply not found."""
    days: dict[Path, set[str]] = {}
    for ep_id in ids:
        m = _EPISODE_ID.match(ep_id)
        if m:
            at = "{}-{}-{}T{}:{}:{}Z".format(*m.groups())
            days.setdefault(vault.day_file(at), set()).add(ep_id)
    found: dict[str, Episode] = {}
    revoked: dict[str, str] = {}
    if not days:
        return found, revoked
    wanted = set().union(*days.values())
    for path, mine in days.items():
        if path.is_file():
            for _path, _line, rec in records_in(vault, path, []):
                if isinstance(rec, Episode) and rec.id in mine:
                    found.setdefault(rec.id, rec)
    first = min(p.name for p in days)
    for path in vault.episode_files():
        if path.name < first:
            continue
        data = path.read_bytes()
        if b'"revoke"' not in data:
            continue
        for raw in data.split(b"\n"):
            if b'"revoke"' not in raw:
                continue
            try:
                rec = codec.parse_record_line(raw, vault.rel(path), 0)
            except VaultFormatError:
                continue  # doctor reports damaged lines
            if isinstance(rec, Revoke):
                for ep_id in wanted.intersection(rec.ids):
                    revoked.setdefault(ep_id, rec.reason)
    return found, revoked


def episode_index(vault: "Vault", trust_cache: bool = True) -> "EpisodeIndex":
    """What capture needs to stay idempotent, read incrementally: day files only grow, so a cached file
    whose size grew is read from its old end; any other change re-reads that file. A cache that is damaged,
    another version's or holds an entry of another shape counts for nothing there: that file (for a bad entry)
    or every file is read again, and the cache rewritten."""
    cache_dir = vault.cache
    cache_path = cache_dir / "episodes.cache" if cache_dir else None
    files = read_cache(cache_path, _CACHE_VERSION) if trust_cache else {}
    fresh: dict[str, Any] = {}
    for path in vault.episode_files():
        rel = vault.rel(path)
        st = path.stat()
        old = files.get(rel)
        if not _sound_entry(old):
            old = None  # a damaged entry: the file is read again, whole
        elif old["size"] == st.st_size and old["mtime"] == st.st_mtime_ns:
            fresh[rel] = old
            continue
        start = old["size"] if old and st.st_size > old["size"] and old["clean_end"] else 0
        entries = list(old["entries"]) if start else []
        revoked = list(old["revoked"]) if start else []
        for rec in _records_from(vault, path, start):
            if isinstance(rec, Episode):
                entries.append((rec.id, rec.session, rec.turn, rec.hash, user_digest(rec.user),
                                user_part_digests(rec.user), rec.at))
            elif isinstance(rec, Revoke):
                revoked.extend(rec.ids)
        fresh[rel] = {"size": st.st_size, "mtime": st.st_mtime_ns, "entries": entries,
                      "revoked": revoked, "clean_end": ends_with_newline(path)}
    try:
        index = EpisodeIndex.build(fresh.values())
    except (TypeError, ValueError):
        if not trust_cache:
            raise
        return episode_index(vault, trust_cache=False)
    write_cache(cache_path, _CACHE_VERSION, fresh, files)
    return index


def _sound_entry(entry) -> bool:
    """Whether a cached file entry has the shape episode_index writes (a damaged cache can hold anything)."""
    return (isinstance(entry, dict) and type(entry.get("size")) is int and type(entry.get("mtime")) is int
            and isinstance(entry.get("entries"), list) and isinstance(entry.get("revoked"), list)
            and type(entry.get("clean_end")) is bool)


def _records_from(vault: "Vault", path: Path, offset: int):
    rel = vault.rel(path)
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read()
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            yield codec.parse_record_line(raw, rel, 0)
        except VaultFormatError:
            continue  # doctor reports bad lines; capture only needs the good ones


@dataclass(frozen=True)
class EpisodeIndex:
    """session -> turn -> (hash, episode id) for live episodes, plus every id seen and every revoked id."""

    sessions: dict[str, dict[int, tuple[str, str]]]
    ids: frozenset[str]
    revoked: frozenset[str]
    users: dict[str, dict[int, str]] = dataclasses.field(default_factory=dict)  # session -> turn -> user digest
    by_user: dict[str, list[tuple[str, int]]] = dataclasses.field(default_factory=dict)  # digest -> (session, turn)
    # the same for the later user messages of a turn that had several (a tail may begin at one of them)
    by_user_part: dict[str, list[tuple[str, int]]] = dataclasses.field(default_factory=dict)
    times: dict[str, dict[int, str]] = dataclasses.field(default_factory=dict)  # session -> turn -> at

    @classmethod
    def build(cls, files) -> "EpisodeIndex":
        revoked: set[str] = set()
        entries = []
        for info in files:
            revoked.update(info["revoked"])
            entries.extend(info["entries"])
        sessions: dict[str, dict[int, tuple[str, str]]] = {}
        ids = set()
        users: dict[str, dict[int, str]] = {}
        parts: dict[str, list[tuple[str, int]]] = {}
        times: dict[str, dict[int, str]] = {}
        for ep_id, session, turn, digest, udigest, pdigests, at in entries:
            ids.add(ep_id)
            if ep_id in revoked:
                continue
            sessions.setdefault(session, {})[turn] = (digest, ep_id)
            users.setdefault(session, {})[turn] = udigest
            times.setdefault(session, {})[turn] = at
            for pd in pdigests:
                parts.setdefault(pd, []).append((session, turn))
        by_user: dict[str, list[tuple[str, int]]] = {}
        for session, turns in users.items():
            for turn, udigest in turns.items():
                by_user.setdefault(udigest, []).append((session, turn))
        return cls(sessions=sessions, ids=frozenset(ids), revoked=frozenset(revoked), users=users,
                   by_user=by_user, by_user_part=parts, times=times)


def user_part_digests(user: str, limit: int = 8) -> list[str]:
    """Digests of the user text from each of its last paragraph breaks on (capture joins the user messages of
    one turn with a blank line)."""
    out = []
    pos = len(user)
    while len(out) < limit:
        pos = user.rfind("\n\n", 0, pos)
        if pos < 0:
            break
        out.append(user_digest(user[pos + 2:]))
    return out


def user_digest(user: str) -> str:
    """What capture aligns a cut log on: the stored user text (redacted and capped), hashed."""
    import hashlib  # here, not at the top: ~2 ms of the start-up of every command that reads episodes (stats)

    return hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def revoked_ids(vault: "Vault", reason: str) -> set[str]:
    """Episode ids withdrawn by `revoke` lines with this reason. Lines that are not revokes are skipped with
    a byte test before any JSON parsing: this runs at the start of every distill."""
    out: set[str] = set()
    for path in vault.episode_files():
        rel = vault.rel(path)
        for lineno, raw in iter_lines(path):
            if raw is None or b'"revoke"' not in raw:
                continue
            try:
                rec = codec.parse_record_line(raw, rel, lineno)
            except VaultFormatError:
                continue  # doctor reports damaged lines
            if isinstance(rec, Revoke) and rec.reason == reason:
                out.update(rec.ids)
    return out
