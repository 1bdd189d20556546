"""Card files in the index: which month folders and files changed, (re)indexing them one by one (or, for a bulk
build, in worker processes: bulk.py), deleting them, and the running field-length totals BM25 needs."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from typing import Any

from memvault.search.index import schema
from memvault.vault.edge import outside
from memvault.search.index.report import RefreshReport

BULK = 2000  # at least this many changed cards: parse and tokenise in worker processes
WINDOW = 8192  # cards a bulk build's workers may have prepared ahead of the writer
BATCH = 256  # card files a worker prepares per task


class CardsMixin:
    """Part of Index (core.py): expects self.db, self.root, self.mode, self.stat_all_below."""

    def _refresh_cards(self, report: RefreshReport, full: bool) -> None:
        cards_dir = os.path.join(self.root, "cards")
        stored = dict(self.db.execute("SELECT path, mtime_ns FROM dirs WHERE path LIKE 'cards/%'").fetchall())
        current: dict[str, int] = {}
        try:
            if os.path.islink(cards_dir) and outside(self.root, cards_dir):
                raise FileNotFoundError  # the whole cards folder is a link out of the vault: none is read
            with os.scandir(cards_dir) as it:
                for entry in it:
                    if entry.is_dir() and not entry.name.startswith(".") and not (
                            entry.is_symlink() and outside(self.root, entry.path)):  # out of the vault: skipped
                        current[f"cards/{entry.name}"] = entry.stat().st_mtime_ns
        except FileNotFoundError:
            pass
        full = full or self.card_count() < self.stat_all_below
        for rel in stored.keys() - current.keys():
            self._drop_month(rel, report)
            self.db.execute("DELETE FROM dirs WHERE path = ?", (rel,))
        todo = sorted(rel for rel, mtime in current.items() if full or stored.get(rel) != mtime)
        if not todo:
            return
        known: dict[str, dict[str, tuple]] = {}
        if full:
            for rowid, p, month, m, z, h, ino in self.db.execute(
                    "SELECT rowid, path, month, mtime_ns, size, hash, ino FROM cards"):
                known.setdefault(month, {})[p] = (rowid, m, z, h, ino)
        else:
            # Names and inodes only, from the covering index cards_month (a month of 12k cards at 1M cards); the
            # rest of a row is read for the few entries whose inode moved (_sync_month).
            for rel in todo:
                known[rel] = {p: (rowid, ino) for p, rowid, ino in self.db.execute(
                    "SELECT path, rowid, ino FROM cards WHERE month = ?", (rel,))}
        changed: list[tuple[str, str, Any, int | None]] = []
        fix: list[tuple[int, int]] = []
        for rel in todo:
            self._sync_month(rel, known.get(rel, {}), report, changed, fix, trust_inode=not full)
            if stored.get(rel) != current[rel]:
                self.db.execute("INSERT OR REPLACE INTO dirs(path, mtime_ns) VALUES (?, ?)", (rel, current[rel]))
        if fix:
            self.db.executemany("UPDATE cards SET ino = ? WHERE rowid = ?", fix)
        self._index_many(changed, report)

    def _drop_month(self, rel: str, report: RefreshReport) -> None:
        for (rowid,) in self.db.execute("SELECT rowid FROM cards WHERE month = ?", (rel,)).fetchall():
            self._delete_card(rowid)
            report.cards_removed += 1

    def _sync_month(self, rel: str, known: dict[str, tuple], report: RefreshReport,
                    todo: list[tuple[str, str, Any, int | None]], fix: list[tuple[int, int]],
                    trust_inode: bool = False) -> None:
        """Find the new, changed and deleted cards of a month folder whose mtime moved.

        `trust_inode` (a big vault, not a full refresh): a file whose directory entry still names the inode
        indexed is taken as unchanged without a stat. A folder's mtime moves when a file is added, deleted or
        renamed into place (an editor's or git's save: a new inode), not when a file is written in place, which
        is caught as before (the stat of every hit, `reindex`); statting the 12k other cards of the month cost
        ~100 ms of every one-card update at 1M cards. The inode compared is the directory entry's (free with
        the listing) on both sides."""
        seen = set()
        try:
            with os.scandir(os.path.join(self.root, rel)) as it:
                for entry in it:
                    if not entry.name.endswith(".md") or entry.name.startswith(".") or not entry.is_file() or (
                            entry.is_symlink() and outside(self.root, entry.path)):
                        continue
                    path = f"{rel}/{entry.name}"
                    seen.add(path)
                    old = known.get(path)
                    ino = entry.inode()
                    if old is None:  # new to the index: indexing reads and stats it (a build skips 100k stats)
                        todo.append((path, rel, None, ino))
                        continue
                    if trust_inode:
                        if old[1] == ino:
                            continue
                        old = self.db.execute("SELECT rowid, mtime_ns, size, hash, ino FROM cards WHERE rowid = ?",
                                              (old[0],)).fetchone()
                    try:
                        st = entry.stat()
                    except FileNotFoundError:
                        continue
                    if old[1] == st.st_mtime_ns and old[2] == st.st_size:
                        if old[4] != ino:
                            fix.append((ino, old[0]))
                        continue
                    todo.append((path, rel, old, ino))
        except FileNotFoundError:
            pass
        for path in known.keys() - seen:
            self._delete_card(known[path][0])
            report.cards_removed += 1

    def index_card_file(self, path: str, month: str, report: RefreshReport, old=None, ino: int | None = None) -> None:
        """(Re)index one card file, given its path relative to the vault root (`ino`: its directory entry's
        inode, when the caller listed the folder)."""
        from memvault.search.index.prepare import prepare_card  # only when a card changed: not on a plain search

        self._apply(path, month, old, prepare_card(self.root, path, self.mode), report, ino)

    def _index_many(self, todo: list[tuple[str, str, Any]], report: RefreshReport) -> None:
        """Index many card files. A bulk build (first search, reindex, a big git pull) reads, parses, tokenises
        and encodes in worker processes while this process only writes SQLite: measured at 100k cards, the
        writer is the critical path (FTS5 inserts), so it does as little Python per card as possible."""
        if len(todo) < BULK:
            for path, month, old, ino in todo:
                self.index_card_file(path, month, report, old, ino)
            return
        from memvault.search.index.bulk import index_bulk

        index_bulk(self, todo, report, WINDOW, BATCH)

    def _write_rows(self, cards: list[tuple], fts: list[tuple], ents: list[tuple[int, str, str, str, str]],
                    queue: bool = True) -> None:
        if queue:  # (not when the bulk build writes these rows to a new tantivy folder itself)
            self._queue_cards(c[0] for c in cards)
        self.db.executemany(schema.INSERT_CARD, cards)
        self.db.executemany(schema.INSERT_CFTS, fts)
        self.db.executemany(schema.INSERT_CARD_ENTITY, ents)

    def _apply(self, path: str, month: str, old, prepared: tuple, report: RefreshReport,
               ino: int | None = None) -> None:
        state = prepared[0]
        if state == "gone":
            if old:
                self._delete_card(old[0])
                report.cards_removed += 1
            return
        _state, st, digest, rec, problem = prepared
        if old and old[3] == digest:
            self.db.execute("UPDATE cards SET mtime_ns = ?, size = ?, ino = ? WHERE rowid = ?",
                            (st[0], st[1], ino, old[0]))
            return
        if problem:
            report.problems.append(problem)
        if old:
            self._delete_card(old[0])
        if rec is None:
            return
        self._insert_card(path, month, st, digest, rec, ino)
        if old:
            report.cards_updated += 1
        else:
            report.cards_added += 1

    def _insert_card(self, path: str, month: str, st: tuple[int, int], digest: str, rec: tuple,
                     ino: int | None = None) -> None:
        fields, texts, names, lens = rec
        rowid = self.db.execute(schema.INSERT_CARD, (None, path, month, st[0], st[1], digest, *fields, ino)).lastrowid
        self.db.execute(schema.INSERT_CFTS, (rowid, *texts))
        self._queue_cards((rowid,))
        if names:
            self.db.executemany(schema.INSERT_CARD_ENTITY, schema.card_entity_rows(rowid, fields, names))
        for e in names:
            self._add_keys(e, [e.replace("-", " ")])
        self._bump(1, lens)

    def _delete_card(self, rowid: int) -> None:
        row = self.db.execute("SELECT len_title, len_entities, len_body, len_tags FROM cards WHERE rowid = ?",
                              (rowid,)).fetchone()
        if row is None:
            return
        self._queue_cards((rowid,))
        self.db.execute("DELETE FROM cards WHERE rowid = ?", (rowid,))
        self.db.execute("DELETE FROM cfts WHERE rowid = ?", (rowid,))
        self.db.execute("DELETE FROM card_entities WHERE card = ?", (rowid,))
        self._bump(-1, [-x for x in row])

    def _bump(self, n: int, lens: list[int]) -> None:
        """Running totals for BM25's average field lengths; written once per refresh (_save_totals)."""
        totals = self._totals()
        totals[0] += n
        for i, x in enumerate(lens):
            totals[i + 1] += x
        self._totals_dirty = True

    def _save_totals(self) -> None:
        if getattr(self, "_totals_dirty", False):
            totals = self._totals()
            self.set_meta("n_cards", str(totals[0]))
            import json  # the totals changed: a refresh that wrote cards

            self.set_meta("card_lens", json.dumps(totals[1:]))
            self._totals_dirty = False

    def _totals(self) -> list[int]:
        cached = getattr(self, "_totals_cache", None)
        if cached is not None:
            return cached
        lens = _numbers(self.meta("card_lens", "[0,0,0,0]") or "[0,0,0,0]")
        self._totals_cache = [int(self.meta("n_cards", "0") or 0), *lens]
        return self._totals_cache


def _numbers(text: str) -> list[int | float]:
    """The JSON list of numbers card_lens holds, read without importing json (every search reads it)."""
    try:
        return [int(x) if x.strip().lstrip("-").isdigit() else float(x) for x in text.strip()[1:-1].split(",")]
    except ValueError:
        import json

        return json.loads(text)
