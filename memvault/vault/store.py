"""The one module that opens, writes, renames and locks vault files.

Whole-file writes are atomic (temp file in the same folder, fsync, os.replace). Appends use O_APPEND with one
write() per batch of whole lines, under a short append lock, after repairing a torn last line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import functools
import hashlib
import json
import marshal
import os
import re
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from memvault.vault import codec
from memvault.vault.config import Config, build_config
from memvault.errors import Busy, VaultFormatError, VaultMissing
from memvault.vault.locate import CONFIG_NAME, locate_vault
from memvault.model import Card, Entity, Episode, Revoke

LOCAL = ".memvault"
_EPISODE_ID = re.compile(r"^ep-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-[0-9A-Za-z]+$")
_CACHE_VERSION = 5


def read_config(root: Path, env: Mapping[str, str]) -> Config:
    """memvault.yaml merged with defaults and env; what is wrong in the file goes to Config.problems."""
    from memvault.vault.settings_file import load_settings

    path = root / CONFIG_NAME
    try:
        data, problems = load_settings(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VaultMissing(f"no {CONFIG_NAME} in {root}") from None
    except UnicodeDecodeError:
        raise VaultFormatError(str(path), None, "not valid UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise VaultFormatError(str(path), mark.line + 1 if mark else None, "invalid YAML") from None
    config = build_config(data or {}, env, origin=str(path))
    return dataclasses.replace(config, problems=tuple(problems)) if problems else config


# ---------------------------------------------------------------- low-level file operations


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write a whole file so that readers see the old bytes or the new bytes, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def repair_torn_tail(path: Path) -> int:
    """Cut a last line that a crash left without its newline. Returns the number of bytes removed.

    Trigger: the file does not end in b"\\n". Why: a torn line is an incomplete write of ours and appending after
    it would glue a good line onto garbage. Outcome: the fragment is dropped (capture is idempotent, so the
    next capture of the same log stores that turn again).
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # Walk back to the previous newline in chunks.
        pos = size
        while pos > 0:
            step = min(65536, pos)
            fh.seek(pos - step)
            chunk = fh.read(step)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                pos = pos - step + nl + 1
                break
            pos -= step
        fh.truncate(pos)
        fh.flush()
        os.fsync(fh.fileno())
        return size - pos


def append_lines(path: Path, lines: list[str]) -> None:
    """Append whole lines with one write(). The caller holds the append lock."""
    if not lines:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    repair_torn_tail(path)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:  # a regular file takes it in one go; loop only for pathological short writes
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def iter_lines(path: Path, max_line_bytes: int = 64 * 1024 * 1024) -> Iterator[tuple[int, bytes | None]]:
    """(line number, raw line without newline) for each line; None for a line over the cap (not loaded)."""
    with open(path, "rb") as fh:
        lineno = 0
        while True:
            chunk = fh.readline(max_line_bytes + 1)
            if not chunk:
                return
            lineno += 1
            if len(chunk) > max_line_bytes and not chunk.endswith(b"\n"):
                while chunk and not chunk.endswith(b"\n"):
                    chunk = fh.readline(1024 * 1024)
                yield lineno, None
                continue
            yield lineno, chunk.rstrip(b"\n")


@contextlib.contextmanager
def _flock(path: Path, blocking: bool) -> Iterator[int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        flags = fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB)
        try:
            fcntl.flock(fd, flags)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise BlockingIOError from None
            raise
        yield fd
    finally:
        os.close(fd)  # closing releases the flock; the kernel also releases it when the process dies (kill -9)


# ---------------------------------------------------------------- the vault


@dataclass(frozen=True)
class Vault:
    root: Path
    config: Config

    @classmethod
    def open(cls, explicit: str | os.PathLike | None, env: Mapping[str, str]) -> "Vault":
        root = locate_vault(explicit, env)
        return cls(root=root, config=read_config(root, env))

    @functools.cached_property
    def rules(self):
        """The redaction rules of this vault (built-in + memvault.yaml `redact.deny`), compiled once."""
        from memvault.redact import engine as redact

        return redact.compile_rules(list(self.config.section("redact").get("deny") or []))

    # -- paths
    @property
    def local(self) -> Path:
        return self.root / LOCAL

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def day_file(self, at: str) -> Path:
        return self.root / "episodes" / at[:4] / at[5:7] / f"{at[:10]}.jsonl"

    def journal_file(self, at: str) -> Path:
        return self.root / "journal" / f"{at[:7]}.jsonl"

    def audit_file(self, at: str) -> Path:
        return self.root / "audit" / f"{at[:7]}.log"

    def card_path(self, card: Card) -> Path:
        month = (card.created or "")[:7]
        if len(month) != 7 or month[4] != "-":
            month = time.strftime("%Y-%m", time.gmtime())
        return self.root / "cards" / month / f"{card.id}.md"

    def entity_path(self, slug: str) -> Path:
        path = (self.root / "entities" / f"{slug}.md").resolve()
        if path.parent != (self.root / "entities").resolve():
            raise ValueError("entity slug escapes the entities folder")
        return path

    # -- locks
    @contextlib.contextmanager
    def append_lock(self) -> Iterator[None]:
        """Short lock around check-then-append of episodes; never shared with distill's lock."""
        with _flock(self.local / "append.lock", blocking=True):
            yield

    @contextlib.contextmanager
    def exclusive(self, name: str, what: str) -> Iterator[None]:
        """Non-blocking run lock (one distill per vault). Busy (exit 4) names the holder's pid and start time."""
        path = self.local / f"{name}.lock"
        try:
            with _flock(path, blocking=False) as fd:
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps({"pid": os.getpid(), "since": _now()}).encode(), 0)
                yield
        except BlockingIOError:
            try:
                holder = json.loads(path.read_text() or "{}")
            except (OSError, ValueError):
                holder = {}
            raise Busy(
                f"{what} already running (pid {holder.get('pid', '?')}, since {holder.get('since', '?')})"
            ) from None

    # -- episodes
    def episode_files(self) -> list[Path]:
        return sorted(p for p in (self.root / "episodes").glob("[0-9][0-9][0-9][0-9]/[0-9][0-9]/*.jsonl")
                      if p.is_file())

    def iter_records(
        self, files: list[Path] | None = None, problems: list[VaultFormatError] | None = None
    ) -> Iterator[tuple[Path, int, Episode | Revoke | dict[str, Any]]]:
        """Every record in the episode files. Bad lines go to `problems` (or raise when it is None)."""
        for path in self.episode_files() if files is None else files:
            yield from self._records_of(path, 0, problems)

    def _records_of(self, path: Path, offset: int, problems: list[VaultFormatError] | None):
        rel = self.rel(path)
        for lineno, raw in iter_lines(path):
            if raw is None:
                _report(problems, VaultFormatError(rel, lineno, "line too long, skipped"))
                continue
            if not raw.strip():
                continue
            try:
                yield path, lineno, codec.parse_record_line(raw, rel, lineno)
            except VaultFormatError as exc:
                _report(problems, exc)

    def episodes(self, problems: list[VaultFormatError] | None = None) -> list[Episode]:
        """Live episodes: deduplicated by id (git union merges may double a line), revoked ones removed,
        ordered by time then session and turn (line order inside files is never relied on)."""
        seen: dict[str, Episode] = {}
        revoked: set[str] = set()
        for _path, _line, rec in self.iter_records(problems=problems if problems is not None else []):
            if isinstance(rec, Episode):
                seen.setdefault(rec.id, rec)
            elif isinstance(rec, Revoke):
                revoked.update(rec.ids)
        live = [ep for ep_id, ep in seen.items() if ep_id not in revoked]
        live.sort(key=lambda e: (e.at, e.session, e.turn, e.id))
        return live

    def episodes_by_id(self, ids) -> tuple[dict[str, Episode], dict[str, str]]:
        """(id -> episode, id -> revoke reason) for these episode ids, without reading the whole history.

        An id names its day (ep-YYYYMMDDTHHMMSSZ-…, the day file it was appended to), so only those files are
        parsed; revoke lines are appended on or after that day, so the later files are searched for them with
        a byte test first. Ids of any other shape are simply not found."""
        days: dict[Path, set[str]] = {}
        for ep_id in ids:
            m = _EPISODE_ID.match(ep_id)
            if m:
                at = "{}-{}-{}T{}:{}:{}Z".format(*m.groups())
                days.setdefault(self.day_file(at), set()).add(ep_id)
        found: dict[str, Episode] = {}
        revoked: dict[str, str] = {}
        if not days:
            return found, revoked
        wanted = set().union(*days.values())
        for path, mine in days.items():
            if path.is_file():
                for _path, _line, rec in self._records_of(path, 0, []):
                    if isinstance(rec, Episode) and rec.id in mine:
                        found.setdefault(rec.id, rec)
        first = min(p.name for p in days)
        for path in self.episode_files():
            if path.name < first:
                continue
            data = path.read_bytes()
            if b'"revoke"' not in data:
                continue
            for raw in data.split(b"\n"):
                if b'"revoke"' not in raw:
                    continue
                try:
                    rec = codec.parse_record_line(raw, self.rel(path), 0)
                except VaultFormatError:
                    continue  # doctor reports damaged lines
                if isinstance(rec, Revoke):
                    for ep_id in wanted.intersection(rec.ids):
                        revoked.setdefault(ep_id, rec.reason)
        return found, revoked

    def episode_index(self) -> "EpisodeIndex":
        """What capture needs to stay idempotent, read incrementally: day files only grow, so a cached file
        whose size grew is read from its old end; any other change re-reads that file."""
        cache_path = self.local / "episodes.cache"
        try:
            cache = marshal.loads(cache_path.read_bytes())
            if cache.get("v") != _CACHE_VERSION:
                cache = {}
        except (OSError, ValueError, EOFError, TypeError):
            cache = {}
        files = cache.get("files", {})
        fresh: dict[str, Any] = {}
        for path in self.episode_files():
            rel = self.rel(path)
            st = path.stat()
            old = files.get(rel)
            if old and old["size"] == st.st_size and old["mtime"] == st.st_mtime_ns:
                fresh[rel] = old
                continue
            start = old["size"] if old and st.st_size > old["size"] and old.get("clean_end") else 0
            entries = list(old["entries"]) if start else []
            revoked = list(old["revoked"]) if start else []
            for rec in self._records_from(path, start):
                if isinstance(rec, Episode):
                    entries.append((rec.id, rec.session, rec.turn, rec.hash, user_digest(rec.user),
                                    user_part_digests(rec.user), rec.at))
                elif isinstance(rec, Revoke):
                    revoked.extend(rec.ids)
            fresh[rel] = {"size": st.st_size, "mtime": st.st_mtime_ns, "entries": entries,
                          "revoked": revoked, "clean_end": _ends_with_newline(path)}
        new_cache = {"v": _CACHE_VERSION, "files": fresh}
        if fresh != files:
            with contextlib.suppress(OSError):
                atomic_write(cache_path, marshal.dumps(new_cache))
        return EpisodeIndex.build(fresh.values())

    def _records_from(self, path: Path, offset: int):
        rel = self.rel(path)
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

    # -- cards
    def card_files(self) -> list[Path]:
        return sorted(p for p in (self.root / "cards").glob("*/*.md") if p.is_file())

    def read_text(self, path: Path) -> str:
        """A vault text file; invalid UTF-8 is a VaultFormatError naming the file, never a traceback."""
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise VaultFormatError(self.rel(path), None, "not valid UTF-8") from None

    def read_card(self, path: Path) -> Card:
        return codec.parse_card(self.read_text(path), self.rel(path))

    def cards(self, problems: list[VaultFormatError] | None = None) -> list[Card]:
        out = []
        for path in self.card_files():
            try:
                out.append(self.read_card(path))
            except VaultFormatError as exc:
                _report(problems, exc)
        return out

    def cards_mentioning(self, needles, problems: list[VaultFormatError] | None = None) -> dict[str, Card]:
        """Cards whose file contains any of `needles` (ids, entity slugs, a subject), by id.

        A byte search over each file before any YAML is parsed: a superset of the cards a hand-made change
        can touch, ~10x cheaper than `cards()` on a large vault (100k cards: ~1 s instead of ~12 s).
        """
        keys = [n.encode("utf-8") for n in needles if n]
        out: dict[str, Card] = {}
        if not keys:
            return out
        for path in self.card_files():
            raw = path.read_bytes()
            if not any(k in raw for k in keys):
                continue
            try:
                card = codec.parse_card(raw.decode("utf-8"), self.rel(path))
            except UnicodeDecodeError:
                _report(problems if problems is not None else [],
                        VaultFormatError(self.rel(path), None, "not valid UTF-8"))
                continue
            except VaultFormatError as exc:
                _report(problems if problems is not None else [], exc)
                continue
            out[card.id] = card
        return out

    def card_exists(self, card_id: str) -> bool:
        return self.find_card_path(card_id) is not None

    def find_card_path(self, card_id: str) -> Path | None:
        if not codec.SAFE_ID.match(card_id):
            return None
        hits = sorted((self.root / "cards").glob(f"*/{card_id}.md"))
        return hits[0] if hits else None

    def write_card(self, card: Card) -> Path:
        path = self.find_card_path(card.id) or self.card_path(card)
        atomic_write(path, codec.card_to_text(card, self.rules))
        return path

    def delete_card(self, card_id: str) -> bool:
        path = self.find_card_path(card_id)
        if path is None:
            return False
        path.unlink()
        return True

    # -- entities
    def entity_files(self) -> list[Path]:
        return sorted(p for p in (self.root / "entities").glob("*.md") if p.is_file())

    def read_entity(self, path: Path) -> Entity:
        return codec.parse_entity(self.read_text(path), self.rel(path), path.stem)

    # -- journal and audit (append-only JSON lines)
    def journal_files(self) -> list[Path]:
        return sorted(p for p in (self.root / "journal").glob("*.jsonl") if p.is_file())

    def append_journal(self, records: list[dict[str, Any]]) -> None:
        if records:
            at = str(records[0].get("at") or _now())
            with self.append_lock():
                append_lines(self.journal_file(at), [codec.dump_json_line(r) for r in records])

    def journal(self, problems: list[VaultFormatError] | None = None) -> list[dict[str, Any]]:
        out = []
        for path in self.journal_files():
            for lineno, raw in iter_lines(path):
                if raw is None or not raw.strip():
                    continue
                try:
                    rec = json.loads(raw)
                    if not isinstance(rec, dict):
                        raise ValueError("not an object")
                    out.append(rec)
                except ValueError:
                    _report(problems, VaultFormatError(self.rel(path), lineno, "invalid journal line"))
        return out

    def read_state(self, name: str) -> dict[str, Any]:
        """Small JSON state files under .memvault/ (derived, deletable)."""
        try:
            data = json.loads((self.local / name).read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def write_state(self, name: str, data: dict[str, Any]) -> None:
        atomic_write(self.local / name, json.dumps(data, sort_keys=True, ensure_ascii=False))


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
    return hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _report(problems: list[VaultFormatError] | None, exc: VaultFormatError) -> None:
    if problems is None:
        raise exc
    problems.append(exc)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def revoked_ids(vault: Vault, reason: str) -> set[str]:
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
