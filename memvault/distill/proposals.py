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
    "subject", "field", "value", "tags", "episodes", "episode", "old", "quote", "user_words", "statement",
}
# Harmless mistakes a small model makes are repaired in code when the caller passes a `repairs` dict (the LLM
# engine does; the offline engine's output is held to the strict schema); the names are run.REPAIR_COUNTS and
# `distill --json` reports them.
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_EP_REF = re.compile(r"^e(\d{1,4})$")
_SPACE = re.compile(r"[ \t\r\f\v]+")
_LINE = re.compile(r"\s+")


class InvalidOutput(ValueError):
    """The model's reply does not follow the schema. The message names the field, never quotes the text;
    `fix` says what a retry must do differently."""

    def __init__(self, message: str, fix: str = ""):
        super().__init__(message)
        self.fix = fix or 'Reply with only the JSON object {"cards": [...]} following the rules.'


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
    old: str | None = None  # the value a change replaces ("moved from X to Y": X); code finds its card
    quote: str | None = None  # the user's words the card rests on, as the model copied them
    statement: bool = False  # a compact card (["e0", kind, statement]): held to its turn by its words
    extracted: bool = False  # the offline engine's card (alone, or a draft a model review kept)


# ---------------------------------------------------------------- validation


def _text(value: Any, where: str, cap: int, *, one_line: bool, required: bool,
          repairs: dict[str, int] | None = None) -> str:
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
        if repairs is None:
            raise InvalidOutput(f"{where} is longer than {cap} characters")
        # Trigger: a value over a limit. Outcome: cut at a word (the prompt states the limits), never a
        # rejected batch: the fact is still right.
        cut = text[: cap - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut[cap // 2:] else cut).rstrip() + "…"
        _count(repairs, "cut_long")
    return text


def _opt_key(value: Any, where: str, repairs: dict[str, int] | None = None) -> str | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    text = _text(value, where, KEY_MAX, one_line=True, required=False, repairs=repairs)
    return text or None


def _str_list(value: Any, where: str, cap_items: int, cap_len: int,
              repairs: dict[str, int] | None = None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) and repairs is not None:
        value = [value]  # "entities": "Rust"
    if not isinstance(value, list):
        raise InvalidOutput(f"{where} must be a list of strings")
    if len(value) > cap_items:
        if repairs is None:
            raise InvalidOutput(f"{where} has more than {cap_items} items")
        value = value[:cap_items]
        _count(repairs, "cut_long")
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InvalidOutput(f"{where}[{i}] must be a string")
        if len(item) > cap_len:
            if repairs is None:
                raise InvalidOutput(f"{where}[{i}] is longer than {cap_len} characters")
            _count(repairs, "cut_long")
            continue  # a long "name" is a sentence, not an entity
        name = clean_name(item, cap_len)
        if name and name not in out:
            out.append(name)
    return tuple(out)


def _count(repairs: dict[str, int] | None, what: str) -> None:
    if repairs is not None:
        repairs[what] = repairs.get(what, 0) + 1


def _episodes(item: dict, where: str, n_episodes: int) -> list[int]:
    refs = item.get("episodes")
    if refs is None and item.get("episode") is not None:
        refs = [item["episode"]]
    episodes: list[int] = []
    if refs is None:
        return episodes
    if not isinstance(refs, list):
        raise InvalidOutput(f"{where}.episodes must be a list like [\"e0\", \"e2\"]",
                            f'Write "episodes": ["e0"] with the turn numbers shown in the turns.')
    for ref in refs:
        m = _EP_REF.match(ref) if isinstance(ref, str) else None
        idx = int(m.group(1)) if m else (ref if isinstance(ref, int) and not isinstance(ref, bool) else -1)
        if not 0 <= idx < n_episodes:
            raise InvalidOutput(f"{where}.episodes must name episodes e0..e{n_episodes - 1}",
                                f"Use only the turn names e0..e{n_episodes - 1} shown in the turns.")
        if idx not in episodes:
            episodes.append(idx)
    return episodes


def _action(item: dict, where: str, n_related: int, repairs: dict[str, int] | None) -> tuple[str, int | None]:
    """The card's action and target, or ("drop", None) for a noop of nothing (only when repairing)."""
    action = item.get("action", "create")
    if action is None:
        action = "create"
    if action not in ACTIONS:
        raise InvalidOutput(f"{where}.action must be one of {', '.join(ACTIONS)}",
                            'Leave out "action" (or use "create").')
    target = item.get("target")
    if isinstance(target, str) and target.isdigit():
        target = int(target)
    valid = isinstance(target, int) and not isinstance(target, bool) and 0 <= target < n_related
    if action in ("update", "supersede", "noop"):
        if valid:
            return action, target
        if repairs is not None:
            # Trigger: an update/supersede/noop of a card that is not among the existing cards. Why: small
            # models pick these actions for a brand-new fact. Outcome: the fact is a create (a noop of nothing
            # says nothing); code then decides merge/supersede like for any new card.
            if action == "noop":
                _count(repairs, "noop_dropped")
                return "drop", None
            _count(repairs, "update_to_create")
            return "create", None
        raise InvalidOutput(f"{where}.target must be the number of an existing card (0..{n_related - 1})"
                            if n_related else f"{where}.action {action} needs an existing card; "
                            "there are none, use create", 'Leave out "action" and "target".')
    if target is not None:
        if repairs is None:
            raise InvalidOutput(f"{where}.target is only allowed with update, supersede or noop",
                                'Leave out "target" on a new card.')
        _count(repairs, "target_dropped")
    return action, None


def validate_output(data: Any, *, n_episodes: int, n_related: int, kinds: Iterable[str],
                    repairs: dict[str, int] | None = None) -> list[Proposal]:
    """Check a parsed reply against the schema of prompts/distill.md. Raises InvalidOutput naming the problem.

    With a `repairs` dict, harmless mistakes are mended instead (REPAIRS) and counted in it."""
    kinds = tuple(kinds)
    if not isinstance(data, dict):
        raise InvalidOutput('the reply must be a JSON object {"cards": [...]}')
    extra = set(data) - {"cards"}
    if extra:
        raise InvalidOutput(f"unexpected top-level key(s) {sorted(extra)[:3]}; only \"cards\" is allowed",
                            'Put every card in one list: {"cards": [...]}, and no other key.')
    items = data.get("cards")
    if not isinstance(items, list):
        raise InvalidOutput('"cards" must be a list', 'Write "cards": [ ... ] (an empty list if nothing).')
    if len(items) > max(4, CARDS_PER_EPISODE * n_episodes):
        if repairs is None:
            raise InvalidOutput(f'"cards" has {len(items)} items, more than {CARDS_PER_EPISODE} per episode',
                                "Keep only what the user stated outright; most turns give no card.")
        items = items[: max(4, CARDS_PER_EPISODE * n_episodes)]
        _count(repairs, "cards_cut")
    out: list[Proposal] = []
    for i, item in enumerate(items):
        where = f"cards[{i}]"
        if isinstance(item, list) and repairs is not None:
            from memvault.distill.compact import from_list

            item = {**from_list(item), "statement": True}  # the compact reply: ["e0", "kind", "statement", ...]
        if not isinstance(item, dict):
            raise InvalidOutput(f"{where} must be an object", 'Each card is an object {"kind": ..., ...}.')
        unknown = set(item) - _CARD_KEYS
        if unknown:
            if repairs is None:
                raise InvalidOutput(f"{where} has unknown key(s) {sorted(unknown)[:3]}")
            _count(repairs, "keys_dropped")
        action, target = _action(item, where, n_related, repairs)
        episodes = _episodes(item, where, n_episodes)
        if action == "drop":
            continue
        if action == "noop":
            out.append(Proposal("noop", "", "", "", (), False, None, "inferred", None, None, None, (),
                                tuple(episodes), target))
            continue
        kind = item.get("kind")
        if repairs is not None and isinstance(kind, str) and kind not in kinds:
            fixed = kind.strip().lower()
            fixed = fixed if fixed in kinds else fixed.removesuffix("s")
            if fixed in kinds:  # "Decision", "preferences"
                kind = fixed
            elif "fact" in kinds:  # a kind the vault does not know ("habit", "plan"): a fact still
                kind = "fact"
            _count(repairs, "kind_fixed")
        if kind not in kinds:
            raise InvalidOutput(f"{where}.kind must be one of {', '.join(kinds)}",
                                f"Use a kind from: {', '.join(kinds)}.")
        subject = _opt_key(item.get("subject"), f"{where}.subject", repairs)
        field = _opt_key(item.get("field"), f"{where}.field", repairs)
        value = _opt_key(item.get("value"), f"{where}.value", repairs)
        old = _opt_key(item.get("old"), f"{where}.old", repairs)
        raw_title = item.get("title")
        if repairs is not None and (raw_title is None or (isinstance(raw_title, str) and not raw_title.strip())) \
                and value:
            raw_title = f"{subject}: {value}" if subject else value  # the facts protocol: no title
        title = _text(raw_title, f"{where}.title", TITLE_MAX, one_line=True, required=True, repairs=repairs)
        body = _text(item.get("body"), f"{where}.body", BODY_MAX, one_line=False, required=False, repairs=repairs)
        said = item.get("user_words") if item.get("quote") is None else item.get("quote")
        quote = _text(said, f"{where}.user_words", BODY_MAX, one_line=True, required=False) or None
        valid_from = item.get("valid_from")
        if valid_from is not None and not (isinstance(valid_from, str) and _DATE.match(valid_from)):
            raise InvalidOutput(f"{where}.valid_from must be YYYY-MM-DD or null", 'Write "valid_from": null.')
        confidence = item.get("confidence", "inferred")
        if confidence not in CONFIDENCES:
            raise InvalidOutput(f"{where}.confidence must be one of {', '.join(CONFIDENCES)}",
                                'Leave out "confidence".')
        project = item.get("project", "")
        if project is not None and not isinstance(project, str):
            raise InvalidOutput(f"{where}.project must be a string or null", 'Leave out "project".')
        if kind == "state" and not (subject and field and value):
            if repairs is not None and subject and value:
                field = "current"  # the offline engine's field: one current value per subject
            elif repairs is not None:
                kind = "fact"  # a change with no subject or value: still a fact, never a rejected batch
                _count(repairs, "kind_fixed")
            else:
                raise InvalidOutput(f"{where}: a state card needs subject, field and value",
                                    'A state card needs "subject" and "value" (and "old"); else use kind fact.')
        out.append(Proposal(
            action=action, kind=kind, title=title, body=body,
            entities=_str_list(item.get("entities"), f"{where}.entities", ENTITIES_MAX, ENTITY_MAX, repairs),
            personal=project is None, valid_from=valid_from, confidence=confidence,
            subject=subject, field=field, value=value,
            tags=_str_list(item.get("tags"), f"{where}.tags", TAGS_MAX, 40),
            episodes=tuple(episodes), target=target, old=old, quote=quote, statement=item.get("statement") is True,
        ))
    return out


def output_schema(kinds: Iterable[str]) -> dict[str, Any]:
    """JSON schema sent in json_schema mode (servers that support it constrain decoding with it): the compact
    protocol of prompts/distill.md, a card being ["e0", "kind", "statement"] and, for a change, subject, new
    value and old value after it (`kinds` is what the prompt teaches; validation repairs another kind)."""
    del kinds  # a plain string list: grammars from prefixItems are not supported by every local server
    card = {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 6}
    return {"type": "object", "additionalProperties": False, "required": ["cards"],
            "properties": {"cards": {"type": "array", "items": card}}}
