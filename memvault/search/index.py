"""The derived search index: `.memvault/search.sqlite` (SQLite FTS5 over pre-tokenised text).

Exception to "vault.py is the only module that opens files": this module opens its own SQLite file under
`.memvault/` and reads card, entity and episode files to index them. It writes nothing outside `.memvault/`.
It stays free of yaml and of vault.py so that `memvault search` starts fast (PERF-NOTES: every import counts);
cards in an unusual layout fall back to codec.parse_card, imported only then.

Freshness: every open stats the card month folders and the entities folder (a few hundred µs even at 100k
cards). A folder whose mtime moved is listed and its files compared by (mtime, size), then by content hash, so
cards added, deleted or renamed by memvault, an editor or `git pull` are seen before the query runs. An edit in
place that leaves the folder mtime alone is caught by a full stat of every card file when the vault is small
(`search.stat_all_below`), by the stat of every hit before it is returned, and by `memvault reindex`.
Deleting the index is always safe: the next search rebuilds it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from memvault.search import tokenize
from memvault.vault.locate import locate_vault

SCHEMA = 6
BULK = 2000  # at least this many changed cards: parse and tokenise in worker processes
FILE = "search.sqlite"
CARD_FIELDS = ("title", "entities", "body", "tags")
EPISODE_FIELDS = ("user", "assistant")
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_STATUSES = ("active", "superseded", "retracted")

_DDL = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER);
CREATE TABLE IF NOT EXISTS cards(
  rowid INTEGER PRIMARY KEY, id TEXT, path TEXT UNIQUE, month TEXT, mtime_ns INTEGER, size INTEGER, hash TEXT,
  kind TEXT, project TEXT, status TEXT, created TEXT, valid_from TEXT, valid_to TEXT, title TEXT, body TEXT,
  entities TEXT, tags TEXT, episodes TEXT, supersedes TEXT, superseded_by TEXT,
  len_title INTEGER, len_entities INTEGER, len_body INTEGER, len_tags INTEGER);
CREATE INDEX IF NOT EXISTS cards_id ON cards(id);
CREATE INDEX IF NOT EXISTS cards_month ON cards(month);
CREATE INDEX IF NOT EXISTS cards_created ON cards(created);
CREATE TABLE IF NOT EXISTS card_entities(card INTEGER, entity TEXT);
CREATE INDEX IF NOT EXISTS ce_entity ON card_entities(entity, card);
CREATE INDEX IF NOT EXISTS ce_card ON card_entities(card);
CREATE VIRTUAL TABLE IF NOT EXISTS cfts USING fts5(title, entities, body, tags, tokenize='ascii', detail='column');
CREATE VIRTUAL TABLE IF NOT EXISTS cvocab USING fts5vocab(cfts, row);
CREATE TABLE IF NOT EXISTS entities(slug TEXT PRIMARY KEY, name TEXT, aliases TEXT, kind TEXT, prose TEXT,
  mtime_ns INTEGER, size INTEGER);
CREATE TABLE IF NOT EXISTS entity_keys(key TEXT, slug TEXT, first TEXT, PRIMARY KEY(key, slug));
CREATE INDEX IF NOT EXISTS ek_first ON entity_keys(first);
CREATE TABLE IF NOT EXISTS efiles(path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, clean INTEGER);
CREATE TABLE IF NOT EXISTS episodes(
  rowid INTEGER PRIMARY KEY, id TEXT, file TEXT, at TEXT, project TEXT, session TEXT, turn INTEGER,
  refs TEXT, user TEXT, assistant TEXT, len_user INTEGER, len_assistant INTEGER);
CREATE INDEX IF NOT EXISTS episodes_id ON episodes(id);
CREATE INDEX IF NOT EXISTS episodes_file ON episodes(file);
CREATE TABLE IF NOT EXISTS revoked(id TEXT PRIMARY KEY, file TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS efts USING fts5(user, assistant, tokenize='ascii', detail='column');
CREATE VIRTUAL TABLE IF NOT EXISTS evocab USING fts5vocab(efts, row);
"""


class RefreshReport:
    """What a refresh changed. A plain class: a dataclass costs milliseconds at import on the search path."""

    def __init__(self) -> None:
        self.cards_added = 0
        self.cards_updated = 0
        self.cards_removed = 0
        self.entities = 0
        self.episodes_added = 0
        self.problems: list[str] = []  # "path: reason", never file text

    def __repr__(self) -> str:
        return (f"RefreshReport(added={self.cards_added}, updated={self.cards_updated}, "
                f"removed={self.cards_removed}, entities={self.entities}, episodes={self.episodes_added})")

    @property
    def changed(self) -> int:
        return self.cards_added + self.cards_updated + self.cards_removed + self.episodes_added


# ---------------------------------------------------------------- vault location without yaml


# The vault's location, found without importing yaml (vault.py does) on the search fast path.
find_root = locate_vault


# ---------------------------------------------------------------- fast front-matter reader


def _plain(value: str) -> Any:
    """A YAML plain or simply quoted scalar as our dumper writes it; raises ValueError for anything else."""
    v = value.strip()
    if v in ("", "null", "~", "Null", "NULL"):
        return None
    if v[0] == "'":
        if len(v) < 2 or v[-1] != "'" or "'" in v[1:-1].replace("''", ""):
            raise ValueError("quoted")
        return v[1:-1].replace("''", "'")
    if v[0] in '"&*!|>%@`#{}[]' or " #" in v or ": " in v or v.endswith(":"):
        raise ValueError("complex")
    return v


def _flow_list(value: str) -> list[Any]:
    v = value.strip()
    if not (v.startswith("[") and v.endswith("]")):
        raise ValueError("not a flow list")
    inner = v[1:-1].strip()
    if not inner:
        return []
    if any(c in inner for c in "[]{}\"") or "'" in inner:
        raise ValueError("complex list")
    return [_plain(x) for x in inner.split(", ")]


def _source_episodes(value: str) -> list[str]:
    v = value.strip()
    if v in ("{}", "null", ""):
        return []
    if not (v.startswith("{") and v.endswith("}")) or '"' in v or "'" in v:
        raise ValueError("complex source")
    m = re.search(r"(?:^|[{,]\s*)episodes: (\[[^\[\]]*\])", v)
    return [e for e in _flow_list(m.group(1)) if e] if m else []


_CARD_LISTS = frozenset(("entities", "tags", "supersedes", "superseded_by"))
_CARD_SCALARS = frozenset(("id", "kind", "title", "project", "created", "valid_from", "valid_to", "status", "subject",
                           "field", "value"))
_BAD, _SKIP = object(), object()
# Most front-matter lines repeat from card to card ("kind: fact", "status: active", "tags: []", a month's
# "created: …"): parsed once per process. Lines that are mostly unique are not kept; the cache is bounded.
_LINES: dict[str, Any] = {}
_UNIQUE = ("id:", "title:", "entities:", "source:")


def _card_line(line: str) -> Any:
    """One front-matter line: (key, value) with lists as tuples, _SKIP for a key the index ignores, _BAD when the
    line is outside the layout codec.card_to_text writes."""
    if not line or line[0] in " \t-#":
        return _BAD
    key, _sep, val = line.partition(":")
    if not key.isidentifier() or (val and val[0] != " "):
        return _BAD
    try:
        if key in _CARD_LISTS:
            return key, tuple(str(x) for x in _flow_list(val) if x is not None)
        if key == "source":
            return "episodes", tuple(_source_episodes(val))
        if key in _CARD_SCALARS:
            return key, _plain(val)
    except ValueError:
        return _BAD
    return _SKIP


def parse_card_fast(text: str) -> dict[str, Any] | None:
    """Front matter in exactly the layout codec.card_to_text writes (~10 µs); None means "use codec"."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end < 0:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            return None
    meta: dict[str, Any] = {}
    cache = _LINES
    for line in text[4:end].split("\n"):
        got = cache.get(line)
        if got is None:
            got = _card_line(line)
            if len(cache) < 20_000 and not line.startswith(_UNIQUE):
                cache[line] = got
        if got is _BAD:
            return None
        if got is not _SKIP:
            key, value = got
            meta[key] = list(value) if type(value) is tuple else value
    if not all(isinstance(meta.get(k), str) and meta[k] for k in ("id", "kind", "title")):
        return None
    if not _SAFE_ID.match(meta["id"]) or (meta.get("status") or "active") not in _STATUSES:
        return None
    meta["body"] = text[end + 5 :].strip("\n")
    return meta


def _parse_card_slow(text: str, rel: str) -> dict[str, Any]:
    from memvault.vault import codec  # imports yaml: only for cards a person laid out differently

    card = codec.parse_card(text, rel)
    return {
        "id": card.id, "kind": card.kind, "title": card.title, "project": card.project,
        "entities": list(card.entities), "created": card.created, "valid_from": card.valid_from,
        "valid_to": card.valid_to, "status": card.status, "episodes": list(card.episodes),
        "supersedes": list(card.supersedes), "superseded_by": list(card.superseded_by), "tags": list(card.tags),
        "body": card.body, "subject": card.subject, "field": card.field, "value": card.value,
    }


def _parse_entity(text: str, rel: str, slug: str) -> dict[str, Any]:
    from memvault.vault import codec

    ent = codec.parse_entity(text, rel, slug)
    return {"name": ent.name, "aliases": list(ent.aliases), "kind": ent.kind, "prose": ent.prose}


def _parse_entity_fast(text: str, slug: str) -> dict[str, Any] | None:
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end < 0:
        return None
    meta: dict[str, Any] = {}
    try:
        for line in text[4:end].split("\n"):
            key, sep, val = line.partition(":")
            if not line or line[0] in " \t-#" or not key.isidentifier():
                return None
            if key == "aliases":
                meta["aliases"] = [str(x) for x in _flow_list(val) if x is not None]
            elif key in ("name", "kind"):
                meta[key] = _plain(val)
    except ValueError:
        return None
    body = text[end + 5 :]
    cut = body.find("<!-- memvault:begin -->")
    return {"name": str(meta.get("name") or slug), "aliases": meta.get("aliases") or [], "kind": meta.get("kind"),
            "prose": (body[:cut] if cut >= 0 else body).strip("\n")}


# ---------------------------------------------------------------- the index


class Index:
    """An open index of one vault. Use as a context manager; `refresh()` brings it up to date."""

    def __init__(self, root: Path, mode: str = "bigram", stat_all_below: int = 5000):
        self.root = Path(root)
        self.mode = mode
        self.stat_all_below = stat_all_below
        self.path = self.root / ".memvault" / FILE
        self.db = self._connect()

    # -- lifecycle
    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in range(2):
            try:
                db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                row = None
                with contextlib.suppress(sqlite3.OperationalError):
                    row = dict(db.execute("SELECT k, v FROM meta WHERE k IN ('schema','tokens')").fetchall())
                want = {"schema": str(SCHEMA), "tokens": f"{tokenize.VERSION}:{self.mode}"}
                if row != want:
                    if row:  # an index from another version or tokeniser: derived, so start over
                        db.close()
                        self._remove_files()
                        db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
                        db.execute("PRAGMA journal_mode=WAL")
                        db.execute("PRAGMA synchronous=NORMAL")
                    db.executescript(_DDL)
                    db.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", list(want.items()))
                return db
            except sqlite3.DatabaseError:
                # Trigger: the file is not a usable SQLite database (torn copy, disk trouble).
                # Why: the index is derived. Outcome: delete it and build a new one, once.
                if attempt:
                    raise
                self._remove_files()
        raise AssertionError("unreachable")

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(self.path) + suffix)

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
                on_progress: Callable[[str], None] | None = None) -> RefreshReport:
        """Bring the index up to date with the files. `full` stats every card file even when no folder moved."""
        # A deferred transaction costs nothing when nothing changed (the common case). Trigger: another process
        # wrote meanwhile, so our read snapshot cannot become a write. Outcome: start over with a write lock.
        for begin in ("BEGIN", "BEGIN IMMEDIATE"):
            report = RefreshReport()
            self._totals_cache = None
            self.db.execute(begin)
            try:
                self._refresh_cards(report, full)
                self._refresh_entities(report)
                if episodes:
                    self._refresh_episodes(report)
                self._save_totals()
                self.db.execute("COMMIT")
                return report
            except sqlite3.OperationalError as exc:
                self.db.execute("ROLLBACK")
                self._totals_cache = None
                if begin == "BEGIN IMMEDIATE" or "locked" not in str(exc) and "busy" not in str(exc):
                    raise
            except BaseException:
                self.db.execute("ROLLBACK")
                self._totals_cache = None
                raise
        raise AssertionError("unreachable")

    def card_count(self) -> int:
        return int(self.meta("n_cards", "0") or 0)

    def _refresh_cards(self, report: RefreshReport, full: bool) -> None:
        cards_dir = self.root / "cards"
        stored = dict(self.db.execute("SELECT path, mtime_ns FROM dirs WHERE path LIKE 'cards/%'").fetchall())
        current: dict[str, int] = {}
        with contextlib.suppress(FileNotFoundError):
            with os.scandir(cards_dir) as it:
                for entry in it:
                    if entry.is_dir() and not entry.name.startswith("."):
                        current[f"cards/{entry.name}"] = entry.stat().st_mtime_ns
        full = full or self.card_count() < self.stat_all_below
        for rel in stored.keys() - current.keys():
            self._drop_month(rel, report)
            self.db.execute("DELETE FROM dirs WHERE path = ?", (rel,))
        todo = sorted(rel for rel, mtime in current.items() if full or stored.get(rel) != mtime)
        if not todo:
            return
        known: dict[str, dict[str, tuple]] = {}
        rows = self.db.execute("SELECT rowid, path, month, mtime_ns, size, hash FROM cards") if full else (
            self.db.execute(f"SELECT rowid, path, month, mtime_ns, size, hash FROM cards WHERE month IN"
                            f" ({','.join('?' * len(todo))})", todo))
        for rowid, p, month, m, z, h in rows:
            known.setdefault(month, {})[p] = (rowid, m, z, h)
        changed: list[tuple[str, str, Any]] = []
        for rel in todo:
            self._sync_month(rel, known.get(rel, {}), report, changed)
            if stored.get(rel) != current[rel]:
                self.db.execute("INSERT OR REPLACE INTO dirs(path, mtime_ns) VALUES (?, ?)", (rel, current[rel]))
        self._index_many(changed, report)

    def _drop_month(self, rel: str, report: RefreshReport) -> None:
        for (rowid,) in self.db.execute("SELECT rowid FROM cards WHERE month = ?", (rel,)).fetchall():
            self._delete_card(rowid)
            report.cards_removed += 1

    def _sync_month(self, rel: str, known: dict[str, tuple], report: RefreshReport,
                    todo: list[tuple[str, str, Any]]) -> None:
        seen = set()
        with contextlib.suppress(FileNotFoundError):
            with os.scandir(self.root / rel) as it:
                for entry in it:
                    if not entry.name.endswith(".md") or entry.name.startswith(".") or not entry.is_file():
                        continue
                    path = f"{rel}/{entry.name}"
                    seen.add(path)
                    old = known.get(path)
                    if old is None:  # new to the index: indexing reads and stats it (a build skips 100k stats)
                        todo.append((path, rel, None))
                        continue
                    try:
                        st = entry.stat()
                    except FileNotFoundError:
                        continue
                    if old[1] == st.st_mtime_ns and old[2] == st.st_size:
                        continue
                    todo.append((path, rel, old))
        for path in known.keys() - seen:
            self._delete_card(known[path][0])
            report.cards_removed += 1

    def index_card_file(self, path: str, month: str, report: RefreshReport, old=None) -> None:
        """(Re)index one card file, given its path relative to the vault root."""
        self._apply(path, month, old, _prepare_card(str(self.root), path, self.mode), report)

    def _index_many(self, todo: list[tuple[str, str, Any]], report: RefreshReport) -> None:
        """Index many card files. A bulk build (first search, reindex, a big git pull) reads, parses, tokenises
        and encodes in worker processes while this process only writes SQLite: measured at 100k cards, the
        writer is the critical path (FTS5 inserts), so it does as little Python per card as possible."""
        if len(todo) < BULK:
            for path, month, old in todo:
                self.index_card_file(path, month, report, old)
            return
        import gc
        import multiprocessing

        # A bulk write touches B-tree pages all over the tables and indexes: with SQLite's 2 MB default cache
        # most inserts miss it. 64 MB for the length of this connection only.
        self.db.execute("PRAGMA cache_size = -65536")
        jobs = [(str(self.root), path, self.mode) for path, _m, _o in todo]
        workers = max(1, min(4, (os.cpu_count() or 1)))
        top = self.db.execute("SELECT coalesce(max(rowid), 0) FROM cards").fetchone()[0]
        if top == 0:
            # An empty index (first build, reindex): secondary indexes are cheaper built once at the end.
            for name in _SECONDARY:
                self.db.execute(f"DROP INDEX IF EXISTS {name}")
        # Trigger: a bulk build allocates millions of short-lived objects (rows, results from the workers) while
        # the heap holds few cycles. Why: the cyclic collector then rescans the growing heap again and again
        # (measured: a quarter of the writer's time). Outcome: off for the build, back on after.
        gc_was = gc.isenabled()
        gc.disable()
        cards: list[tuple] = []
        fts: list[tuple] = []
        ents: list[tuple[int, str]] = []
        slugs: dict[str, None] = {}
        sums = [0, 0, 0, 0, 0]
        rowid = top
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                for (path, month, old), prepared in zip(todo, pool.imap(_prepare_star, jobs, chunksize=256)):
                    if old is not None or prepared[0] != "ok" or prepared[3] is None or prepared[4]:
                        self._apply(path, month, old, prepared, report)  # updates, deletions, problems
                        continue
                    _ok, (mtime, size), digest, (fields, texts, names, lens), _problem = prepared
                    rowid += 1
                    cards.append((rowid, path, month, mtime, size, digest, *fields))
                    fts.append((rowid, *texts))
                    for name in names:
                        ents.append((rowid, name))
                        slugs[name] = None
                    sums[0] += 1
                    sums[1] += lens[0]
                    sums[2] += lens[1]
                    sums[3] += lens[2]
                    sums[4] += lens[3]
                    if len(cards) >= 5000:
                        self._write_rows(cards, fts, ents)
                        cards, fts, ents = [], [], []
            self._write_rows(cards, fts, ents)
            report.cards_added += sums[0]
            self._bump(sums[0], sums[1:])
            for e in slugs:
                self._add_keys(e, [e.replace("-", " ")])
        finally:
            if gc_was:
                gc.enable()
            if top == 0:  # execute, not executescript: that would commit the open transaction
                for stmt in _DDL.split(";"):
                    if "CREATE INDEX" in stmt:
                        self.db.execute(stmt)

    def _write_rows(self, cards: list[tuple], fts: list[tuple], ents: list[tuple[int, str]]) -> None:
        self.db.executemany(_INSERT_CARD, cards)
        self.db.executemany("INSERT INTO cfts(rowid, title, entities, body, tags) VALUES (?,?,?,?,?)", fts)
        self.db.executemany("INSERT INTO card_entities(card, entity) VALUES (?, ?)", ents)

    def _apply(self, path: str, month: str, old, prepared: tuple, report: RefreshReport) -> None:
        state = prepared[0]
        if state == "gone":
            if old:
                self._delete_card(old[0])
                report.cards_removed += 1
            return
        _state, st, digest, rec, problem = prepared
        if old and old[3] == digest:
            self.db.execute("UPDATE cards SET mtime_ns = ?, size = ? WHERE rowid = ?", (st[0], st[1], old[0]))
            return
        if problem:
            report.problems.append(problem)
        if old:
            self._delete_card(old[0])
        if rec is None:
            return
        self._insert_card(path, month, st, digest, rec)
        if old:
            report.cards_updated += 1
        else:
            report.cards_added += 1

    def _insert_card(self, path: str, month: str, st: tuple[int, int], digest: str, rec: tuple) -> None:
        fields, texts, names, lens = rec
        rowid = self.db.execute(_INSERT_CARD, (None, path, month, st[0], st[1], digest, *fields)).lastrowid
        self.db.execute("INSERT INTO cfts(rowid, title, entities, body, tags) VALUES (?,?,?,?,?)", (rowid, *texts))
        if names:
            self.db.executemany("INSERT INTO card_entities(card, entity) VALUES (?, ?)", [(rowid, e) for e in names])
        for e in names:
            self._add_keys(e, [e.replace("-", " ")])
        self._bump(1, lens)

    def _add_keys(self, slug: str, names: Iterable[str]) -> None:
        """Names and aliases of an entity as token keys, so a query naming it finds it without a scan."""
        names = list(names)
        seen = self.__dict__.setdefault("_keys_seen", set())
        if (slug, *names) in seen:
            return
        seen.add((slug, *names))
        rows = []
        for name in names:
            toks = tokenize.tokens(str(name), self.mode)
            if toks:
                rows.append((" ".join(dict.fromkeys(toks)), slug, toks[0]))
        self.db.executemany("INSERT OR IGNORE INTO entity_keys(key, slug, first) VALUES (?,?,?)", rows)

    def _delete_card(self, rowid: int) -> None:
        row = self.db.execute("SELECT len_title, len_entities, len_body, len_tags FROM cards WHERE rowid = ?",
                              (rowid,)).fetchone()
        if row is None:
            return
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
            self.set_meta("card_lens", json.dumps(totals[1:]))
            self._totals_dirty = False

    def _totals(self) -> list[int]:
        cached = getattr(self, "_totals_cache", None)
        if cached is not None:
            return cached
        lens = json.loads(self.meta("card_lens", "[0,0,0,0]") or "[0,0,0,0]")
        self._totals_cache = [int(self.meta("n_cards", "0") or 0), *lens]
        return self._totals_cache

    def _refresh_entities(self, report: RefreshReport) -> None:
        folder = self.root / "entities"
        try:
            mtime = os.stat(folder).st_mtime_ns
        except FileNotFoundError:
            mtime = 0
        known = {s: (m, z) for s, m, z in self.db.execute("SELECT slug, mtime_ns, size FROM entities")}
        seen = set()
        if mtime:
            with os.scandir(folder) as it:
                for entry in it:
                    if not entry.name.endswith(".md") or entry.name.startswith(".") or not entry.is_file():
                        continue
                    slug = entry.name[:-3]
                    seen.add(slug)
                    st = entry.stat()
                    if known.get(slug) == (st.st_mtime_ns, st.st_size):
                        continue
                    rel = f"entities/{entry.name}"
                    try:
                        text = Path(entry.path).read_text(encoding="utf-8")
                        data = _parse_entity_fast(text, slug) or _parse_entity(text, rel, slug)
                    except Exception as exc:  # noqa: BLE001 - a damaged page is skipped, never fatal
                        report.problems.append(f"{rel}: {getattr(exc, 'reason', None) or 'cannot be read'}")
                        continue
                    self.db.execute(
                        "INSERT OR REPLACE INTO entities(slug, name, aliases, kind, prose, mtime_ns, size)"
                        " VALUES (?,?,?,?,?,?,?)",
                        (slug, data["name"], json.dumps(data["aliases"], ensure_ascii=False), data["kind"],
                         data["prose"], st.st_mtime_ns, st.st_size))
                    # Cards name an entity by its slug or by its page's name (雾港 lives in wugang.md).
                    for target in dict.fromkeys([slug, str(data["name"])]):
                        self._add_keys(target, [slug, data["name"], *data["aliases"]])
                    report.entities += 1
        for slug in known.keys() - seen:
            self.db.execute("DELETE FROM entities WHERE slug = ?", (slug,))
            report.entities += 1

    def _refresh_episodes(self, report: RefreshReport) -> None:
        base = self.root / "episodes"
        files: dict[str, os.stat_result] = {}
        with contextlib.suppress(FileNotFoundError):
            for year in sorted(os.listdir(base)):
                if not (len(year) == 4 and year.isdigit()):
                    continue
                for month in sorted(os.listdir(base / year)):
                    folder = base / year / month
                    if not (len(month) == 2 and month.isdigit()) or not folder.is_dir():
                        continue
                    for name in os.listdir(folder):
                        if name.endswith(".jsonl") and (st := os.stat(folder / name)).st_mode & 0o170000 == 0o100000:
                            files[f"episodes/{year}/{month}/{name}"] = st  # regular files only
        known = {p: (s, m, c) for p, s, m, c in self.db.execute("SELECT path, size, mtime_ns, clean FROM efiles")}
        for rel in known.keys() - files.keys():
            self._drop_episode_file(rel)
            self.db.execute("DELETE FROM efiles WHERE path = ?", (rel,))
        for rel, st in sorted(files.items()):
            old = known.get(rel)
            if old and old[0] == st.st_size and old[1] == st.st_mtime_ns:
                continue
            # Day files only grow: read from the old end when the file grew after a clean last line.
            start = old[0] if old and st.st_size > old[0] and old[2] else 0
            if not start:
                self._drop_episode_file(rel)
            with open(self.root / rel, "rb") as fh:
                fh.seek(start)
                data = fh.read()
            clean = data.endswith(b"\n") or (not data and bool(start))
            lines = data.split(b"\n")
            if not clean:
                # A torn tail (capture was mid-write): index up to the last full line only.
                tail = lines.pop()
                size = st.st_size - len(tail)
                clean = True
            else:
                size = st.st_size
            for raw in lines:
                if raw.strip():
                    self._index_episode_line(raw, rel, report)
            self.db.execute("INSERT OR REPLACE INTO efiles(path, size, mtime_ns, clean) VALUES (?,?,?,?)",
                            (rel, size, st.st_mtime_ns if size == st.st_size else 0, int(clean)))

    def _index_episode_line(self, raw: bytes, rel: str, report: RefreshReport) -> None:
        try:
            rec = json.loads(raw)
        except ValueError:
            return  # doctor reports bad lines; search indexes the good ones
        if not isinstance(rec, dict):
            return
        if rec.get("type") == "revoke":
            ids = rec.get("ids") or []
            self.db.executemany("INSERT OR IGNORE INTO revoked(id, file) VALUES (?, ?)",
                                [(str(i), rel) for i in ids if isinstance(i, str)])
            return
        if rec.get("type", "episode") != "episode" or not isinstance(rec.get("id"), str):
            return
        if self.db.execute("SELECT 1 FROM episodes WHERE id = ?", (rec["id"],)).fetchone():
            return  # a union merge doubled the line
        user, assistant = str(rec.get("user") or ""), str(rec.get("assistant") or "")
        source = rec.get("source") or {}
        refs = source.get("refs") or ([source.get("ref")] if source.get("ref") else [])
        st = tokenize.EPISODE_STEMMER
        tu, ta = tokenize.tokens(user, self.mode, stemmer=st), tokenize.tokens(assistant, self.mode, stemmer=st)
        cur = self.db.execute(
            "INSERT INTO episodes(id, file, at, project, session, turn, refs, user, assistant, len_user,"
            " len_assistant) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (rec["id"], rel, str(rec.get("at") or ""), str(rec.get("project") or ""),
             str(rec.get("session") or ""), int(rec.get("turn") or 0), json.dumps([str(r) for r in refs]),
             user, assistant, len(tu), len(ta)))
        self.db.execute("INSERT INTO efts(rowid, user, assistant) VALUES (?,?,?)",
                        (cur.lastrowid, " ".join(tu), " ".join(ta)))
        report.episodes_added += 1

    def _drop_episode_file(self, rel: str) -> None:
        rows = self.db.execute("SELECT rowid FROM episodes WHERE file = ?", (rel,)).fetchall()
        self.db.executemany("DELETE FROM efts WHERE rowid = ?", rows)
        self.db.execute("DELETE FROM episodes WHERE file = ?", (rel,))
        self.db.execute("DELETE FROM revoked WHERE file = ?", (rel,))

    # -- freshness of single hits
    def verify_cards(self, rowids: list[int]) -> bool:
        """Stat the files of these hits; re-index any that changed. True when all were current."""
        stale = []
        for rowid, path, month, m, s, h in self.db.execute(
            f"SELECT rowid, path, month, mtime_ns, size, hash FROM cards WHERE rowid IN ({_marks(rowids)})",
            rowids,
        ):
            try:
                st = os.stat(self.root / path)
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
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            self._totals_cache = None
            raise
        return report.changed == 0

    # -- reads used by search
    def card_stats(self) -> tuple[int, dict[str, float]]:
        n, *lens = self._totals()
        return n, {f: (lens[i] / n if n else 0.0) for i, f in enumerate(CARD_FIELDS)}

    def episode_stats(self) -> tuple[int, dict[str, float]]:
        n, su, sa = self.db.execute(
            "SELECT count(*), coalesce(sum(len_user),0), coalesce(sum(len_assistant),0) FROM episodes").fetchone()
        return n, {"user": su / n if n else 0.0, "assistant": sa / n if n else 0.0}

    def doc_freq(self, terms: Iterable[str], episodes: bool = False) -> dict[str, int]:
        terms = list(dict.fromkeys(terms))
        if not terms:
            return {}
        table = "evocab" if episodes else "cvocab"
        out = {}
        for t in terms:  # one indexed lookup per term: fts5vocab only uses the index for term = ?
            row = self.db.execute(f"SELECT doc FROM {table} WHERE term = ?", (t,)).fetchone()
            if row:
                out[t] = int(row[0])
        return out


_SECONDARY = ("cards_id", "cards_month", "cards_created", "ce_entity", "ce_card")
_INSERT_CARD = (
    "INSERT INTO cards(rowid, path, month, mtime_ns, size, hash, id, kind, project, status, created, valid_from,"
    " valid_to, title, body, entities, tags, episodes, supersedes, superseded_by,"
    " len_title, len_entities, len_body, len_tags) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")


def _json_list(items: list[Any]) -> str:
    """json.dumps(list of str) with its default separators; the plain case without json's per-call setup."""
    if not items:
        return "[]"
    if all(type(x) is str and x.isascii() and x.isprintable() and '"' not in x and "\\" not in x for x in items):
        return '["' + '", "'.join(items) + '"]'
    return json.dumps(items, ensure_ascii=False)


def card_record(meta: Mapping[str, Any], mode: str) -> tuple:
    """What the index stores of a parsed card: (cards columns after hash, FTS texts, entity slugs, field lengths).
    Plain tuples of str and int, so that a bulk build's workers hand them over cheaply."""
    ents = meta.get("entities") or []
    fields = (
        tokenize.joined(meta["title"], mode),
        # The entities field also carries the project and a state card's subject/field/value: words a
        # question uses to name what a card is about.
        tokenize.joined(" ".join([*(e.replace("-", " ") for e in ents), *(
            str(meta.get(k) or "").replace("_", " ").replace("-", " ")
            for k in ("project", "subject", "field", "value"))]), mode),
        tokenize.joined(meta.get("body") or "", mode),
        tokenize.joined(" ".join(meta.get("tags") or []), mode),
    )
    lens = [n for _text, n in fields]
    names = list(dict.fromkeys(ents))
    row = (meta["id"], meta["kind"], meta.get("project"), meta.get("status") or "active",
           meta.get("created") or "", meta.get("valid_from"), meta.get("valid_to"), meta["title"],
           meta.get("body") or "", _json_list(list(ents)),
           _json_list(list(meta.get("tags") or [])), _json_list(list(meta.get("episodes") or [])),
           _json_list(list(meta.get("supersedes") or [])), _json_list(list(meta.get("superseded_by") or [])),
           *lens)
    return row, tuple(text for text, _n in fields), names, lens


def _prepare_card(root: str, path: str, mode: str) -> tuple:
    """Read, hash, parse and tokenise one card file: ("ok", (mtime_ns, size), digest, record, problem) or
    ("gone",); record is card_record(...) or None. Runs in worker processes during bulk builds, so it touches
    no database."""
    full_path = os.path.join(root, path)
    try:
        with open(full_path, "rb") as fh:
            raw = fh.read()
            st = os.fstat(fh.fileno())
    except FileNotFoundError:
        return ("gone",)
    import hashlib  # here, not at the top: loading OpenSSL costs ~4 ms of every search start-up

    digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
    problem = None
    rec = None
    try:
        text = raw.decode("utf-8")
        meta = parse_card_fast(text) or _parse_card_slow(text, path)
        rec = card_record(meta, mode)
    except UnicodeDecodeError:
        problem = f"{path}: not valid UTF-8"
    except Exception as exc:  # noqa: BLE001 - VaultFormatError or yaml trouble: skip this card only
        problem = f"{path}: {getattr(exc, 'reason', None) or 'cannot be read as a card'}"
        rec = None
    return ("ok", (st.st_mtime_ns, st.st_size), digest, rec, problem)


def _prepare_star(args: tuple) -> tuple:
    return _prepare_card(*args)


def _marks(items: Iterable[Any]) -> str:
    return ",".join("?" for _ in items) or "NULL"


def fts_match(terms: Iterable[str]) -> str:
    """An FTS5 MATCH expression OR-ing already tokenised terms (letters, digits and CJK only)."""
    return " OR ".join(f'"{t}"' for t in dict.fromkeys(terms) if t and '"' not in t)


# ---------------------------------------------------------------- entities by any name


def resolve_entity(idx: Index, ident: str) -> str | None:
    """Slug of the entity called `ident` (slug, page name, alias, or a name cards use without a page)."""
    row = idx.db.execute("SELECT slug FROM entities WHERE slug = ? OR name = ?", (ident, ident)).fetchone()
    if row:
        return row[0]
    for slug, aliases in idx.db.execute("SELECT slug, aliases FROM entities"):
        if ident.casefold() in (a.casefold() for a in json.loads(aliases)):
            return slug
    row = idx.db.execute("SELECT entity FROM card_entities WHERE entity = ? LIMIT 1", (ident,)).fetchone()
    return row[0] if row else None


def entity_names(idx: Index, ident: str) -> tuple[str, list[str]] | None:
    """(slug, every name cards may use for it: slug and page name), or None when nothing is called `ident`."""
    slug = resolve_entity(idx, ident)
    if slug is None:
        return None
    names = {slug}
    row = idx.db.execute("SELECT name FROM entities WHERE slug = ?", (slug,)).fetchone()
    if row:
        names.add(row[0])
    return slug, sorted(names)
