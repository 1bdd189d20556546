"""The Vault: where each kind of file lives, and reading and writing it (cards, entities, journal, state).

File primitives are in memvault.vault.files, episode reading in memvault.vault.episodes; their public names
are re-exported here, so `from memvault.vault.store import atomic_write, EpisodeIndex, ...` keeps working.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from memvault.errors import Busy, VaultFormatError
from memvault.model import Card, Entity, Episode, Revoke
from memvault.vault import codec, episodes as _episodes
from memvault.vault.config import Config
from memvault.vault.episodes import EpisodeIndex, records_in, revoked_ids, user_digest, user_part_digests
from memvault.vault.episodes import report as _report
from memvault.vault.files import (append_lines, atomic_write, ends_with_newline, ensure_dir, flock,
                                  iter_lines, remove_file, repair_torn_tail)
from memvault.vault.edge import check_inside, files_inside, outside
from memvault.vault.local import LOCAL, derived_dir, require_writable
from memvault.vault.locate import CONFIG_NAME, locate_vault
from memvault.vault.settings_cache import read_config

__all__ = ["CONFIG_NAME", "LOCAL", "EpisodeIndex", "Vault", "append_lines", "atomic_write",
           "ends_with_newline", "ensure_dir", "iter_lines", "read_config", "remove_file", "repair_torn_tail",
           "revoked_ids", "user_digest", "user_part_digests"]

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
        """The vault's own local files: locks, the write-intent of a card change, distill state."""
        return self.root / LOCAL

    @property
    def cache(self) -> Path | None:
        """Where derived files go (memvault.vault.local): .memvault/, or a per-user cache for a vault this user
        cannot write; None when nothing can be written (derived data stays in memory)."""
        return derived_dir(self.root)

    def require_writable(self, what: str = "this command") -> None:
        """ReadOnlyVault (exit 3) when this user cannot write the vault; every writing command checks first."""
        require_writable(self.root, what)

    @functools.cached_property
    def _prefix(self) -> str:
        return os.path.join(os.fspath(self.root), "")

    def rel(self, path: Path) -> str:
        """`path` relative to the root, with `/`. For a Path under the root (already normal), a cut of its
        text: doctor asks this for every file, and Path.relative_to cost ~9 s of a 100k-card vault's run."""
        if isinstance(path, PurePath):
            text = os.fspath(path)
            if text.startswith(self._prefix):
                return text[len(self._prefix):].replace(os.sep, "/")
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
        check_inside(self.root, self.root / "entities" / f"{slug}.md")  # OutsideVault: a link out of the vault
        path = (self.root / "entities" / f"{slug}.md").resolve()
        if path.parent != (self.root / "entities").resolve():
            raise ValueError("entity slug escapes the entities folder")
        return path

    def inside(self, path: Path) -> Path:
        """`path`, or OutsideVault (exit 3, naming it) when it leads out of the vault through a link (edge.py)."""
        return check_inside(self.root, path)

    def settle(self) -> None:
        """Finish what a stopped writer left, when no card change runs now (tempfiles.settle_if_free)."""
        from memvault.vault.tempfiles import settle_if_free

        settle_if_free(self)

    # -- locks
    @contextlib.contextmanager
    def append_lock(self) -> Iterator[None]:
        """Short lock around check-then-append of episodes; never shared with distill's lock."""
        self.require_writable()
        with flock(self.local / "append.lock", blocking=True):
            yield

    @contextlib.contextmanager
    def exclusive(self, name: str, what: str, settle: bool = True) -> Iterator[None]:
        """Non-blocking run lock (one distill per vault). Busy (exit 4) names the holder's pid and start time.
        The card-change lock's new holder first finishes what a stopped writer left (memvault.vault.tempfiles:
        unfinished purges, temp files); `settle=False` leaves that to the caller (doctor --fix reports it)."""
        self.require_writable()
        path = self.local / f"{name}.lock"
        try:
            with flock(path, blocking=False) as fd:
                before = os.pread(fd, 4096, 0)
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps({"pid": os.getpid(), "since": _now()}).encode(), 0)
                since = os.fstat(fd).st_mtime_ns
                if name == "distill" and settle:
                    # The previous holder wrote `released` when it let go; a file without it was left by a
                    # writer that died (kill -9, a power cut): its temp files are garbage now.
                    from memvault.vault.tempfiles import settle as settle_vault

                    settle_vault(self, since, holder_died=bool(before.strip()) and b'"released"' not in before)
                try:
                    yield
                finally:
                    with contextlib.suppress(OSError):
                        os.pwrite(fd, b', "released": true}', max(0, os.fstat(fd).st_size - 1))
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
        return files_inside(self.root, "episodes", ("[0-9][0-9][0-9][0-9]", "[0-9][0-9]", "*.jsonl"))

    def iter_records(
        self, files: list[Path] | None = None, problems: list[VaultFormatError] | None = None
    ) -> Iterator[tuple[Path, int, Episode | Revoke | dict[str, Any]]]:
        """Every record in the episode files. Bad lines go to `problems` (or raise when it is None)."""
        for path in self.episode_files() if files is None else files:
            yield from records_in(self, path, problems)


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
        """(id -> episode, id -> revoke reason) for these episode ids, reading only their day files."""
        return _episodes.episodes_by_id(self, ids)

    def episode_index(self) -> EpisodeIndex:
        """What capture needs to stay idempotent (see memvault.vault.episodes.episode_index)."""
        return _episodes.episode_index(self)

    def tally(self):
        """The live turns counted as episodes() would give them, from a per-file cache (memvault.vault.tally)."""
        from memvault.vault.tally import tally

        return tally(self)

    # -- cards
    def card_files(self) -> list[Path]:
        return files_inside(self.root, "cards", ("*", "*.md"))

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
        hits = sorted(p for p in (self.root / "cards").glob(f"*/{card_id}.md") if not outside(self.root, p))
        return hits[0] if hits else None

    def find_card_paths(self, card_ids: Iterable[str]) -> dict[str, Path]:
        """find_card_path of many cards, each month folder listed once (the conflict scan names thousands)."""
        wanted = {i for i in card_ids if codec.SAFE_ID.match(i)}
        found: dict[str, Path] = {}
        if not wanted:
            return found
        cards = self.root / "cards"
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            months = sorted(e.name for e in os.scandir(cards)
                            if e.is_dir() and not (e.is_symlink() and outside(self.root, e.path)))
            for month in months:
                with contextlib.suppress(OSError):
                    for name in sorted(os.listdir(cards / month)):
                        cid = name[:-3] if name.endswith(".md") else None
                        if cid in wanted and os.path.islink(cards / month / name) \
                                and outside(self.root, cards / month / name):
                            continue
                        if cid in wanted and cid not in found:
                            found[cid] = cards / month / name
        return found

    def write_card(self, card: Card) -> Path:
        path = check_inside(self.root, self.find_card_path(card.id) or self.card_path(card))
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
        return files_inside(self.root, "entities", ("*.md",))

    def read_entity(self, path: Path) -> Entity:
        return codec.parse_entity(self.read_text(path), self.rel(path), path.stem)

    # -- journal and audit (append-only JSON lines)
    def journal_files(self) -> list[Path]:
        return files_inside(self.root, "journal", ("*.jsonl",))

    def append_journal(self, records: list[dict[str, Any]]) -> None:
        if records:
            at = str(records[0].get("at") or _now())
            with self.append_lock():
                path = check_inside(self.root, self.journal_file(at))
                append_lines(path, [codec.dump_json_line(r) for r in records])

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


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

