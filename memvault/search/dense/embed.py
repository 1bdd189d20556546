"""Filling the vectors: embed the cards (and with `episodes` the turns) that have none for their current text.

What is embedded: a card's title, body and entity names; an episode's user and assistant text. An item is
keyed by its id, and its row remembers the card file's hash (`src`, so that "what is missing" is one SQL join
against the index) and the hash of the text sent: a card whose file changed but whose text did not (a status
change, a supersede link) keeps its vector without a request. Each space remembers its model and dimension; a
changed model forgets the space's vectors and embeds them again, and says so. Batches are stored as they come
(the matrix rows first, fsynced, then the key rows in one transaction): a process killed midway loses at most
the batch in flight, and the next run embeds only the rest. The caller refreshes the index first.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memvault.errors import EmbedError
from memvault.voices import turn_text
from memvault.search.dense import store
from memvault.search.dense.client import EmbedClient
from memvault.search.dense.settings import EmbedSettings
from memvault.search.index.vectors import FILE as KEYS_FILE

SPACES = ("card", "episode")
COMPACT_MIN = 1000  # compact a space once it has at least this many unused rows (and more unused than live)


class EmbedReport:
    """What one run did, per space. A plain class (no dataclass cost on the search path)."""

    def __init__(self) -> None:
        self.embedded: dict[str, int] = {}
        self.kept: dict[str, int] = {}  # file changed, text did not: vector kept
        self.pruned: dict[str, int] = {}
        self.total: dict[str, int] = {}  # vectors stored after the run
        self.notes: list[str] = []  # e.g. "model changed from a to b: re-embedding 12 cards"
        self.model = ""
        self.dim = 0
        self.seconds = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "dimensions": self.dim, "embedded": self.embedded, "kept": self.kept,
                "pruned": self.pruned, "vectors": self.total, "notes": self.notes, "seconds": round(self.seconds, 3)}


def card_text(title: str, body: str, entities: Sequence[str]) -> str:
    return "\n".join(x for x in (title, body, " ".join(entities)) if x)


def episode_text(user: str, assistant: str, speakers: str | None = None) -> str:
    """A turn as it is embedded: each side after its speakers' names, when the log named them."""
    return turn_text(user, assistant, json.loads(speakers) if speakers else None)


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def attach(idx, report: EmbedReport | None = None, check: bool = False) -> None:
    """Attach the key list and read it once (with `check`, every page: sqlite's quick_check). A
    damaged one (not a database, malformed) raises EmbedError naming it; with `report` (memvault embed) it
    and the matrix files are deleted instead, since they are derived, and the report says every vector is
    embedded again."""
    try:
        idx.attach_vectors()
        idx.vec_space("card")
        if check and not idx.vec_sound():
            raise sqlite3.DatabaseError("quick_check failed")
        return
    except sqlite3.OperationalError:
        raise  # busy (another writer): the caller says so
    except sqlite3.DatabaseError:
        if report is None:
            raise EmbedError(f".memvault/{KEYS_FILE} is damaged: run memvault embed") from None
    try:
        idx.detach_vectors()
    except sqlite3.DatabaseError:
        pass
    for name in (KEYS_FILE, KEYS_FILE + "-wal", KEYS_FILE + "-shm", *store.stray_files(idx.root, "", set())):
        store.drop(idx.root, name)
    idx.attach_vectors()
    report.notes.append(f".memvault/{KEYS_FILE} was damaged: deleted it, embedding everything again")


def missing_count(idx, space: str, model: str) -> int:
    """How many cards (or live episodes) have no vector for their current text. The count is cached, keyed by
    the index's generation (new whenever cards or episodes change), the next free slot and the model, so that
    a search does not join every card with the key list each time."""
    stamp = f"{idx.generation()}:{idx.vec_next_slot(space)}:{model}"
    row = idx.vec_checked(space)
    if row is not None and row[0] == stamp:
        return int(row[1])
    n = idx.vec_missing_card_count() if space == "card" else idx.vec_missing_episode_count()
    try:
        with idx.vec_write():
            idx.vec_set_checked(space, stamp, n)
    except sqlite3.OperationalError:
        pass  # another process holds the write lock (a bulk build): the count is right, only not cached
    return n


def check_model(idx, space: str, settings: EmbedSettings, rebuild: bool, report: EmbedReport,
                verify: bool = False) -> None:
    """Forget the space's vectors when asked to, when they come from another model, when their matrix file
    lost rows (deleted or cut by hand) or, with `verify`, holds rows that are not unit vectors; and say so."""
    meta = idx.vec_space(space)
    name = idx.vec_file(space)
    short = meta is not None and meta[1] and store.row_count(idx.root, name, meta[1]) < idx.vec_next_slot(space)
    bad = (verify and not short and meta is not None and meta[0] == settings.model and meta[1]
           and store.damaged(idx.root, name, meta[1]))
    if meta is not None and meta[0] == settings.model and not rebuild and not short and not bad:
        return
    with idx.vec_write():
        n = idx.vec_reset(space)
        idx.vec_set_space(space, settings.model, 0)
        idx.vec_set_file(space, None)
    store.drop(idx.root, name)
    if meta is not None and meta[0] != settings.model:
        report.notes.append(f"model changed from {meta[0]} to {settings.model}: re-embedding every {space}"
                            f" ({n} stored vectors dropped)")
    elif short:
        report.notes.append(f"{name} is shorter than its key list (deleted or cut): re-embedding every {space}")
    elif bad:
        report.notes.append(f"{name} is damaged (rows that are not unit vectors): re-embedding every {space}")
    elif rebuild and n:
        report.notes.append(f"--rebuild: {n} stored {space} vectors dropped")


def compact(idx, space: str, report: EmbedReport, at_least: int = COMPACT_MIN, force: bool = False) -> None:
    """When unused rows (left by re-embedded items) are at least `at_least` and outnumber the live ones, or
    with `force`: write the live rows to a new matrix file and move the key list to it in one transaction
    (store.py)."""
    meta = idx.vec_space(space)
    if meta is None or not meta[1]:
        return
    live = idx.vec_count(space)
    dead = idx.vec_next_slot(space) - live
    if dead < max(at_least, live, 1) and not force:
        return
    new = f"vectors-{space}-{os.urandom(4).hex()}.f32"
    with idx.vec_write():  # no other writer while the rows move
        old = idx.vec_file(space)
        for stray in store.stray_files(idx.root, space, {old, new}):
            store.drop(idx.root, stray)
        rows = idx.vec_live_slots(space)
        try:
            store.compact_rows(idx.root, old, new, meta[1], [slot for _k, slot in rows])
            idx.vec_relocate(space, [(key, i) for i, (key, _s) in enumerate(rows)])
            idx.vec_set_file(space, new)
        except BaseException:
            store.drop(idx.root, new)
            raise
    store.drop(idx.root, old)
    report.notes.append(f"compacted the {space} vectors: {dead} unused rows dropped")


def erase(idx, keys: Mapping[str, Sequence[str]]) -> list[str]:
    """Forget for good the vectors of these items ({space: keys}; forget --purge): their key rows go (pages
    zeroed), and a space that had one gets a matrix rewritten with its live rows only, so no row of theirs,
    nor of any earlier text of theirs, stays on disk. The names of the files that changed, under .memvault/."""
    idx.attach_vectors()
    changed: list[str] = []
    for space, ids in keys.items():
        with idx.vec_write():
            gone = idx.vec_forget(space, list(ids))
        if gone:
            old = idx.vec_file(space)
            compact(idx, space, EmbedReport(), force=True)
            changed += [KEYS_FILE, old]
    idx.vec_checkpoint()
    return sorted(set(changed))


def embed_missing(idx, settings: EmbedSettings, env: Mapping[str, str], spaces: Sequence[str] = ("card",), *,
                  rebuild: bool = False, limit: int | None = None, client: EmbedClient | None = None,
                  on_progress: Callable[[str, int, int], None] | None = None,
                  compact_at: int | None = COMPACT_MIN) -> EmbedReport:
    """Embed what is missing in `spaces` of the open, fresh index `idx`, then compact a space whose unused rows
    reached `compact_at` (None: never, as a search's inline embedding). Raises EmbedError (what was stored
    before the failure stays stored)."""
    started = time.perf_counter()
    report = EmbedReport()
    report.model = settings.model
    attach(idx, report, check=compact_at is not None)  # not a search's inline embedding: ~0.1 s at 100k cards
    own = client is None
    client = client or EmbedClient(settings, env)
    try:
        for space in spaces:
            check_model(idx, space, settings, rebuild, report, verify=compact_at is not None)
            with idx.vec_write():
                report.pruned[space] = idx.vec_prune(space)
            try:
                _embed_space(idx, client, settings, space, limit, report, on_progress)
            finally:
                with idx.vec_write():
                    idx.vec_set_checked(space, None)  # the cached count of missing vectors is stale now
            if compact_at is not None:
                compact(idx, space, report, compact_at)
            report.total[space] = idx.vec_count(space)
    finally:
        if own:
            client.close()
    meta = idx.vec_space(spaces[0]) if spaces else None
    report.dim = meta[1] if meta else 0
    report.seconds = time.perf_counter() - started
    return report


def _embed_space(idx, client: EmbedClient, settings: EmbedSettings, space: str, limit: int | None,
                 report: EmbedReport, on_progress) -> None:
    if space == "card":
        todo = [(key, src, card_text(t, b or "", json.loads(e or "[]")))
                for key, src, t, b, e in idx.vec_missing_cards(limit)]
    else:
        todo = [(key, "", episode_text(u or "", a or "", sp)) for key, u, a, sp in idx.vec_missing_episodes(limit)]
    hashes = [text_hash(text) for _k, _s, text in todo]
    old = idx.vec_key_texts(space, [k for k, _s, _t in todo])
    keep = [(k, s, h, old[k][1]) for (k, s, _t), h in zip(todo, hashes) if k in old and old[k][0] == h]
    if keep:
        with idx.vec_write():
            idx.vec_put(space, keep)
    report.kept[space] = len(keep)
    kept = {k for k, *_ in keep}
    work = [(k, s, h, t) for (k, s, t), h in zip(todo, hashes) if k not in kept]
    report.embedded[space] = 0
    if not work:
        return
    if on_progress:
        on_progress(space, 0, len(work))

    def save(start: int, vecs: list[list[float]]) -> None:
        batch = work[start:start + len(vecs)]
        dim = len(vecs[0])
        with idx.vec_write():
            meta = idx.vec_space(space)
            if meta is None or meta[0] != settings.model:
                raise EmbedError(f"the {space} vectors changed model while embedding: run memvault embed again")
            if meta[1] and meta[1] != dim:
                raise EmbedError(f"embeddings endpoint {client.shown}: returned {dim}-dimensional vectors, but"
                                 f" the stored {space} vectors have {meta[1]} (model {settings.model}): set"
                                 f" embeddings.dimensions or run memvault embed --rebuild")
            if not meta[1]:
                idx.vec_set_space(space, settings.model, dim)
            slot = idx.vec_next_slot(space)
            store.write_rows(idx.root, idx.vec_file(space), slot, vecs)
            idx.vec_put(space, [(k, s, h, slot + i) for i, (k, s, h, _t) in enumerate(batch)])
        report.embedded[space] += len(batch)
        if on_progress:
            on_progress(space, report.embedded[space], len(work))

    client.embed([t for *_x, t in work], "passage", on_batch=save)
