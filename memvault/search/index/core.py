"""The Index object: opening, closing and clearing the index, meta values, and the refresh transaction.

The work is done by mixins, one per part of the index: cards.py (card files), entities.py (entity pages and
names), episodes.py (episode day files), reads.py (what ranking reads), browse.py (what views read),
vectors.py (the key list of the dense layer, attached only when embeddings are on).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from memvault.search.index import schema
from memvault.search.index.browse import BrowseMixin
from memvault.search.index.cards import CardsMixin
from memvault.search.index.entities import EntitiesMixin
from memvault.search.index.episodes import EpisodesMixin
from memvault.search.index.lists import ListsMixin
from memvault.search.index.reads import ReadsMixin, marks
from memvault.search.index.report import RefreshReport
from memvault.search.index.vectors import VectorsMixin
from memvault.vault.local import derived_path


class Index(CardsMixin, EntitiesMixin, EpisodesMixin, ReadsMixin, BrowseMixin, VectorsMixin, ListsMixin):
    """An open index of one vault. Use as a context manager; `refresh()` brings it up to date."""

    def __init__(self, root: str | os.PathLike, mode: str = "bigram", stat_all_below: int = 5000):
        # Paths as strings (os.path), not pathlib: a search's process never imports pathlib (~17 M instructions
        # with urllib.parse and ipaddress, bench/search.py).
        self.root = os.fspath(root)
        self.mode = mode
        self.stat_all_below = stat_all_below
        # .memvault/, or a per-user cache for a vault this user cannot write; None: in memory (vault.local)
        self.local = derived_path(self.root)
        self.path = os.path.join(self.local, schema.FILE) if self.local else None
        self.frozen = False
        try:
            self.db = self._connect()
        except sqlite3.OperationalError as exc:
            if not schema.full(exc):
                raise
            # Trigger: the disk is full (opening in WAL mode must create files). Why: reading must still work
            # there. Outcome: the file is read as it is; the first write copies it into memory (_thaw).
            self.db = schema.connect_frozen(self.path, mode)
            self.full = self.local
            self.path, self.local, self.frozen = None, None, True  # FTS5 answers: no tantivy folder to open

    # -- lifecycle
    def _connect(self) -> sqlite3.Connection:
        return schema.connect(self.path, self.mode)

    def _reconnect(self) -> None:
        """Open the index file again (a build from nothing may have put a new one in place); the key list of the
        dense layer stays attached when it was."""
        vec = any(row[1] == "vec" for row in self.db.execute("PRAGMA database_list"))
        self.db.close()
        self.db = self._connect()
        if vec:
            self.attach_vectors()
        self._lists_open = self._lists_now = None
        self._forget_totals()
        self.__dict__.pop("_keys_seen", None)

    def _remove_files(self) -> None:
        if self.path is not None:
            schema.remove_files(self.path)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def clear(self) -> None:
        """Forget everything (the next refresh re-reads the whole vault)."""
        self.db.close()
        self._remove_files()
        self.db = self._connect()

    # -- meta
    def meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", (key, value))

    # -- refresh
    def refresh(self, episodes: bool = False, full: bool = False,
                on_progress: Callable[[str], None] | None = None, rebuild: bool = False) -> RefreshReport:
        """Bring the index up to date with the files. `full` stats every card file even when no folder moved.
        `rebuild` (reindex): forget everything and read the whole vault again; a big vault's index is built in a
        new file that searches meanwhile do not wait for (they read the current one) and put in place when done."""
        if self.frozen:
            if rebuild:  # reindex: a rebuild in memory would vanish with this process
                from memvault.errors import NoSpace

                raise NoSpace.at(str(self.full))
            return self._thawed(lambda: self.refresh(episodes, full, on_progress, rebuild))
        report = None
        if self.path is not None and (rebuild or not self.card_count()):
            # An empty index of a big vault (first search) or a rebuild: built in a new file, then put in place
            # (fresh.py); None: refresh this file as it is.
            from memvault.search.index import fresh

            if fresh.enough_cards(self.root) and (rebuild or not self.db.execute("SELECT 1 FROM cards LIMIT 1")
                                                  .fetchone()):
                report = fresh.build(self, lambda: self._refresh_files(episodes, full or rebuild),
                                     replace=rebuild)
        if report is None:
            if rebuild:
                self.clear()
            report = self._refresh_files(episodes, full or rebuild)
        # The tantivy list (lists.py): built when missing, brought up to date when enough changes wait; a full
        # refresh (reindex) applies every waiting change.
        self._lists_open = None
        self.sync_lists(force=full or rebuild)
        if self.__dict__.pop("_lists_streamed", False):  # a bulk build wrote a new folder: the old ones go
            self._drop_other_lists(self.meta("lists") or "", self.meta("lists_ready") or "")
        return report

    def _thawed(self, action: Callable[[], object]):
        """Run `action` on a frozen index (a full disk); when it must write, the index is copied into memory
        first and `action` runs again there (nothing is written to disk)."""
        try:
            self.frozen = False  # refresh proper; writes fail on the read-only connection
            return action()
        except sqlite3.OperationalError:
            mem = sqlite3.connect(":memory:", isolation_level=None)
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            self.db.backup(mem)
            self.db.close()
            self.db = mem
            self._forget_totals()
            return action()

    def _refresh_files(self, episodes: bool, full: bool) -> RefreshReport:
        """The refresh transaction: cards, entities, episodes (when asked), totals, generation."""
        # A deferred transaction costs nothing when nothing changed (the common case). Trigger: another process
        # wrote meanwhile, so our read snapshot cannot become a write. Outcome: start over with a write lock.
        for begin in ("BEGIN", "BEGIN IMMEDIATE"):
            report = RefreshReport()
            self._forget_totals()
            self.db.execute(begin)
            try:
                self._refresh_cards(report, full)
                self._refresh_entities(report, full)
                if episodes:
                    self._refresh_episodes(report)
                self._save_totals()
                self._save_episode_totals()
                if report.changed:
                    self._new_generation()
                self.db.execute("COMMIT")
                return report
            except sqlite3.OperationalError as exc:
                self.db.execute("ROLLBACK")
                self._forget_totals()
                if begin == "BEGIN IMMEDIATE" or "locked" not in str(exc) and "busy" not in str(exc):
                    raise
            except BaseException:
                self.db.execute("ROLLBACK")
                self._forget_totals()
                raise
        raise AssertionError("unreachable")

    def _forget_totals(self) -> None:
        """Drop the running totals read from meta (cards', turns'): a rollback or a new file makes them stale."""
        self._totals_cache = None
        self.__dict__.pop("_episode_totals_cache", None)

    def _new_generation(self) -> None:
        """A new random stamp whenever cards or episodes changed: what the dense layer keys its cached count
        of items without a vector on (random, not a counter: a rebuilt index must not repeat an old stamp)."""
        self.set_meta("generation", os.urandom(8).hex())

    def generation(self) -> str:
        return self.meta("generation", "") or ""

    def card_count(self) -> int:
        return int(self.meta("n_cards", "0") or 0)

    # -- freshness of single hits
    def verify_cards(self, rowids: list[int]) -> bool:
        """Stat the files of these hits; re-index any that changed. True when all were current."""
        stale = []
        for rowid, path, month, m, s, h in self.db.execute(
            f"SELECT rowid, path, month, mtime_ns, size, hash FROM cards WHERE rowid IN ({marks(rowids)})",
            rowids,
        ):
            try:
                st = os.stat(os.path.join(self.root, path))
            except FileNotFoundError:
                stale.append((path, month, (rowid, m, s, h)))
                continue
            if (st.st_mtime_ns, st.st_size) != (m, s):
                stale.append((path, month, (rowid, m, s, h)))
        if not stale:
            return True
        report = RefreshReport()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for path, month, old in stale:
                self.index_card_file(path, month, report, old)
            self._save_totals()
            self._save_episode_totals()
            if report.changed:
                self._new_generation()
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            self._forget_totals()
            raise
        return report.changed == 0
