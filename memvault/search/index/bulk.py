"""A bulk build of card rows (first search, reindex, a big git pull): worker processes read, parse and tokenise
batches of card files (prepare.prepare_batch) while this process writes SQLite and the tantivy list.

Measured at 100k cards: the writer is the critical path, and per card the pool's own machinery (a task, a
result, a wake-up of this thread) and the building of each row cost as much of its time as the SQLite inserts.
So the workers get batches of files and, for a batch of plain new cards, send back its rows ready for
executemany (rowids numbered on the guess that every card before the batch was inserted, renumbered here when
that guess was wrong); anything else (an update, a card that is gone or has a problem) comes back card by card
and goes through the one-card path (CardsMixin._apply), in the same order as before.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import threading
from typing import Any

from memvault.search.index import schema
from memvault.search.index.report import RefreshReport


@contextlib.contextmanager
def _closing(stop, slots, n):
    """On the way out of a bulk build (an error included), free a feed that waits for a slot, before the pool
    joins the thread that runs it."""
    try:
        yield
    finally:
        stop.set()
        for _ in range(n):
            slots.release()


# FTS5 keeps new postings in memory up to its hash size, then writes them out as a segment; by default it merges
# segments as they accumulate (automerge 4, crisismerge 16), rewriting each posting once per level. A build from
# nothing uses a bigger hash (fewer, larger segments), no merging while it inserts, and one 'optimize' at the end
# that merges every segment once (measured at 1M cards, FTS5's inserts alone: 34 -> 28 s of CPU, 3.0 -> 2.7 GB
# written; one segment left for the term lookups every search makes). The settings are written in the build's
# transaction (a crash rolls them back) and set back to SQLite's defaults at its end.
BUILD_FTS = (("hashsize", 64 << 20), ("automerge", 0), ("crisismerge", 64))


def _fts_set(db: Any, settings) -> None:
    for name, value in settings:
        with contextlib.suppress(Exception):  # an SQLite without the option: the default
            db.execute("INSERT INTO cfts(cfts, rank) VALUES (?, ?)", (name, value))


class _Feed:
    """Hands a bulk build's rows to tantivy from a thread of its own. add_document waits (without the GIL)
    whenever tantivy's indexing thread is behind: at 1M cards ~13 s of the writer's thread (5.7 s of CPU), which
    it now spends on SQLite. One thread and a FIFO queue: the documents reach tantivy in the same
    order, so the folder is the same."""

    def __init__(self, tv: Any, writer: Any):
        import queue

        self.error: BaseException | None = None
        self.queue: Any = queue.Queue(maxsize=64)  # batches of rows (a worker's batch: 256)
        self.thread = threading.Thread(target=self._run, args=(tv.Document, writer.add_document), daemon=True)
        self.thread.start()

    def _run(self, doc: Any, add: Any) -> None:
        while (rows := self.queue.get()) is not None:
            if self.error is None:
                try:
                    for rowid, text, status, project, kind in rows:
                        add(doc(rowid=rowid, text=text, status=status, project=project, kind=kind))
                except BaseException as exc:  # noqa: BLE001 - raised in the writer's thread (put, close)
                    self.error = exc

    def put(self, rows: list[tuple[int, str, str, str, str]]) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(rows)

    def close(self) -> None:
        """Wait until tantivy has every row (again: nothing); raises what failed in the thread."""
        if self.thread.is_alive():
            self.queue.put(None)
            self.thread.join()
        if self.error is not None:
            raise self.error


def _shifted(rows: list[tuple], by: int) -> list[tuple]:
    return [(r[0] + by, *r[1:]) for r in rows]


def index_bulk(idx: Any, todo: list[tuple[str, str, Any, int | None]], report: RefreshReport, window: int,
               batch: int) -> None:
    """Index the (path, month, old row or None, inode) of `todo` through worker processes; at most `window`
    prepared cards wait for the writer, in tasks of up to `batch` files."""
    from memvault.search.index.prepare import prepare_batch

    db = idx.db
    # A bulk write touches B-tree pages all over the tables and indexes: with SQLite's 2 MB default cache
    # most inserts miss it. 64 MB for the length of this connection only.
    db.execute("PRAGMA cache_size = -65536")
    workers = max(1, min(4, (os.cpu_count() or 1)))
    # Pool.imap reads its whole input at once and keeps every result the writer has not taken yet: at 1M
    # cards the workers outrun the writer and the backlog held most of the build's memory. The feed waits
    # for a free slot, so at most `window` prepared cards are in flight; several tasks must fit in it.
    per_task = max(1, min(batch, window // (2 * workers + 2)))
    batches = [todo[i:i + per_task] for i in range(0, len(todo), per_task)]
    n_slots = max(1, window // per_task)
    slots = threading.Semaphore(n_slots)
    stop = threading.Event()
    root = str(idx.root)

    top = db.execute("SELECT coalesce(max(rowid), 0) FROM cards").fetchone()[0]
    stream = None
    if top == 0:
        # An empty index (first build, reindex): secondary indexes are cheaper built once at the end, and the
        # tantivy list is built from the new rows afterwards rather than queued row by row (lists.py).
        schema.drop_secondary(db)
        _fts_set(db, BUILD_FTS)
        idx._lists_reset()
        stream = idx._lists_stream(len(todo))
    tv_feed = _Feed(stream[0], stream[1]) if stream is not None else None
    docs = stream is not None  # the workers also write each card's tantivy text (lists.doc_text)

    def feed():
        start = top + 1
        for items in batches:
            slots.acquire()
            if stop.is_set():
                return
            # rowid of the batch's first card if every card before it is inserted; None: not all new
            base = start if all(old is None for _p, _m, old, _i in items) else None
            yield (root, [(p, m, i) for p, m, _o, i in items], idx.mode, docs, base)
            start += len(items)

    # Trigger: a bulk build allocates millions of short-lived objects (rows, results from the workers) while
    # the heap holds few cycles. Why: the cyclic collector then rescans the growing heap again and again
    # (measured: a quarter of the writer's time). Outcome: off for the build, back on after.
    gc_was = gc.isenabled()
    gc.disable()
    cards: list[tuple] = []
    fts: list[tuple] = []
    ents: list[tuple[int, str, str, str, str]] = []
    slugs: dict[str, None] = {}
    sums = [0, 0, 0, 0, 0]
    rowid = top
    queue = stream is None  # (not when the bulk build writes these rows to a new tantivy folder itself)
    try:
        # The workers run 5 steps nicer than this process: the writer is the critical path (it waits ~1 s of a
        # 1M build for them), so on two cores it gets the CPU first and they fill the gaps (1M cards, three
        # interleaved pairs on the shared machine: 115 -> 100 s wall on average).
        pool_of = multiprocessing.get_context("fork").Pool
        with pool_of(workers, os.nice, (5,)) as pool, _closing(stop, slots, n_slots):
            for items, got in zip(batches, pool.imap(prepare_batch, feed())):
                slots.release()
                if got[0] == "rows":  # plain new cards, rows made by the worker
                    _tag, rows, frows, erows, drows, names, bsums = got
                    by = rowid + 1 - rows[0][0]
                    if by:  # a card before this batch was skipped or updated: number these past it
                        rows, frows, erows, drows = (_shifted(x, by) for x in (rows, frows, erows, drows))
                    cards += rows
                    fts += frows
                    ents += erows
                    if docs:
                        tv_feed.put(drows)
                    slugs.update(dict.fromkeys(names))
                    for k in range(5):
                        sums[k] += bsums[k]
                    rowid += len(rows)
                else:
                    _tag, results, texts_of = got
                    for (path, month, old, ino), prepared, doc in zip(items, results, texts_of):
                        if old is not None or prepared[0] != "ok" or prepared[3] is None or prepared[4]:
                            # Updates, deletions, problems. An update inserts a row whose rowid SQLite takes past
                            # the highest one written: the new rows held back here must be written first, and the
                            # next ones numbered past it (else a fold of thousands of cards, which updates and adds
                            # cards in one refresh, failed with "UNIQUE constraint failed: cards.rowid").
                            idx._write_rows(cards, fts, ents, queue=queue)
                            cards, fts, ents = [], [], []
                            idx._apply(path, month, old, prepared, report, ino)
                            rowid = max(rowid, db.execute("SELECT coalesce(max(rowid), 0) FROM cards").fetchone()[0])
                            continue
                        _ok, (mtime, size), digest, (fields, texts, names, lens), _problem = prepared
                        rowid += 1
                        cards.append((rowid, path, month, mtime, size, digest, *fields, ino))
                        fts.append((rowid, *texts))
                        if docs:
                            tv_feed.put([(rowid, doc, fields[3] or "", fields[2] or "", fields[1] or "")])
                        ents += schema.card_entity_rows(rowid, fields, names)
                        slugs.update(dict.fromkeys(names))
                        sums[0] += 1
                        for k in range(4):
                            sums[k + 1] += lens[k]
                if len(cards) >= 5000:
                    idx._write_rows(cards, fts, ents, queue=queue)
                    cards, fts, ents = [], [], []
        idx._write_rows(cards, fts, ents, queue=queue)
        if top == 0:  # one merge of the segments left (while tantivy's thread still indexes what it was given)
            db.execute("INSERT INTO cfts(cfts) VALUES ('optimize')")
        if stream is not None:
            tv_feed.close()
            idx._lists_stream_done(stream)
        report.cards_added += sums[0]
        idx._bump(sums[0], sums[1:])
        for e in slugs:
            idx._add_keys(e, [e.replace("-", " ")])
    finally:
        if tv_feed is not None:  # after an error: the feeding thread ends (the error raised is the first one)
            with contextlib.suppress(Exception):
                tv_feed.close()
        if gc_was:
            gc.enable()
        if top == 0:
            _fts_set(db, schema.FTS_DEFAULTS)
            schema.create_secondary(db)
