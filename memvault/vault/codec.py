"""Text <-> records: JSONL lines <-> Episode/Revoke, markdown <-> Card/Entity. No file access.

Parse once, here: anything that does not parse raises VaultFormatError naming the file and line, and never
quotes the offending text (it may hold a secret).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from memvault.errors import VaultFormatError
from memvault.model import CARD_KEYS, CARD_STATUSES, Card, Entity, Episode, Revoke
from memvault.voices import speakers_of  # noqa: F401 - re-exported (the search path imports it from voices)

BLOCK_BEGIN = "<!-- memvault:begin -->"
BLOCK_END = "<!-- memvault:end -->"
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


# ---------------------------------------------------------------- episodes


def dump_json_line(record: dict[str, Any]) -> str:
    """One JSONL line: UTF-8, sorted keys, no spaces, no trailing newline."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def episode_to_line(ep: Episode) -> str:
    record = {
        "v": ep.v, "id": ep.id, "at": ep.at, "project": ep.project, "session": ep.session,
        "turn": ep.turn, "user": ep.user, "assistant": ep.assistant, "tools": ep.tools,
        "source": ep.source, "hash": ep.hash,
    }
    if ep.speakers:  # only when the log named someone: other lines stay as they were
        record["speakers"] = ep.speakers
    return dump_json_line(record)


def revoke_to_line(rv: Revoke) -> str:
    record: dict[str, Any] = {"v": rv.v, "type": "revoke", "ids": list(rv.ids), "reason": rv.reason, "at": rv.at}
    if rv.session:
        record["session"] = rv.session
    return dump_json_line(record)


def parse_record_line(line: str | bytes, path: str, lineno: int) -> Episode | Revoke | dict[str, Any]:
    """Parse one line of an episode day file. Unknown line types come back as plain dicts (forward-compatible)."""
    try:
        raw = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not valid UTF-8 JSON"
        raise VaultFormatError(path, lineno, f"invalid JSON ({reason})") from None
    if not isinstance(raw, dict):
        raise VaultFormatError(path, lineno, "expected a JSON object")
    kind = raw.get("type", "episode")
    if kind == "revoke":
        ids = raw.get("ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise VaultFormatError(path, lineno, "revoke line needs a list of ids")
        return Revoke(ids=tuple(ids), reason=str(raw.get("reason", "")), at=str(raw.get("at", "")),
                      session=raw.get("session"), v=int(raw.get("v", 1)))
    if kind != "episode":
        return raw
    try:
        ep = Episode(
            id=_req_str(raw, "id"), at=_req_str(raw, "at"), project=str(raw.get("project") or ""),
            session=str(raw.get("session") or ""), turn=int(raw.get("turn") or 0),
            user=str(raw.get("user") or ""), assistant=str(raw.get("assistant") or ""),
            tools=int(raw.get("tools") or 0), source=dict(raw.get("source") or {}),
            hash=str(raw.get("hash") or ""), v=int(raw.get("v", 1)), speakers=speakers_of(raw.get("speakers")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise VaultFormatError(path, lineno, f"episode line: {exc}") from None
    if not SAFE_ID.match(ep.id):
        raise VaultFormatError(path, lineno, "episode id has characters outside [A-Za-z0-9._-]")
    return ep


def _req_str(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise KeyError(f"missing {key!r}")
    return value


# ---------------------------------------------------------------- front matter


def dump_front_matter(meta: dict[str, Any]) -> str:
    from memvault.vault import yamltext  # yaml loads only when a card or page is read or written

    return yamltext.dump(meta)


def normalise(value: Any) -> Any:
    """YAML's dates, datetimes and tuples -> the plain strings and lists we keep in records."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    return value


def split_front_matter(text: str, path: str) -> tuple[dict[str, Any], str]:
    """`---\\n<yaml>\\n---\\n<body>` -> (mapping, body). Raises VaultFormatError with a line number."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        raise VaultFormatError(path, 1, "missing front matter (the file must start with '---')")
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].strip() != "---":
        raise VaultFormatError(path, 1, "missing front matter (the file must start with '---')")
    end = re.search(r"^---[ \t]*$", text[first_nl + 1 :], re.M)
    if end is None:
        raise VaultFormatError(path, 1, "front matter is not closed by a '---' line")
    head = text[first_nl + 1 : first_nl + 1 + end.start()]
    body = text[first_nl + 1 + end.end() :]
    if body.startswith("\r\n"):
        body = body[2:]
    elif body.startswith("\n"):
        body = body[1:]
    from memvault.vault import yamltext

    try:
        data = yamltext.load(head) if head.strip() else {}
    except yamltext.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise VaultFormatError(path, line, f"broken YAML front matter: {problem}") from None
    if not isinstance(data, dict):
        raise VaultFormatError(path, 2, "front matter must be a mapping of keys")
    return normalise(data), body


def _str_tuple(value: Any, key: str, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        raise VaultFormatError(path, None, f"{key} must be a list")
    return tuple(str(v) for v in value if v is not None and str(v) != "")


def _opt_str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


# ---------------------------------------------------------------- cards


def parse_card(text: str, path: str) -> Card:
    meta, body = split_front_matter(text, path)
    for key in ("id", "kind", "title"):
        if not isinstance(meta.get(key), (str, int)) or str(meta.get(key)).strip() == "":
            raise VaultFormatError(path, None, f"card needs a non-empty {key!r}")
    card_id = str(meta["id"])
    if not SAFE_ID.match(card_id):
        raise VaultFormatError(path, None, "card id has characters outside [A-Za-z0-9._-]")
    status = str(meta.get("status") or "active")
    if status not in CARD_STATUSES:
        raise VaultFormatError(path, None, f"status must be one of {', '.join(CARD_STATUSES)}")
    source = meta.get("source") or {}
    if not isinstance(source, dict):
        raise VaultFormatError(path, None, "source must be a mapping")
    extra = {k: v for k, v in meta.items() if k not in CARD_KEYS}
    return Card(
        id=card_id, kind=str(meta["kind"]), title=str(meta["title"]), body=body.strip("\n"),
        project=_opt_str(meta.get("project")), entities=_str_tuple(meta.get("entities"), "entities", path),
        created=str(meta.get("created") or ""), valid_from=_opt_str(meta.get("valid_from")),
        valid_to=_opt_str(meta.get("valid_to")), status=status,
        confidence=str(meta.get("confidence") or "user_stated"), subject=_opt_str(meta.get("subject")),
        field=_opt_str(meta.get("field")), value=_opt_str(meta.get("value")), source=source,
        supersedes=_str_tuple(meta.get("supersedes"), "supersedes", path),
        superseded_by=_str_tuple(meta.get("superseded_by"), "superseded_by", path),
        tags=_str_tuple(meta.get("tags"), "tags", path), extra=extra,
    )


def card_to_text(card: Card, rules: Any = None) -> str:
    """Card -> markdown with front matter in the fixed key order; unknown keys follow in their own order.

    Every text field is redacted first (built-in rules, or the vault's `rules` with its deny list): this is
    the one place a card becomes bytes, so no writer can skip it.
    """
    from memvault.vault.scrub import scrub_card

    card = scrub_card(card, rules)
    meta: dict[str, Any] = {
        "id": card.id, "kind": card.kind, "title": card.title, "project": card.project,
        "entities": list(card.entities), "created": card.created, "valid_from": card.valid_from,
        "valid_to": card.valid_to, "status": card.status, "confidence": card.confidence, "subject": card.subject,
    }
    if card.subject is not None or card.field is not None or card.value is not None:
        meta["field"] = card.field
        meta["value"] = card.value
    meta.update(
        source=card.source, supersedes=list(card.supersedes), superseded_by=list(card.superseded_by),
        tags=list(card.tags),
    )
    meta.update((k, v) for k, v in card.extra.items() if k not in meta)
    head = dump_front_matter(meta)
    body = card.body.strip("\n")
    return f"---\n{head}---\n{body}\n" if body else f"---\n{head}---\n"


# ---------------------------------------------------------------- entities


def parse_entity(text: str, path: str, slug: str) -> Entity:
    meta, body = split_front_matter(text, path)
    begin = body.find(BLOCK_BEGIN)
    prose = body[:begin] if begin >= 0 else body
    name = meta.get("name")
    extra = {k: v for k, v in meta.items() if k not in ("name", "aliases", "kind")}
    return Entity(
        slug=slug, name=str(name) if name not in (None, "") else slug,
        aliases=_str_tuple(meta.get("aliases"), "aliases", path), kind=_opt_str(meta.get("kind")),
        prose=prose.rstrip("\n"), extra=extra,
    )


def entity_to_text(entity: Entity, block: str, rules: Any = None) -> str:
    """Entity page: front matter, the person's prose, then the generated block (deterministic). Redacted
    first, like card_to_text."""
    from memvault.vault.scrub import scrub_entity

    entity, block = scrub_entity(entity, block, rules)
    meta: dict[str, Any] = {"name": entity.name, "aliases": list(entity.aliases), "kind": entity.kind}
    meta.update((k, v) for k, v in entity.extra.items() if k not in meta)
    head = dump_front_matter(meta)
    prose = entity.prose.rstrip("\n")
    parts = [f"---\n{head}---\n"]
    if prose:
        parts.append(prose + "\n\n")
    parts.append(block_section(block))
    return "".join(parts)


def block_section(block: str) -> str:
    """The generated block of an entity page as it ends the page, markers included."""
    return f"{BLOCK_BEGIN}\n{block.strip(chr(10))}\n{BLOCK_END}\n" if block.strip() else f"{BLOCK_BEGIN}\n{BLOCK_END}\n"
