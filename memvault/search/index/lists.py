"""The tantivy candidate list of cards: which cards ranking re-scores, found without scoring every match.

Why: FTS5 computes bm25 for every row that matches (~5 us each); words held by 25k of 100k cards cost 100-300 ms
a search, 1M cards ten times that. tantivy (PyPI `tantivy`, MIT, the optional `fast` extra) keeps its postings
in blocks with each block's best possible score and skips the blocks that cannot reach the top k (block-max
WAND): ~1 ms at 1M cards. It only proposes candidates: the score stage (search/scoring.py) re-scores them with
memvault's BM25F exactly as it re-scores FTS5's, and SQLite stays the truth for everything else (cards,
entities, statistics).
Without tantivy, or with MEMVAULT_SEARCH_ENGINE=fts5, FTS5 answers as before.

Layout: `.memvault/cards-<id>.tantivy/`, one document per card: `rowid` (indexed, fast field), `text` = the
card's tokens as the FTS table holds them, each field repeated by its weight (REPEAT; FTS5 weighs fields the
same way: weighted term counts over the whole card's length), and `status`, `project`, `kind` as single terms
for the filters.

Kept in step with SQLite, across processes and crashes:
- meta `lists` names the folder that mirrors the cards, meta `lists_ready` says it was built completely;
- while `lists` is set, every insert or delete of a card row appends the rowid to `tq` in the same transaction:
  the folder holds every card as it is, except the rowids in tq (pending);
- a search takes tantivy's candidates minus the pending rowids, plus FTS5's over the pending rowids only, so a
  card written a moment ago is found (and a deleted one is not) before tantivy hears of it;
- a refresh that leaves FLUSH or more pending rowids applies them (delete + add each, one commit, then the tq rows
  up to the sequence number it read are deleted: doing it twice is harmless); a refresh that finds no complete
  folder builds one from SQLite (no card file is read again). Both run under `.memvault/lists.lock`, taken
  without waiting: another process already doing it means this one searches with the overlay meanwhile.
A one-card commit costs 40-160 ms (fsync of new segment files), so writes are batched: a command that writes one
card pays nothing, and one that writes many pays one commit.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from typing import Any

from memvault.search.index.reads import CardFilter, _where, fts_all, fts_match, marks

ENGINES = ("auto", "tantivy", "fts5")
LISTS_FROM = 5000  # "auto": tantivy from this many cards (below, FTS5 ranks every match in ~1 ms)
FLUSH = 64  # pending rowids a refresh applies to tantivy
OVERLAY_MAX = 2000  # more pending rowids than this (another process is applying them): FTS5 answers
REBUILD_SHARE = 4  # more pending rowids than cards / this: build a new folder instead of applying them
REPEAT = (4, 3, 1, 2)  # title, entities, body, tags: memvault's field weights 4 / 3 / 1 / 1.5 as repetitions
HEAP = 64_000_000  # tantivy writer memory (bytes)
PREFIX, SUFFIX = "cards-", ".tantivy"

_CARD_DOCS = ("SELECT c.rowid, c.status, c.project, c.kind, f.title, f.entities, f.body, f.tags"
              " FROM cards c JOIN cfts f ON f.rowid = c.rowid")


def engine() -> str:
    """MEMVAULT_SEARCH_ENGINE: auto (tantivy when installed and the vault is big), tantivy (when installed, any
    size), fts5 (never)."""
    name = os.environ.get("MEMVAULT_SEARCH_ENGINE", "auto").strip().lower() or "auto"
    return name if name in ENGINES else "auto"


def load() -> Any:
    """The tantivy module, or None when it is not installed or switched off."""
    if engine() == "fts5":
        return None
    try:
        import tantivy  # the `fast` extra; imported only here
    except ImportError:
        return None
    return tantivy


def _schema(tv: Any) -> Any:
    sb = tv.SchemaBuilder()
    sb.add_integer_field("rowid", indexed=True, fast=True)
    sb.add_text_field("text", tokenizer_name="whitespace", index_option="freq")
    for name in ("status", "project", "kind"):
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
    return sb.build()


def doc_text(texts: Sequence[str]) -> str:
    """A card's one tantivy text: its FTS texts (title, entities, body, tags), each repeated by its weight."""
    return " ".join(t for t, n in zip(texts, REPEAT) for _ in range(n) if t)


def _document(tv: Any, row: Sequence[Any]) -> Any:
    rowid, status, project, kind, *texts = row
    return tv.Document(rowid=rowid, text=doc_text(texts), status=status or "", project=project or "",
                       kind=kind or "")


class ListsMixin:
    """Part of Index (core.py): expects self.db, self.root, meta/set_meta and card_count."""

    _lists_open: Any = None  # (tantivy module, tantivy.Index) of the current folder, or False
    _lists_now: Any = None  # (the _lists_open it was read from, what _lists returned)

    # -- the queue, written in the same transaction as the card rows
    def _queue_cards(self, rowids: Iterable[int]) -> None:
        if not self.meta("lists"):
            return
        if load() is None:
            # Trigger: cards change in a process without tantivy. Why: nobody would apply the queue. Outcome: the
            # folder is given up; a process with tantivy builds a new one.
            self._lists_reset()
            return
        self.db.executemany("INSERT INTO tq(card) VALUES (?)", [(r,) for r in rowids])

    def _lists_reset(self) -> None:
        """Forget the folder (inside a write transaction): the next refresh with tantivy builds a new one."""
        self.set_meta("lists", "")
        self.set_meta("lists_ready", "")
        self.db.execute("DELETE FROM tq")
        self._lists_open = None

    def _lists_dir(self, ident: str):  # in the index's own folder: .memvault/, or a read-only vault's user cache
        return os.path.join(self.local, f"{PREFIX}{ident}{SUFFIX}")

    # -- reads
    def _lists(self) -> Any:
        """(tantivy, schema, searcher, pending rowids) when tantivy answers this search, else None.

        The pending rowids are read before the searcher is opened: a process that applies them meanwhile
        commits tantivy before it empties tq, so each card is either in the searcher or in the overlay. One
        snapshot serves every list read until the folder is opened again (each refresh does that): a search
        reads one consistent pair, not a new searcher per read (~0.5 ms each)."""
        now = self._lists_now
        if now is not None and now[0] is self._lists_open:
            return now[1]
        if self._lists_open is None:
            self._lists_open = False
            # tantivy is imported only when a folder is there to open (a vault under LISTS_FROM cards has none)
            ident = self.meta("lists") if self.local is not None else ""
            if ident and self.meta("lists_ready") == ident and os.path.isdir(self._lists_dir(ident)) and (tv := load()):
                try:
                    self._lists_open = (tv, tv.Index.open(str(self._lists_dir(ident))))
                except Exception:  # noqa: BLE001 - a damaged folder: FTS5 answers (a rebuild mends it)
                    pass
        if not self._lists_open:
            return None
        pending = [r for (r,) in self.db.execute(f"SELECT DISTINCT card FROM tq LIMIT {OVERLAY_MAX + 1}")]
        if len(pending) > OVERLAY_MAX:
            return None
        opened = self._lists_open
        tv, index = opened
        try:
            index.reload()
            lists = tv, index.schema, index.searcher(), set(pending)
        except Exception:  # noqa: BLE001 - the folder went away (a newer build replaced it): FTS5 answers
            self._lists_open = False
            return None
        self._lists_now = (opened, lists)
        return lists

    def count_card_matches(self, terms: Sequence[str]) -> int:
        """How many cards hold any of `terms` (tokens as the index spells them); pending cards counted as tantivy
        last saw them (the count only decides whether to rank the AND of the words first)."""
        lists = self._lists()
        if lists is not None:
            tv, schema, searcher, _pending = lists
            try:
                return searcher.search(_words(tv, schema, terms, every=False), limit=1, count=True).count
            except Exception:  # noqa: BLE001 - tantivy failed on this folder: FTS5 answers, as without it
                pass
        return self.count_matches(fts_match(terms))

    def card_matches_above(self, terms: Sequence[str], threshold: int, dfs: Mapping[str, int] | None = None) -> bool:
        """Whether more than `threshold` cards hold any of `terms` (count_card_matches(terms) > threshold).

        The count lies between the largest document frequency of the terms and their sum (FTS5's vocabulary, one
        indexed lookup per term), which settles the comparison for most queries without counting tens of
        thousands of postings. Tantivy counts the cards pending for it as it last saw them, so its count may differ
        from SQLite's by as many cards as are pending: the bounds widen by that much. Only when they straddle the
        threshold is the count taken. `dfs`: the frequencies the search already read (doc_freq), if it holds
        every term (for a common word, FTS5 reads its whole posting list to count them)."""
        lists = self._lists()
        slack = len(lists[3]) if lists is not None else 0
        if dfs is not None and all(t in dfs for t in terms):
            df = [dfs[t] for t in dict.fromkeys(terms)]
        else:
            df = self.doc_freq(terms).values()
        if max(df, default=0) - slack > threshold:
            return True
        if sum(df) + slack <= threshold:
            return False
        return self.count_card_matches(terms) > threshold

    def card_candidates(self, terms: Sequence[str], every: bool, weights: Sequence[float], flt: CardFilter,
                        limit: int) -> list[int]:
        """Rowids of up to `limit` cards holding any (`every`: all) of `terms` that pass `flt`, best first by
        tantivy's BM25 (or FTS5's bm25, rank_cards); cards changed since tantivy's last commit come after them,
        from FTS5, so the list may be a little longer than `limit`."""
        lists = self._lists()
        match = fts_all(terms) if every else fts_match(terms)
        ranked = None
        if lists is not None:
            tv, schema, searcher, pending = lists
            try:
                query = _filtered(tv, schema, _words(tv, schema, terms, every), flt)
                hits = searcher.search(query, limit=limit + len(pending), count=False).hits
                ranked = [r for r in searcher.fast_field_values("rowid", [a for _s, a in hits]) if r not in pending]
            except Exception:  # noqa: BLE001 - tantivy failed on this folder: FTS5 answers, as without it
                ranked = None
        if ranked is None:
            return [r for (r,) in self.rank_cards(match, weights, flt, limit)]
        # SQLite is the truth: the page is checked against `cards` (a card gone or retracted since is dropped).
        where, args = _where(flt)
        live = {r for (r,) in self.db.execute(
            f"SELECT c.rowid FROM cards c WHERE c.rowid IN ({marks(ranked)}){where}", (*ranked, *args))}
        out = [r for r in ranked if r in live][:limit]
        if pending:
            out += [r for (r,) in self.db.execute(
                f"SELECT c.rowid FROM cfts JOIN cards c ON c.rowid = cfts.rowid WHERE cfts MATCH ?"
                f" AND cfts.rowid IN ({marks(pending)}){where}", (match, *sorted(pending), *args))]
        return out

    # -- keeping the folder in step (after the refresh transaction, outside it)
    def sync_lists(self, force: bool = False) -> str:
        """Build the folder when there is none, or apply the pending rowids when FLUSH or more wait (`force`:
        any). Returns what it did: "" (nothing), "built", "applied", "busy" (another process holds the lock)."""
        if engine() == "fts5" or self.db.in_transaction or self.local is None:  # no folder for an in-memory index
            return ""
        ident, ready = self.meta("lists") or "", self.meta("lists_ready") or ""
        whole = not ident or ident != ready or not os.path.isdir(self._lists_dir(ident))
        if whole:
            if (engine() == "auto" and self.card_count() < LISTS_FROM) or (self.meta("lists_failed") and not force):
                return ""
        else:
            (waiting,) = self.db.execute("SELECT count(*) FROM tq").fetchone()
            if waiting < (1 if force else FLUSH):
                return ""
            whole = waiting > max(OVERLAY_MAX, self.card_count() // REBUILD_SHARE)
        tv = load()
        if tv is None:
            return ""
        from memvault.vault.files import flock

        try:
            with flock(os.path.join(self.local, "lists.lock"), blocking=False):
                done = self._build_lists(tv) if whole else self._apply_lists(tv, ident)
        except BlockingIOError:
            return "busy"
        except Exception:  # noqa: BLE001 - tantivy failed (disk full, damaged folder): FTS5 answers meanwhile
            self._write(lambda: (self._lists_reset(), self.set_meta("lists_failed", "1")))
            return "failed"
        self._lists_open = None
        return done

    def _write(self, fn) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            fn()
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def _build_lists(self, tv: Any) -> str:
        ident = os.urandom(6).hex()
        # From here on every card change is queued for the new folder: nothing written while it is built is lost.
        self._write(lambda: (self._lists_reset(), self.set_meta("lists", ident)))
        path = self._lists_dir(ident)
        os.makedirs(path, exist_ok=True)
        index = tv.Index(_schema(tv), path=path, reuse=False)
        writer = index.writer(HEAP, 1)
        self.db.execute("BEGIN")  # one snapshot: the rows and the queue's high-water mark agree
        try:
            (top,) = self.db.execute("SELECT coalesce(max(seq), 0) FROM tq").fetchone()
            for row in self.db.execute(_CARD_DOCS):
                writer.add_document(_document(tv, row))
        finally:
            self.db.execute("COMMIT")
        writer.commit()
        writer.wait_merging_threads()

        def done() -> None:
            if self.meta("lists") == ident:
                self.set_meta("lists_ready", ident)
                self.db.execute("DELETE FROM tq WHERE seq <= ?", (top,))
                self.db.execute("DELETE FROM meta WHERE k = 'lists_failed'")

        self._write(done)
        self._drop_other_lists(ident)
        return "built"

    def _apply_lists(self, tv: Any, ident: str) -> str:
        self.db.execute("BEGIN")
        try:
            (top,) = self.db.execute("SELECT coalesce(max(seq), 0) FROM tq").fetchone()
            rowids = [r for (r,) in self.db.execute("SELECT DISTINCT card FROM tq WHERE seq <= ?", (top,))]
            rows = self.db.execute(f"{_CARD_DOCS} WHERE c.rowid IN ({marks(rowids)})", rowids).fetchall()
        finally:
            self.db.execute("COMMIT")
        index = tv.Index.open(str(self._lists_dir(ident)))
        writer = index.writer(HEAP, 1)
        for r in rowids:
            writer.delete_documents_by_term("rowid", r)
        for row in rows:
            writer.add_document(_document(tv, row))
        writer.commit()
        writer.wait_merging_threads()
        self._write(lambda: self.db.execute("DELETE FROM tq WHERE seq <= ?", (top,)))
        return "applied"

    # -- built alongside a bulk build of an empty index (cards.py), inside its transaction
    def _lists_stream(self, n_cards: int) -> Any:
        """(tantivy, writer, id) of a new folder that a bulk build of `n_cards` cards fills as it writes the rows
        (tantivy indexes in its own thread meanwhile), or None when tantivy is not used for such a vault. The
        id is recorded at once, so cards the build writes another way (_apply) are queued for it."""
        if self.local is None or (engine() == "auto" and n_cards < LISTS_FROM) or (tv := load()) is None:
            return None
        ident = os.urandom(6).hex()
        path = self._lists_dir(ident)
        os.makedirs(path, exist_ok=True)
        writer = tv.Index(_schema(tv), path=path, reuse=False).writer(HEAP, 1)
        self.set_meta("lists", ident)
        return tv, writer, ident

    def _lists_stream_done(self, stream: Any) -> None:
        """Commit the folder and mark it complete (still inside the build's transaction: if that rolls back, the
        folder is an orphan that the next build deletes)."""
        _tv, writer, ident = stream
        writer.commit()
        writer.wait_merging_threads()
        self.set_meta("lists_ready", ident)
        self._lists_open = None
        self._lists_streamed = True

    def _drop_other_lists(self, *keep: str) -> None:
        """Delete the folders of earlier builds (derived data; a search still reading one keeps its open files)."""
        from memvault.vault.files import remove_tree

        try:
            for entry in os.scandir(self.local):
                if (entry.name.startswith(PREFIX) and entry.name.endswith(SUFFIX)
                        and entry.name[len(PREFIX):-len(SUFFIX)] not in keep):
                    remove_tree(entry.path)
        except FileNotFoundError:
            pass


def _words(tv: Any, schema: Any, terms: Sequence[str], every: bool) -> Any:
    occur = tv.Occur.Must if every else tv.Occur.Should
    return tv.Query.boolean_query([(occur, tv.Query.term_query(schema, "text", t, index_option="freq"))
                                   for t in dict.fromkeys(terms)])


def _filtered(tv: Any, schema: Any, words: Any, flt: CardFilter) -> Any:
    """The word query under the search's filters; a filter term adds nothing to the score."""
    if flt.include_all and not flt.project and not flt.kind:
        return words
    clauses = [(tv.Occur.Must, words)]
    if not flt.include_all:
        clauses.append((tv.Occur.MustNot, tv.Query.term_query(schema, "status", "retracted", index_option="basic")))
    for field, value in (("project", flt.project), ("kind", flt.kind)):
        if value:
            term = tv.Query.term_query(schema, field, value, index_option="basic")
            clauses.append((tv.Occur.Must, tv.Query.const_score_query(term, 0.0)))
    return tv.Query.boolean_query(clauses)
