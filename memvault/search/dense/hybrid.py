"""The search-time part of the dense layer: embed the question, find the nearest vectors, fuse.

`fuse_hits` takes the lexical hits of one search (all that passed the floors and status rules, best first)
and returns the hits to show in the fused order, with warnings for stderr. The question is embedded with
query_prefix / input_type; the nearest NEAREST vectors of each space (cards; episodes with --episodes) are
kept when they pass the same filters as lexical hits (--project, --kind, retracted only with --all; live
episodes of the project); every lexical hit that has a vector gets its cosine too; then search.fusion.fuse
orders them with the admit/reject gates of the settings (admit: embeddings.admit, else the cosine measured for the
model, fusion.MEASURED_ADMIT, with that model's "stands out" gate, fusion.MEASURED_STAND; else fusion's z gate). A
hit the dense side found alone becomes a full Hit (title, snippet, path …) whose why is `meaning 0.83`; a hit both
sides found adds `meaning 0.83` to its why.

Never blocks a search: a dead endpoint (refused, timeout, 5xx twice), a missing key or numpy, vectors of
another model: the lexical hits come back unchanged with one warning line. A few cards without a vector
(INLINE or fewer, e.g. one just written by hand) are embedded on the spot; more are left to `memvault embed`
with a warning ("N cards have no vector yet: run memvault embed").
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from memvault.errors import EmbedError
from memvault.search import fusion
from memvault.search.dense import store
from memvault.search.dense.client import EmbedClient
from memvault.search.dense.embed import attach, embed_missing, missing_count
from memvault.search.dense.settings import EmbedSettings
from memvault.search.index import CardFilter, Index
from memvault.search.results import Hit, SearchOptions, pending

NEAREST = 50  # nearest vectors of a space considered per question (before the filters)
INLINE = 8  # a search embeds at most this many cards that have no vector yet
SEARCH_BUSY_MS = 300  # a search waits at most this long for another writer of the vectors (then: words only)
_QUERIES: dict[tuple[str, str, bool, str], list[float]] = {}  # (endpoint, model, input_type, question) -> vector


def key_of(hit: Hit) -> str:
    return ("episode:" if hit.kind == "episode" else "card:") + hit.id


def fuse_hits(idx: Index, query: str, opts: SearchOptions, lexical: list[Hit],
              env: Mapping[str, str]) -> tuple[list[Hit], list[str]]:
    settings: EmbedSettings = opts.embeddings
    warnings: list[str] = []
    spaces = ["card", *(["episode"] if opts.episodes else [])]
    idx.vec_busy_ms = SEARCH_BUSY_MS
    try:
        attach(idx)
        qvec = _query_vector(idx, query, settings, env, spaces, warnings)
        usable = []
        for space in spaces:
            meta = idx.vec_space(space)
            if meta is not None and meta[0] != settings.model:
                warnings.append(f"the stored {space} vectors are for model {meta[0]}, not {settings.model}:"
                                f" run memvault embed")
            elif meta is not None and meta[1]:
                name = idx.vec_file(space)
                if store.row_count(idx.root, name, meta[1]) < idx.vec_next_slot(space):
                    warnings.append(f"{name} is shorter than its key list: run memvault embed")
                usable.append((space, name, meta[1]))
        meaning, extra = _nearest(idx, opts, qvec, usable, lexical)
    except EmbedError as exc:
        return lexical, [*warnings, f"{exc.message}; showing word matches only"]
    except sqlite3.OperationalError:
        # Trigger: another process held the vectors' write lock past the busy timeout. Why: the dense layer
        # must never fail a search. Outcome: words only, said once.
        return lexical, [*warnings, "the vector store is busy (another memvault is writing it); showing word"
                                    " matches only"]
    except sqlite3.DatabaseError:
        # Trigger: a key list damaged past its first pages (attach read those). Outcome: words only, said once.
        return lexical, [*warnings, ".memvault/vectors.sqlite is damaged: run memvault embed; showing word"
                                    " matches only"]
    by_key = {key_of(h): h for h in lexical}
    by_key.update(extra)
    admit = settings.admit if settings.admit is not None else fusion.admit_for(settings.model)
    # The "stands out" gate belongs to the measured admit cosine: a vault that sets embeddings.admit gets that
    # gate alone.
    stand = fusion.stand_for(settings.model) if settings.admit is None else None
    fused = fusion.fuse([(key_of(h), h.score) for h in lexical], meaning, admit=admit, stand=stand,
                        **{k: v for k, v in (("reject", settings.reject),) if v is not None})
    out = []
    for f in fused:
        hit = by_key[f.key]
        why = hit.why if f.meaning is None or not f.lexical else (*hit.why, f"meaning {f.meaning:.2f}")
        out.append(hit._replace(score=f.score, why=why))
    return out, warnings


def _query_vector(idx: Index, query: str, settings: EmbedSettings, env: Mapping[str, str], spaces: list[str],
                  warnings: list[str]) -> list[float]:
    """The question's vector (cached in this process); first embeds a few cards that have none."""
    # Inside a search every request, the few cards embedded inline too, waits `timeout`, not `batch_timeout`.
    with EmbedClient(settings, env, timeout=settings.timeout) as client:
        missing = missing_count(idx, "card", settings.model)
        meta = idx.vec_space("card")
        if 0 < missing <= INLINE and (meta is None or meta[0] == settings.model):
            # Trigger: a few cards without a vector (one just written). Why: cheap, and they are probably what the
            # next question is about. Outcome: embedded now; a failure (endpoint down, no numpy, wrong
            # dimension) would fail the question's vector too, so it ends the dense part (one warning).
            embed_missing(idx, settings, env, ("card",), client=client, compact_at=None)
            missing = 0
        if missing > INLINE:
            warnings.append(f"{missing} cards have no vector yet: run memvault embed")
        if "episode" in spaces and (n := missing_count(idx, "episode", settings.model)):
            warnings.append(f"{n} episodes have no vector yet: run memvault embed --episodes")
        key = (settings.endpoint, settings.model, settings.input_type, settings.query_prefix + query)
        if key not in _QUERIES:
            if len(_QUERIES) > 256:
                _QUERIES.clear()
            _QUERIES[key] = client.embed([query], "query")[0]
        return _QUERIES[key]


def _nearest(idx: Index, opts: SearchOptions, qvec: list[float], usable: list[tuple[str, str, int]],
             lexical: list[Hit]) -> tuple[dict[str, float], dict[str, Hit]]:
    """(key -> cosine for the nearest items that pass the filters and for the lexical hits with a vector,
    key -> Hit for the items only the dense side found)."""
    meaning: dict[str, float] = {}
    extra: dict[str, Hit] = {}
    flt = CardFilter(opts.include_all, opts.project, opts.kind)
    for space, name, dim in usable:
        top, scores = store.nearest(idx.root, name, dim, qvec, NEAREST)
        if scores is None:
            continue
        slot_keys = idx.vec_slot_keys(space, top)
        near = [(slot_keys[s], float(scores[s])) for s in top if s in slot_keys]
        mine = [h for h in lexical if (h.kind == "episode") == (space == "episode")]
        lex_ids = {h.id for h in mine}
        for key, slot in idx.vec_key_slots(space, [h.id for h in mine]).items():
            if slot < scores.shape[0]:
                meaning[f"{space}:{key}"] = float(scores[slot])
        new = {k: c for k, c in near if k not in lex_ids}
        if not new:
            continue
        if space == "card":
            rowids = dict((cid, rowid) for rowid, cid in idx.cards_with_ids(list(new), flt))
            rows = idx.card_rows(list(rowids.values())) if rowids else {}
            for cid, rowid in rowids.items():
                meaning[f"card:{cid}"] = new[cid]
                extra[f"card:{cid}"] = _card_hit(rows[rowid], rowid, new[cid])
        else:
            for row in idx.episodes_by_ids(list(new), opts.project):
                meaning[f"episode:{row[1]}"] = new[row[1]]
                extra[f"episode:{row[1]}"] = _episode_hit(row, new[row[1]])
    return meaning, extra


def _card_hit(row: dict, rowid: int, cos: float) -> Hit:
    why = [f"meaning {cos:.2f}"]
    if row["superseded_by"]:
        why.append("superseded by " + ", ".join(row["superseded_by"]))
    if row["status"] == "retracted":
        why.append("retracted")
    return Hit(id=row["id"], kind=row["kind"], title=row["title"], project=row["project"], status=row["status"],
               score=cos, snippet=pending(row["body"] or row["title"], []), why=tuple(why),
               sources=tuple(row["episodes"]), created=row["created"], path=row["path"], rowid=rowid)


def _episode_hit(row: tuple, cos: float) -> Hit:
    _rowid, ep_id, at, project, session, refs, user, assistant, *_rest = row
    title = " ".join(user.split())[:80] or " ".join(assistant.split())[:80]
    return Hit(id=ep_id, kind="episode", title=title, project=project, status="live", score=cos,
               snippet=pending(f"{user}\n{assistant}", []), why=(f"meaning {cos:.2f}",),
               refs=tuple(json.loads(refs)), created=at, session=session)
