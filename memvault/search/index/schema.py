"""Schema of the search index: the file name, the version, the DDL, and opening the SQLite file.

An index from another schema or tokeniser version is derived data: it is deleted and built again.
Holds SQL text (as every module of memvault/search/index may); imports only the standard library and tokenize.
"""

from __future__ import annotations

import os
import sqlite3

from memvault.search import tokenize
from memvault.vault.files import remove_file

SCHEMA = 13
FILE = "search.sqlite"
CARD_FIELDS = ("title", "entities", "body", "tags")
EPISODE_FIELDS = ("user", "assistant")

_DDL = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER);
CREATE TABLE IF NOT EXISTS cards(
  rowid INTEGER PRIMARY KEY, id TEXT, path TEXT UNIQUE, month TEXT, mtime_ns INTEGER, size INTEGER, hash TEXT,
  kind TEXT, project TEXT, status TEXT, created TEXT, valid_from TEXT, valid_to TEXT, title TEXT, body TEXT,
  entities TEXT, tags TEXT, episodes TEXT, supersedes TEXT, superseded_by TEXT,
  len_title INTEGER, len_entities INTEGER, len_body INTEGER, len_tags INTEGER, ino INTEGER);
CREATE INDEX IF NOT EXISTS cards_id ON cards(id);
CREATE INDEX IF NOT EXISTS cards_month ON cards(month, path, mtime_ns, size, hash, ino);
CREATE INDEX IF NOT EXISTS cards_created ON cards(created);
CREATE INDEX IF NOT EXISTS cards_status ON cards(status, project);
CREATE INDEX IF NOT EXISTS cards_world ON cards(coalesce(valid_from, substr(created, 1, 10)), created, id, project,
  status);
CREATE TABLE IF NOT EXISTS card_entities(card INTEGER, entity TEXT, created TEXT, id TEXT, status TEXT);
CREATE INDEX IF NOT EXISTS ce_entity ON card_entities(entity, created, card, status, id);
CREATE INDEX IF NOT EXISTS ce_card ON card_entities(card);
CREATE INDEX IF NOT EXISTS ce_degree ON card_entities(entity);
CREATE VIRTUAL TABLE IF NOT EXISTS cfts USING fts5(title, entities, body, tags, tokenize='ascii', detail='column');
CREATE VIRTUAL TABLE IF NOT EXISTS cvocab USING fts5vocab(cfts, row);
CREATE TABLE IF NOT EXISTS tq(seq INTEGER PRIMARY KEY AUTOINCREMENT, card INTEGER);
CREATE TABLE IF NOT EXISTS entities(slug TEXT PRIMARY KEY, name TEXT, aliases TEXT, kind TEXT, prose TEXT,
  mtime_ns INTEGER, size INTEGER);
CREATE INDEX IF NOT EXISTS entities_name ON entities(name);
CREATE TABLE IF NOT EXISTS entity_keys(key TEXT, slug TEXT, first TEXT, PRIMARY KEY(key, slug));
CREATE INDEX IF NOT EXISTS ek_first ON entity_keys(first);
CREATE TABLE IF NOT EXISTS efiles(path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, clean INTEGER);
CREATE TABLE IF NOT EXISTS episodes(
  rowid INTEGER PRIMARY KEY, id TEXT, file TEXT, at TEXT, project TEXT, session TEXT, turn INTEGER,
  refs TEXT, user TEXT, assistant TEXT, len_user INTEGER, len_assistant INTEGER, speakers TEXT);
CREATE INDEX IF NOT EXISTS episodes_id ON episodes(id);
CREATE INDEX IF NOT EXISTS episodes_file ON episodes(file);
CREATE INDEX IF NOT EXISTS episodes_turn ON episodes(project, session, turn);
CREATE TABLE IF NOT EXISTS revoked(id TEXT PRIMARY KEY, file TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS efts USING fts5(user, assistant, tokenize='ascii', detail='column');
CREATE VIRTUAL TABLE IF NOT EXISTS evocab USING fts5vocab(efts, row);
"""


# FTS5's defaults for the settings a build from nothing changes (bulk.py): in-memory hash size, merging
FTS_DEFAULTS = (("hashsize", 1 << 20), ("automerge", 4), ("crisismerge", 16))
SECONDARY = ("cards_id", "cards_month", "cards_created", "cards_status", "cards_world", "ce_entity", "ce_card",
             "ce_degree")
INSERT_CARD = (
    "INSERT INTO cards(rowid, path, month, mtime_ns, size, hash, id, kind, project, status, created, valid_from,"
    " valid_to, title, body, entities, tags, episodes, supersedes, superseded_by,"
    " len_title, len_entities, len_body, len_tags, ino) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
INSERT_CFTS = "INSERT INTO cfts(rowid, title, entities, body, tags) VALUES (?,?,?,?,?)"
INSERT_CARD_ENTITY = "INSERT INTO card_entities(card, entity, created, id, status) VALUES (?, ?, ?, ?, ?)"


def card_entity_rows(rowid: int, fields: tuple, names: list[str]) -> list[tuple[int, str, str, str, str]]:
    """The card_entities rows of one card, for INSERT_CARD_ENTITY: its entity names with the card's created, id
    and status (`fields`: the card's INSERT_CARD values from id on: id, kind, project, status, created, …)."""
    return [(rowid, name, fields[4], fields[0], fields[3]) for name in names]


def create_secondary(db: sqlite3.Connection) -> None:
    """(Re)create the secondary indexes a bulk build dropped. execute, not executescript: that would commit
    the open transaction."""
    for stmt in _DDL.split(";"):
        if "CREATE INDEX" in stmt:
            db.execute(stmt)


def drop_secondary(db: sqlite3.Connection) -> None:
    for name in SECONDARY:
        db.execute(f"DROP INDEX IF EXISTS {name}")


def connect(path: str | None, mode: str) -> sqlite3.Connection:
    """Open the index file, creating it (or starting over when it is from another version or unusable);
    `path` None: an index in memory, for one command on a vault whose derived files cannot be written anywhere."""
    if path is None:
        db = sqlite3.connect(":memory:", isolation_level=None)
        _create(db, mode)
        return db
    os.makedirs(os.path.dirname(path), exist_ok=True)
    for attempt in range(2):
        try:
            db = sqlite3.connect(path, timeout=10.0, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            row = None
            try:
                row = dict(db.execute("SELECT k, v FROM meta WHERE k IN ('schema','tokens')").fetchall())
            except sqlite3.OperationalError:
                pass
            if row != _versions(mode):
                if row:  # an index from another version or tokeniser: derived, so start over
                    db.close()
                    remove_files(path)
                    db = sqlite3.connect(path, timeout=10.0, isolation_level=None)
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=NORMAL")
                _create(db, mode)
            return db
        except sqlite3.DatabaseError as exc:
            if full(exc):
                raise  # a full disk is not a damaged index: keep it (Index reads it frozen)
            # Trigger: the file is not a usable SQLite database (torn copy, disk trouble).
            # Why: the index is derived. Outcome: delete it and build a new one, once.
            if attempt:
                raise
            remove_files(path)
    raise AssertionError("unreachable")


def full(exc: BaseException) -> bool:
    """Whether a SQLite error says the disk (or a quota) is full: SQLITE_FULL, or an I/O error of a write
    that found no space (the WAL's shared memory file cannot grow)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code == 13 or "disk is full" in str(exc) or (code is not None and code & 0xFF == 10
                                                         and "disk" in str(exc))


def connect_frozen(path: str, mode: str) -> sqlite3.Connection:
    """The index file opened for reading without changing anything on disk (no journal mode switch, no WAL or
    shared-memory file): what a search on a full disk reads. An unusable or other-version file gives an empty
    index in memory instead (the caller builds it there for this one command)."""
    from urllib.parse import quote  # only on a full disk

    try:
        db = sqlite3.connect(f"file:{quote(path)}?immutable=1", uri=True, isolation_level=None)
        if dict(db.execute("SELECT k, v FROM meta WHERE k IN ('schema','tokens')").fetchall()) == _versions(mode):
            return db
        db.close()
    except sqlite3.DatabaseError:
        pass
    return connect(None, mode)


def connect_unjournaled(path: str, mode: str) -> sqlite3.Connection:
    """A new index file for a build from nothing that nobody else opens until it is complete (fresh.py): no
    journal, no sync of each write (a crash leaves an orphan file, never a damaged index in use)."""
    remove_files(path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    _create(db, mode)
    return db


def _versions(mode: str) -> dict[str, str]:
    """What meta records of the index's format: a file whose values differ is from another version."""
    return {"schema": str(SCHEMA), "tokens": f"{tokenize.VERSION}:{mode}"}


def _create(db: sqlite3.Connection, mode: str) -> None:
    """The tables and indexes of an empty index, and its versions."""
    db.executescript(_DDL)
    db.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", list(_versions(mode).items()))


def remove_files(path: str | os.PathLike) -> None:
    """Delete the index file and its WAL companions (derived data: always safe); when `path` is the symlink a
    build from nothing made (fresh.py), the file it points to as well."""
    path = os.fspath(path)
    try:
        target = os.path.join(os.path.dirname(path), os.readlink(path))
        for suffix in ("", "-wal", "-shm"):
            remove_file(target + suffix)
    except OSError:
        pass
    for suffix in ("", "-wal", "-shm"):
        remove_file(path + suffix)
