"""What a model may propose: the reply schema, its validation into Proposals, and the JSON schema sent.

Pure: the standard library, memvault.model and memvault.vault.slug. Messages name the field, never quote
the text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable

from memvault.model import CONFIDENCES
from memvault.vault.slug import clean_name

ACTIONS = ("create", "update", "supersede", "noop")
TITLE_MAX = 160
BODY_MAX = 1500
ENTITY_MAX = 80
ENTITIES_MAX = 10
TAGS_MAX = 8
KEY_MAX = 80  # subject / field / value of a state card
CARDS_PER_EPISODE = 4  # a reply with more cards than this per episode is not a summary any more
_CARD_KEYS = {
    "action", "target", "kind", "title", "body", "entities", "project", "valid_from", "confidence",
    "subject", "field", "value", "tags", "episodes",
}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_EP_REF = re.compile(r"^e(\d{1,4})$")
_SPACE = re.compile(r"[ \t\r\f\v]+")
_LINE = re.compile(r"\s+")


class InvalidOutput(ValueError):
    """The model's reply does not follow the schema. The message names the field, never quotes the text."""


@dataclass(frozen=True)
class Proposal:
    """One card the model proposes, validated and cleaned. `target` is an alias of a related card."""

    action: str
    kind: str
    title: str
    body: str
    entities: tuple[str, ...]
    personal: bool  # project null: cross-project memory about the person
    valid_from: str | None
    confidence: str
    subject: str | None
    field: str | None
    value: str | None
    tags: tuple[str, ...]
    episodes: tuple[int, ...]
    target: int | None = None


# ---------------------------------------------------------------- validation


def _text(value: Any, where: str, cap: int, *, one_line: bool, required: bool) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise InvalidOutput(f"{where} must be a string")
    text = unicodedata.normalize("NFC", value)
    # NUL and other control characters have no place in a card; newlines only in bodies.
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")
    text = _LINE.sub(" ", text).strip() if one_line else "\n".join(
        _SPACE.sub(" ", ln).rstrip() for ln in text.strip().splitlines()
    )
    if required and not text:
        raise InvalidOutput(f"{where} must not be empty")
    if len(text) > cap:
        raise InvalidOutput(f"{where} is longer than {cap} characters")
    return text


def _opt_key(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    text = _text(value, where, KEY_MAX, one_line=True, required=False)
    return text or None


def _str_list(value: Any, where: str, cap_items: int, cap_len: int) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidOutput(f"{where} must be a list of strings")
    if len(value) > cap_items:
        raise InvalidOutput(f"{where} has more than {cap_items} items")
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InvalidOutput(f"{where}[{i}] must be a string")
        if len(item) > cap_len:
            raise InvalidOutput(f"{where}[{i}] is longer than {cap_len} characters")
        name = clean_name(item, cap_len)
        if name and name not in out:
            out.append(name)
    return tuple(out)


def validate_output(data: Any, *, n_episodes: int, n_related: int, kinds: Iterable[str]) -> list[Proposal]:
    """Check a parsed reply against the schema of prompts/distill.md. Raises InvalidOutput naming the problem."""
    kinds = tuple(kinds)
    if not isinstance(data, dict):
        raise InvalidOutput('the reply must be a JSON object {"cards": [...]}')
    extra = set(data) - {"cards"}
    if extra:
        raise InvalidOutput(f"unexpected top-level key(s) {sorted(extra)[:3]}; only \"cards\" is allowed")
    items = data.get("cards")
    if not isinstance(items, list):
        raise InvalidOutput('"cards" must be a list')
    if len(items) > max(4, CARDS_PER_EPISODE * n_episodes):
        raise InvalidOutput(f'"cards" has {len(items)} items, more than {CARDS_PER_EPISODE} per episode')
    out: list[Proposal] = []
    for i, item in enumerate(items):
        where = f"cards[{i}]"
        if not isinstance(item, dict):
            raise InvalidOutput(f"{where} must be an object")
        unknown = set(item) - _CARD_KEYS
        if unknown:
            raise InvalidOutput(f"{where} has unknown key(s) {sorted(unknown)[:3]}")
        action = item.get("action", "create")
        if action not in ACTIONS:
            raise InvalidOutput(f"{where}.action must be one of {', '.join(ACTIONS)}")
        target = item.get("target")
        if action in ("update", "supersede", "noop"):
            if isinstance(target, str) and target.isdigit():
                target = int(target)
            if not isinstance(target, int) or isinstance(target, bool) or not 0 <= target < n_related:
                raise InvalidOutput(f"{where}.target must be the number of an existing card (0..{n_related - 1})"
                                    if n_related else f"{where}.action {action} needs an existing card; "
                                    "there are none, use create")
        elif target is not None:
            raise InvalidOutput(f"{where}.target is only allowed with update, supersede or noop")
        refs = item.get("episodes")
        episodes: list[int] = []
        if refs is not None:
            if not isinstance(refs, list):
                raise InvalidOutput(f"{where}.episodes must be a list like [\"e0\", \"e2\"]")
            for ref in refs:
                m = _EP_REF.match(ref) if isinstance(ref, str) else None
                idx = int(m.group(1)) if m else (ref if isinstance(ref, int) and not isinstance(ref, bool) else -1)
                if not 0 <= idx < n_episodes:
                    raise InvalidOutput(f"{where}.episodes must name episodes e0..e{n_episodes - 1}")
                if idx not in episodes:
                    episodes.append(idx)
        if action == "noop":
            out.append(Proposal("noop", "", "", "", (), False, None, "inferred", None, None, None, (),
                                tuple(episodes), target))
            continue
        kind = item.get("kind")
        if kind not in kinds:
            raise InvalidOutput(f"{where}.kind must be one of {', '.join(kinds)}")
        title = _text(item.get("title"), f"{where}.title", TITLE_MAX, one_line=True, required=True)
        body = _text(item.get("body"), f"{where}.body", BODY_MAX, one_line=False, required=False)
        valid_from = item.get("valid_from")
        if valid_from is not None and not (isinstance(valid_from, str) and _DATE.match(valid_from)):
            raise InvalidOutput(f"{where}.valid_from must be YYYY-MM-DD or null")
        confidence = item.get("confidence", "inferred")
        if confidence not in CONFIDENCES:
            raise InvalidOutput(f"{where}.confidence must be one of {', '.join(CONFIDENCES)}")
        project = item.get("project", "")
        if project is not None and not isinstance(project, str):
            raise InvalidOutput(f"{where}.project must be a string or null")
        subject = _opt_key(item.get("subject"), f"{where}.subject")
        field = _opt_key(item.get("field"), f"{where}.field")
        value = _opt_key(item.get("value"), f"{where}.value")
        if kind == "state" and not (subject and field and value):
            raise InvalidOutput(f"{where}: a state card needs subject, field and value")
        out.append(Proposal(
            action=action, kind=kind, title=title, body=body,
            entities=_str_list(item.get("entities"), f"{where}.entities", ENTITIES_MAX, ENTITY_MAX),
            personal=project is None, valid_from=valid_from, confidence=confidence,
            subject=subject, field=field, value=value,
            tags=_str_list(item.get("tags"), f"{where}.tags", TAGS_MAX, 40),
            episodes=tuple(episodes), target=target,
        ))
    return out


def output_schema(kinds: Iterable[str]) -> dict[str, Any]:
    """JSON schema sent in json_schema mode (servers that support it constrain decoding with it)."""
    nullable = {"type": ["string", "null"]}
    card = {
        "type": "object",
        "additionalProperties": False,
        "required": ["action", "kind", "title", "body", "entities", "valid_from", "confidence", "episodes"],
        "properties": {
            "action": {"enum": list(ACTIONS)},
            "target": {"type": ["integer", "null"]},
            "kind": {"enum": list(kinds)},
            "title": {"type": "string", "maxLength": TITLE_MAX},
            "body": {"type": "string", "maxLength": BODY_MAX},
            "entities": {"type": "array", "items": {"type": "string", "maxLength": ENTITY_MAX},
                         "maxItems": ENTITIES_MAX},
            "project": nullable,
            "valid_from": nullable,
            "confidence": {"enum": list(CONFIDENCES)},
            "subject": nullable, "field": nullable, "value": nullable,
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": TAGS_MAX},
            "episodes": {"type": "array", "items": {"type": "string"}},
        },
    }
    return {"type": "object", "additionalProperties": False, "required": ["cards"],
            "properties": {"cards": {"type": "array", "items": card}}}
