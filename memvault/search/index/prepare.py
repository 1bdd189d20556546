"""Preparing one card file for the index: read, hash, parse and tokenise it into plain tuples.

Runs in the worker processes of a bulk build, so it touches no database and holds no SQL.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from memvault.search import tokenize
from memvault.search.index.parse import parse_card_fast, parse_card_slow
from memvault.search.index.schema import card_entity_rows


def _json_list(items: list[Any]) -> str:
    """json.dumps(list of str) with its default separators; the plain case without json's per-call setup."""
    if not items:
        return "[]"
    if all(type(x) is str for x in items):
        # every test below looks at one character at a time, so one look at all the items together does
        chars = "".join(items)
        if chars.isascii() and chars.isprintable() and '"' not in chars and "\\" not in chars:
            return '["' + '", "'.join(items) + '"]'
    return json.dumps(items, ensure_ascii=False)


_NONE = ("", 0)  # tokenize.joined of an empty text


def card_record(meta: Mapping[str, Any], mode: str) -> tuple:
    """What the index stores of a parsed card: (cards columns after hash, FTS texts, entity slugs, field lengths).
    Plain tuples of str and int, so that a bulk build's workers hand them over cheaply."""
    ents = meta.get("entities") or []
    tags = meta.get("tags") or []
    # The entities field also carries the project and a state card's subject/field/value: words a
    # question uses to name what a card is about. (Empty values are left out: tokens do not see spaces.)
    about = [e.replace("-", " ") for e in ents]
    for k in ("project", "subject", "field", "value"):
        v = meta.get(k)
        if v:
            about.append(str(v).replace("_", " ").replace("-", " "))
    body = meta.get("body") or ""
    fields = (
        tokenize.joined(meta["title"], mode),
        tokenize.joined(" ".join(about), mode) if about else _NONE,
        tokenize.joined(body, mode) if body else _NONE,
        tokenize.joined(" ".join(tags), mode) if tags else _NONE,
    )
    lens = [n for _text, n in fields]
    names = list(dict.fromkeys(ents))
    row = (meta["id"], meta["kind"], meta.get("project"), meta.get("status") or "active",
           meta.get("created") or "", meta.get("valid_from"), meta.get("valid_to"), meta["title"],
           body, _json_list(list(ents)),
           _json_list(list(tags)), _json_list(list(meta.get("episodes") or [])),
           _json_list(list(meta.get("supersedes") or [])), _json_list(list(meta.get("superseded_by") or [])),
           *lens)
    return row, tuple(text for text, _n in fields), names, lens


# A card is a short memory; a file above this many bytes (a 50 MB paste) is indexed only up to it, and doctor
# reports it. Reading, tokenising and storing it whole made every search take seconds and ~750 MB of memory.
CARD_LIMIT = 1 << 20


def prepare_card(root: str, path: str, mode: str) -> tuple:
    """Read, hash, parse and tokenise one card file: ("ok", (mtime_ns, size), digest, record, problem) or
    ("gone",); record is card_record(...) or None. Runs in worker processes during bulk builds, so it touches
    no database. Only the first CARD_LIMIT bytes of a larger file are read (the digest covers them and the
    size; a change beyond them shows in size or mtime)."""
    full_path = os.path.join(root, path)
    try:
        with open(full_path, "rb") as fh:
            raw = fh.read(CARD_LIMIT + 1)
            st = os.fstat(fh.fileno())
    except FileNotFoundError:
        return ("gone",)
    if len(raw) > CARD_LIMIT:
        raw = _whole_chars(raw[:CARD_LIMIT]) + f"\n\n[cut at {CARD_LIMIT} bytes of {st.st_size}]".encode()
    import hashlib  # here, not at the top: loading OpenSSL costs ~4 ms of every search start-up

    digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
    problem = None
    rec = None
    try:
        text = raw.decode("utf-8")
        meta = parse_card_fast(text) or parse_card_slow(text, path)
        rec = card_record(meta, mode)
    except UnicodeDecodeError:
        problem = f"{path}: not valid UTF-8"
    except Exception as exc:  # noqa: BLE001 - VaultFormatError or yaml trouble: skip this card only
        problem = f"{path}: {getattr(exc, 'reason', None) or 'cannot be read as a card'}"
        rec = None
    return ("ok", (st.st_mtime_ns, st.st_size), digest, rec, problem)


def _whole_chars(raw: bytes) -> bytes:
    """`raw` without a UTF-8 character cut at its end (at most three bytes go)."""
    for cut in range(4):
        try:
            (raw[:len(raw) - cut] if cut else raw).decode("utf-8")
            return raw[:len(raw) - cut] if cut else raw
        except UnicodeDecodeError as exc:
            if exc.start < len(raw) - 4:
                return raw  # invalid earlier on: reported as such
    return raw


def prepare_batch(args: tuple) -> tuple:
    """A bulk build's worker task: prepare_card for a batch of (path, month, inode) (bulk.py).

    `base` (not None when every card of the batch is new) is the rowid of the first card if every card before
    the batch is inserted. When each card of the batch is plain (read, parsed, no problem), the answer is the
    batch's rows, ready for executemany: ("rows", cards rows, cfts rows, card_entities rows, tantivy rows
    (rowid, text, status, project, kind) or [], entity slugs in order of first use, [cards, field length sums]).
    Otherwise ("cards", prepare_card of each, tantivy text of each or None)."""
    root, items, mode, docs, base = args
    tokenize.for_many_texts()
    results = [prepare_card(root, path, mode) for path, _month, _ino in items]
    if docs:
        from memvault.search.index.lists import doc_text
    if base is None or not all(r[0] == "ok" and r[3] is not None and not r[4] for r in results):
        texts_of = [doc_text(r[3][1]) if docs and r[0] == "ok" and r[3] is not None else None for r in results]
        return "cards", results, texts_of
    cards, fts, ents, tv = [], [], [], []
    names_seen: dict[str, None] = {}
    sums = [len(results), 0, 0, 0, 0]
    for rowid, ((path, month, ino), (_ok, (mtime, size), digest, (fields, texts, names, lens), _p)) in enumerate(
            zip(items, results), base):
        cards.append((rowid, path, month, mtime, size, digest, *fields, ino))
        fts.append((rowid, *texts))
        if docs:
            tv.append((rowid, doc_text(texts), fields[3] or "", fields[2] or "", fields[1] or ""))
        ents += card_entity_rows(rowid, fields, names)
        names_seen.update(dict.fromkeys(names))
        sums[1] += lens[0]
        sums[2] += lens[1]
        sums[3] += lens[2]
        sums[4] += lens[3]
    return "rows", cards, fts, ents, tv, list(names_seen), sums
