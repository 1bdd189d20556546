"""The key list of the dense layer: `.memvault/vectors.sqlite`, attached to the index connection as `vec`.

One row per embedded item: (space "card" | "episode", key = card or episode id, src = the card file's hash
when it was embedded, text_hash = hash of the text sent, slot = its row in the matrix file of search/dense/
store.py). vmeta holds each space's model and dimension. A row is written only after its vector is on disk
(the matrix write is fsynced first), so a crash loses at most the batch in flight. Kept apart from
search.sqlite so that `memvault reindex` or a schema change of the index never throws vectors away.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence

TYPE_CHECKING = False  # typing's own constant, without importing typing
if TYPE_CHECKING:
    import sqlite3

from memvault.search.index.episodes import EP_COLS
from memvault.search.index.reads import marks

FILE = "vectors.sqlite"
_DDL = (
    "CREATE TABLE IF NOT EXISTS vec.vmeta(space TEXT PRIMARY KEY, model TEXT, dim INTEGER, file TEXT)",
    "CREATE TABLE IF NOT EXISTS vec.vectors(space TEXT, key TEXT, src TEXT, text_hash TEXT, slot INTEGER,"
    " PRIMARY KEY(space, key))",
    "CREATE INDEX IF NOT EXISTS vec.vectors_slot ON vectors(space, slot)",
    "CREATE TABLE IF NOT EXISTS vec.vcheck(space TEXT PRIMARY KEY, stamp TEXT, missing INTEGER)",
)


# Which items have no vector: a card whose file changed since it was embedded, a live episode never embedded.
_MISSING_CARDS = ("FROM cards c LEFT JOIN vec.vectors v ON v.space = 'card' AND v.key = c.id AND v.src = c.hash"
                  " WHERE v.key IS NULL")
_MISSING_EPISODES = ("FROM episodes e LEFT JOIN vec.vectors v ON v.space = 'episode' AND v.key = e.id"
                     " WHERE v.key IS NULL AND e.id NOT IN (SELECT id FROM revoked)")


class VectorsMixin:
    """Part of Index (core.py): expects self.db, self.root and self.local (where derived files go, or None)."""

    def attach_vectors(self) -> None:
        """Attach the key list (created on first use). Outside any transaction."""
        if any(row[1] == "vec" for row in self.db.execute("PRAGMA database_list")):
            return
        path = os.path.join(self.local, FILE) if self.local else ":memory:"
        self.db.execute("ATTACH DATABASE ? AS vec", (path,))
        self.db.execute("PRAGMA vec.journal_mode=WAL")
        for stmt in _DDL:
            self.db.execute(stmt)

    def detach_vectors(self) -> None:
        """Let go of the key list (e.g. to delete a damaged one). Outside any transaction."""
        if any(row[1] == "vec" for row in self.db.execute("PRAGMA database_list")):
            self.db.execute("DETACH DATABASE vec")

    def vec_sound(self) -> bool:
        """Whether the key list passes sqlite's quick_check (reads every page: for embed and doctor, not search)."""
        return self.db.execute("PRAGMA vec.quick_check").fetchall() == [("ok",)]

    # How long a write waits for another writer; a search waits less (vec_patience) than `memvault embed`.
    vec_busy_ms = 10_000

    def vec_write(self) -> contextlib.AbstractContextManager[None]:
        """One write transaction, for a `with` block (it also serialises writers of the matrix files).
        sqlite3.OperationalError when another process keeps the write lock longer than vec_busy_ms."""
        return _transaction(self.db, self.vec_busy_ms)

    def vec_space(self, space: str) -> tuple[str, int] | None:
        """(model, dimension) of the vectors stored for `space`, or None."""
        row = self.db.execute("SELECT model, dim FROM vec.vmeta WHERE space = ?", (space,)).fetchone()
        return (row[0], int(row[1])) if row else None

    def vec_reset(self, space: str) -> int:
        """Forget every vector of `space` (the caller drops its matrix file too); how many were forgotten."""
        return self.db.execute("DELETE FROM vec.vectors WHERE space = ?", (space,)).rowcount

    def vec_set_space(self, space: str, model: str, dim: int) -> None:
        """Record the model and dimension (0: not known yet) of the vectors of `space`."""
        self.db.execute("INSERT INTO vec.vmeta(space, model, dim) VALUES (?, ?, ?) ON CONFLICT(space) DO UPDATE"
                        " SET model = excluded.model, dim = excluded.dim", (space, model, dim))

    def vec_file(self, space: str) -> str:
        """The name of the space's matrix file under .memvault/ (a compaction writes a new one)."""
        row = self.db.execute("SELECT file FROM vec.vmeta WHERE space = ?", (space,)).fetchone()
        return row[0] if row and row[0] else f"vectors-{space}.f32"

    def vec_set_file(self, space: str, name: str | None) -> None:
        self.db.execute("UPDATE vec.vmeta SET file = ? WHERE space = ?", (name, space))

    def vec_live_slots(self, space: str) -> list[tuple[str, int]]:
        """(key, slot) of every stored vector of `space`, by slot."""
        return self.db.execute("SELECT key, slot FROM vec.vectors WHERE space = ? ORDER BY slot", (space,)).fetchall()

    def vec_relocate(self, space: str, moves: Sequence[tuple[str, int]]) -> None:
        """Give keys new slots (key, slot): after a compaction wrote the live rows to a new file."""
        self.db.executemany("UPDATE vec.vectors SET slot = ? WHERE space = ? AND key = ?",
                            [(slot, space, key) for key, slot in moves])

    def vec_count(self, space: str) -> int:
        return self.db.execute("SELECT count(*) FROM vec.vectors WHERE space = ?", (space,)).fetchone()[0]

    def vec_next_slot(self, space: str) -> int:
        (top,) = self.db.execute("SELECT max(slot) FROM vec.vectors WHERE space = ?", (space,)).fetchone()
        return 0 if top is None else int(top) + 1

    def vec_missing_cards(self, limit: int | None = None) -> list[tuple[str, str, str, str, str]]:
        """(id, file hash, title, body, entities JSON) of the cards with no vector for their current file."""
        return self._missing("c.id, c.hash, c.title, c.body, c.entities", _MISSING_CARDS, "c.rowid", limit)

    def vec_missing_card_count(self) -> int:
        return self._missing("count(*)", _MISSING_CARDS)[0][0]

    def vec_missing_episodes(self, limit: int | None = None) -> list[tuple[str, str, str, str]]:
        """(id, user, assistant, speakers as JSON) of the live episodes with no vector."""
        return self._missing("e.id, e.user, e.assistant, e.speakers", _MISSING_EPISODES, "e.rowid", limit)

    def vec_missing_episode_count(self) -> int:
        return self._missing("count(*)", _MISSING_EPISODES)[0][0]

    def _missing(self, columns: str, source: str, order: str | None = None, limit: int | None = None) -> list:
        """One query over the items without a vector: the listing and its count share the rule (`source`)."""
        sql = f"SELECT {columns} {source}" + (f" ORDER BY {order}" if order else "")
        return self.db.execute(sql + (f" LIMIT {int(limit)}" if limit is not None else "")).fetchall()

    def vec_checked(self, space: str) -> tuple[str, int] | None:
        """(stamp, missing) of the last count of items of `space` without a vector (a search reads it instead
        of joining every card: that join costs ~0.1-0.2 s at 100k cards)."""
        return self.db.execute("SELECT stamp, missing FROM vec.vcheck WHERE space = ?", (space,)).fetchone()

    def vec_set_checked(self, space: str, stamp: str | None, missing: int = 0) -> None:
        """Remember a count (stamp None: forget it, e.g. after embedding)."""
        if stamp is None:
            self.db.execute("DELETE FROM vec.vcheck WHERE space = ?", (space,))
        else:
            self.db.execute("INSERT OR REPLACE INTO vec.vcheck(space, stamp, missing) VALUES (?, ?, ?)",
                            (space, stamp, missing))

    def vec_key_texts(self, space: str, keys: Sequence[str]) -> dict[str, tuple[str, int]]:
        """key -> (text hash, slot) of the stored vectors of these keys: a card whose file changed but whose
        embedded text did not (a status change) keeps its vector."""
        out: dict[str, tuple[str, int]] = {}
        for i in range(0, len(keys), 500):
            part = list(keys[i:i + 500])
            out.update((k, (h, s)) for k, h, s in self.db.execute(
                f"SELECT key, text_hash, slot FROM vec.vectors WHERE space = ? AND key IN ({marks(part)})",
                (space, *part)))
        return out

    def vec_put(self, space: str, rows: Sequence[tuple[str, str, str, int]]) -> None:
        """Record (key, src, text_hash, slot) rows: their vectors are already in the matrix file."""
        self.db.executemany("INSERT OR REPLACE INTO vec.vectors(space, key, src, text_hash, slot) VALUES (?,?,?,?,?)",
                            [(space, *r) for r in rows])

    def vec_forget(self, space: str, keys: Sequence[str]) -> int:
        """Delete the rows of these keys with secure_delete on, so that their pages are zeroed rather than left
        free with the old bytes in them (forget --purge); how many went."""
        if not keys:
            return 0
        self.db.execute("PRAGMA vec.secure_delete = ON")
        return self.db.execute(f"DELETE FROM vec.vectors WHERE space = ? AND key IN ({marks(keys)})",
                               (space, *keys)).rowcount

    def vec_checkpoint(self) -> None:
        """Copy the write-ahead log into the key list and empty it (outside any transaction)."""
        self.db.execute("PRAGMA vec.wal_checkpoint(TRUNCATE)")

    def vec_prune(self, space: str) -> int:
        """Forget the vectors of cards or episodes that are gone (deleted, revoked)."""
        if space == "card":
            sql = "DELETE FROM vec.vectors WHERE space = 'card' AND key NOT IN (SELECT id FROM cards)"
        else:
            sql = ("DELETE FROM vec.vectors WHERE space = 'episode' AND (key NOT IN (SELECT id FROM episodes)"
                   " OR key IN (SELECT id FROM revoked))")
        return self.db.execute(sql).rowcount

    def vec_slot_keys(self, space: str, slots: Sequence[int]) -> dict[int, str]:
        """slot -> key for the slots still in use (a slot whose item was re-embedded elsewhere is unused)."""
        return dict(self.db.execute(f"SELECT slot, key FROM vec.vectors WHERE space = ? AND slot IN ({marks(slots)})",
                                    (space, *slots)).fetchall())

    def vec_key_slots(self, space: str, keys: Sequence[str]) -> dict[str, int]:
        return dict(self.db.execute(f"SELECT key, slot FROM vec.vectors WHERE space = ? AND key IN ({marks(keys)})",
                                    (space, *keys)).fetchall())

    def episodes_by_ids(self, ids: Sequence[str], project: str | None) -> list[tuple]:
        """Rows (EP_COLS) of the live episodes with these ids (of `project` when given)."""
        where = " AND e.project = ?" if project else ""
        return self.db.execute(
            f"SELECT {EP_COLS} FROM efts f JOIN episodes e ON e.rowid = f.rowid WHERE e.id IN ({marks(ids)}){where}"
            f" AND e.id NOT IN (SELECT id FROM revoked)", (*ids, *([project] if project else []))).fetchall()


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection, busy_ms: int) -> Iterator[None]:
    """BEGIN IMMEDIATE (waiting up to `busy_ms` for another writer) on entry; COMMIT on a clean exit, ROLLBACK
    otherwise (also when the COMMIT fails)."""
    db.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
    try:
        db.execute("BEGIN IMMEDIATE")
    finally:
        db.execute("PRAGMA busy_timeout = 10000")  # the index's own (sqlite3.connect timeout=10)
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
