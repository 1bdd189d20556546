"""Card and entity front matter, read without yaml: the layout codec.card_to_text writes, in ~10 µs a card.

Anything outside that layout falls back to vault.codec (which imports yaml), imported only then.
Pure functions on text: no SQL, no file access; may import only the standard library and vault.codec (lazily).
"""

from __future__ import annotations

import re
from typing import Any

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_STATUSES = ("active", "superseded", "retracted")


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


# Items of flow lists (entity names, episode ids) repeat from card to card: _plain of each, kept per process
# (bounded); _BAD_ITEM stands for "raises ValueError".
_ITEMS: dict[str, Any] = {}
_BAD_ITEM = object()


def _item(x: str) -> Any:
    got = _ITEMS.get(x, _ITEMS)
    if got is _ITEMS:
        try:
            got = _plain(x)
        except ValueError:
            got = _BAD_ITEM
        if len(_ITEMS) < 200_000:
            _ITEMS[x] = got
    if got is _BAD_ITEM:
        raise ValueError("complex")
    return got


def _flow_list(value: str, plain=_plain) -> list[Any]:
    v = value.strip()
    if not (v.startswith("[") and v.endswith("]")):
        raise ValueError("not a flow list")
    inner = v[1:-1].strip()
    if not inner:
        return []
    if "[" in inner or "]" in inner or "{" in inner or "}" in inner or '"' in inner or "'" in inner:
        raise ValueError("complex list")
    return [plain(x) for x in inner.split(", ")]


_EPISODES = re.compile(r"(?:^|[{,]\s*)episodes: (\[[^\[\]]*\])")


def _source_episodes(value: str) -> list[str]:
    v = value.strip()
    if v in ("{}", "null", ""):
        return []
    if not (v.startswith("{") and v.endswith("}")) or '"' in v or "'" in v:
        raise ValueError("complex source")
    m = _EPISODES.search(v)
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
            return key, tuple(str(x) for x in _flow_list(val, _item) if x is not None)
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
    cid, kind, title = meta.get("id"), meta.get("kind"), meta.get("title")
    if not (cid and kind and title and type(cid) is str and type(kind) is str and type(title) is str):
        return None
    if not _SAFE_ID.match(cid) or (meta.get("status") or "active") not in _STATUSES:
        return None
    meta["body"] = text[end + 5 :].strip("\n")
    return meta


def parse_card_slow(text: str, rel: str) -> dict[str, Any]:
    from memvault.vault import codec  # imports yaml: only for cards a person laid out differently

    card = codec.parse_card(text, rel)
    return {
        "id": card.id, "kind": card.kind, "title": card.title, "project": card.project,
        "entities": list(card.entities), "created": card.created, "valid_from": card.valid_from,
        "valid_to": card.valid_to, "status": card.status, "episodes": list(card.episodes),
        "supersedes": list(card.supersedes), "superseded_by": list(card.superseded_by), "tags": list(card.tags),
        "body": card.body, "subject": card.subject, "field": card.field, "value": card.value,
    }


def parse_entity(text: str, rel: str, slug: str) -> dict[str, Any]:
    from memvault.vault import codec

    ent = codec.parse_entity(text, rel, slug)
    return {"name": ent.name, "aliases": list(ent.aliases), "kind": ent.kind, "prose": ent.prose}


def parse_entity_fast(text: str, slug: str) -> dict[str, Any] | None:
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
