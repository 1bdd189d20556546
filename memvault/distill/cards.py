"""Pure card logic: validate model output, make ids, merge near-duplicates, supersede, read the journal.

Imports only the standard library, rapidfuzz (a pure scoring library), memvault.model, memvault.errors and
memvault.vault.slug. Nothing here touches files; distill/remember/forget apply what these functions return.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable

from memvault.model import CONFIDENCES, Card
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


# ---------------------------------------------------------------- ids and time


def card_id(day: str, seed: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """`c-<yyyymmdd>-<hex>` from run-independent data, so a rerun after a crash writes the same ids.

    The hex grows from 6 digits only when another card already holds the id.
    """
    digest = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()
    compact = day[:10].replace("-", "")
    for n in range(6, 65):
        cid = f"c-{compact}-{digest[:n]}"
        if cid not in taken:
            return cid
    raise ValueError("card id space exhausted")  # pragma: no cover - needs a SHA-256 collision


# ---------------------------------------------------------------- near-duplicates

_STOP = set(
    "a an the of in on at to for is are was were be been as and or not no instead only all with by from this "
    "that it its we our us use using".split()
) | set("的了是在和与也就都把被")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9.+#_-]*|[^\sa-z0-9]")


def norm_title(title: str) -> str:
    """NFKC, case-folded, punctuation and symbols dropped, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", title).casefold()
    text = "".join(" " if unicodedata.category(ch)[0] in "PSZC" else ch for ch in text)
    return _LINE.sub(" ", text).strip()


def title_score(a: str, b: str) -> float:
    from rapidfuzz import fuzz

    na, nb = norm_title(a), norm_title(b)
    return max(fuzz.ratio(na, nb), fuzz.token_sort_ratio(na, nb))


def _tokens(title: str) -> set[str]:
    return {w for w in _TOKEN.findall(norm_title(title)) if w not in _STOP}


def _covered(word: str, others: set[str]) -> bool:
    return any(word == o or (len(word) >= 4 and len(o) >= 4 and (word.startswith(o) or o.startswith(word)))
               for o in others)


def is_substitution(a: str, b: str) -> bool:
    """Both titles hold a content word the other lacks: `Use Postgres …` vs `Use SQLite …`, 简洁 vs 详细.

    A near-duplicate only adds or rewords (`plain text` / `plain-text`, `Postgres` / `PostgreSQL`); a swap of
    content words is usually a contradiction, and merging it would hide the change.
    """
    ta, tb = _tokens(a), _tokens(b)
    return any(not _covered(w, tb) for w in ta) and any(not _covered(w, ta) for w in tb)


def is_near_duplicate(a: str, b: str, threshold: float) -> bool:
    return title_score(a, b) >= threshold and not is_substitution(a, b)


def find_duplicate(new: Card, existing: Iterable[Card], threshold: float) -> Card | None:
    """An active card of the same project (never across projects) and kind whose title is a near-duplicate."""
    if new.supersedes or new.kind == "state":
        return None
    best: tuple[float, str, Card] | None = None
    for old in existing:
        if old.status != "active" or old.project != new.project or old.kind != new.kind or old.id == new.id:
            continue
        score = title_score(new.title, old.title)
        if score >= threshold and not is_substitution(new.title, old.title):
            if best is None or (score, old.id) > (best[0], best[1]):
                best = (score, old.id, old)
    return best[2] if best else None


def merge_into(old: Card, new: Card) -> Card:
    """The old card absorbs a near-duplicate: the fuller body wins, sources and entities are unioned."""
    take_new = len(new.body) > len(old.body)
    source = dict(old.source)
    if old.source.get("kind") == "distill" or new.source.get("kind") == "distill":
        eps = list(old.episodes)
        eps += [e for e in new.episodes if e not in eps]
        source["episodes"] = eps
        source.setdefault("kind", new.source.get("kind", "distill"))
    return dataclasses.replace(
        old,
        title=new.title if take_new else old.title,
        body=new.body if take_new else old.body,
        entities=_union(old.entities, new.entities),
        tags=_union(old.tags, new.tags),
        valid_from=min(filter(None, (old.valid_from, new.valid_from)), default=None),
        source=source,
    )


def _union(a: Iterable[str], b: Iterable[str]) -> tuple[str, ...]:
    out = list(a)
    out += [x for x in b if x not in out]
    return tuple(out)


# ---------------------------------------------------------------- supersede


def state_key(card: Card) -> tuple[str, str, str] | None:
    if card.kind != "state" or not card.subject or not card.field:
        return None
    return (card.project or "", norm_title(card.subject), norm_title(card.field))


def same_value(a: Card, b: Card) -> bool:
    return norm_title(a.value or "") == norm_title(b.value or "")


def state_conflicts(new: Card, existing: Iterable[Card]) -> list[Card]:
    """Active state cards with the same project, subject and field (never another subject) as `new`."""
    key = state_key(new)
    if key is None:
        return []
    return [c for c in existing if c.status == "active" and c.id != new.id and state_key(c) == key]


def _day(card: Card) -> str:
    return (card.valid_from or card.created or "")[:10]


def supersede(old: Card, new: Card) -> tuple[Card, Card]:
    """Link `new` as the successor of `old`, or, when `new` holds from an earlier date than `old` (learned late
    but true earlier), make `new` born superseded by `old`. Returns (old', new')."""
    if _day(new) and _day(old) and _day(new) < _day(old):
        born = dataclasses.replace(
            new, status="superseded", valid_to=_day(old), superseded_by=_union(new.superseded_by, (old.id,)),
        )
        return dataclasses.replace(old, supersedes=_union(old.supersedes, (new.id,))), born
    retired = dataclasses.replace(
        old, status="superseded", valid_to=_day(new) or old.valid_to,
        superseded_by=_union(old.superseded_by, (new.id,)),
    )
    return retired, dataclasses.replace(new, supersedes=_union(new.supersedes, (old.id,)))


# ---------------------------------------------------------------- journal


def distilled_ids(journal: Iterable[dict[str, Any]]) -> set[str]:
    """Episode ids consumed by distill batches that were not rolled back since."""
    batches: dict[str, list[str]] = {}
    undone: set[str] = set()
    for rec in journal:
        if rec.get("type") == "distill" and isinstance(rec.get("episodes"), list):
            batches[str(rec.get("batch"))] = [str(e) for e in rec["episodes"]]
        elif rec.get("type") == "rollback" and isinstance(rec.get("batches"), list):
            undone.update(str(b) for b in rec["batches"])
    out: set[str] = set()
    for bid, eps in batches.items():
        if bid not in undone:
            out.update(eps)
    return out


def last_distill(journal: Iterable[dict[str, Any]]) -> str | None:
    times = [str(r.get("at")) for r in journal if r.get("type") == "distill" and r.get("at")]
    return max(times) if times else None


# ---------------------------------------------------------------- rollback after a history edit (DESIGN §4)


def journal_order(journal: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records in the order they happened: by `at`, then by position (files are read in month order and a
    run appends its lines in order; a git union merge may interleave machines, which `at` sorts out)."""
    indexed = list(enumerate(journal))
    indexed.sort(key=lambda t: (str(t[1].get("at") or ""), t[0]))
    return [rec for _i, rec in indexed]


def rolled_back_batches(journal: Iterable[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for rec in journal:
        if rec.get("type") == "rollback" and isinstance(rec.get("batches"), list):
            out.update(str(b) for b in rec["batches"])
    return out


def card_touches(rec: dict[str, Any]) -> set[str]:
    """Ids of the cards a distill / remember / forget line wrote (created, changed, or the card it forgot)."""
    out: set[str] = set()
    for cid in rec.get("created") or []:
        if isinstance(cid, str):
            out.add(cid)
    for key in ("updated", "superseded"):
        for item in rec.get(key) or []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                out.add(item["id"])
    if isinstance(rec.get("card"), str):
        out.add(rec["card"])
    return out


def stale_batches(journal: list[dict[str, Any]], revoked: set[str] | frozenset[str]) -> list[dict[str, Any]]:
    """Live distill lines (no rollback names them) that consumed a revoked episode, newest first, so a
    batch is undone only after every later batch that built on it."""
    undone = rolled_back_batches(journal)
    out = [rec for rec in journal_order(journal)
           if rec.get("type") == "distill" and isinstance(rec.get("episodes"), list)
           and str(rec.get("batch")) not in undone and any(str(e) in revoked for e in rec["episodes"])]
    out.reverse()
    return out


def later_touches(journal: list[dict[str, Any]], rec: dict[str, Any], undone: set[str]) -> set[str]:
    """Cards written after `rec` by lines that still count: distill batches not rolled back, remember and
    forget lines. Rollback lines themselves do not count: they only ever move a card back."""
    ordered = journal_order(journal)
    pos = next(i for i, r in enumerate(ordered) if r is rec)
    out: set[str] = set()
    for r in ordered[pos + 1:]:
        kind = r.get("type")
        if kind == "rollback" or (kind == "distill" and str(r.get("batch")) in undone):
            continue
        out |= card_touches(r)
    return out


def batch_changes(rec: dict[str, Any]) -> tuple[list[str], dict[str, Any]] | None:
    """(created ids, changed id -> before-image) of a distill line, or None when its lists are malformed."""
    created = rec.get("created", [])
    if not isinstance(created, list) or not all(isinstance(c, str) for c in created):
        return None
    changed: dict[str, Any] = {}
    for key in ("updated", "superseded"):
        items = rec.get(key, [])
        if not isinstance(items, list):
            return None
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                return None
            changed.setdefault(item["id"], item.get("before"))
    return list(created), changed


@dataclass
class RollbackPlan:
    """What undoing one batch does. `cards` holds the new version of every card that changes."""

    removed: list[str] = dataclasses.field(default_factory=list)  # created by the batch, touched by no one since
    restored: list[str] = dataclasses.field(default_factory=list)  # back to the batch's before-image
    trimmed: list[str] = dataclasses.field(default_factory=list)  # kept (later work), revoked sources/links cut
    kept: list[str] = dataclasses.field(default_factory=list)  # touched later: the later version stays
    cards: dict[str, Card] = dataclasses.field(default_factory=dict)


def plan_rollback(created: list[str], befores: dict[str, Card], changed: Iterable[str],
                  current: dict[str, Card], later: set[str], revoked: set[str] | frozenset[str]) -> RollbackPlan:
    """Undo one batch. The rule:

    - a card the batch created and no later line touched is removed;
    - a card the batch changed and no later line touched is restored to its before-image;
    - a card a later line touched (merged into, updated, superseded, retracted, purged) keeps the later
      version, minus the revoked episodes in its sources;
    - then every supersede link between the cards above, or to a removed card, must hold on both sides or
      it goes; a card left `superseded` with no successor is active again (valid_to from its before-image).
    `befores` must hold a parsed before-image for every changed id not in `later` (see batch_changes).
    A card missing from `current` that no later line touched (deleted by hand) is not brought back.
    """
    plan = RollbackPlan()
    changed = list(dict.fromkeys(changed))
    touched = set(created) | set(changed)
    new: dict[str, Card] = {}
    for cid in created:
        if cid in changed:
            continue
        if cid in later:
            if cid in current:
                new[cid] = current[cid]
                plan.kept.append(cid)
        elif cid in current:
            plan.removed.append(cid)
    for cid in changed:
        if cid in later:
            if cid in current:
                new[cid] = current[cid]
                plan.kept.append(cid)
        elif cid in current:
            new[cid] = befores[cid]
            plan.restored.append(cid)
    gone = set(plan.removed)
    # Cards outside the batch should never link to one it created alone, but a hand edit may; cut those too.
    for cid, card in current.items():
        if cid not in touched and gone & set(card.supersedes + card.superseded_by):
            new[cid] = card
    snap = dict(new)

    def holds(other: str, back: str, mine: str) -> bool:
        if other in gone:
            return False
        if other not in touched:
            return True  # not ours to judge: a link the batch did not make
        card = snap.get(other)
        return card is not None and mine in getattr(card, back)

    for cid, card in snap.items():
        sup = tuple(x for x in card.supersedes if holds(x, "superseded_by", cid))
        by = tuple(x for x in card.superseded_by if holds(x, "supersedes", cid))
        changes: dict[str, Any] = {}
        if sup != card.supersedes:
            changes["supersedes"] = sup
        if by != card.superseded_by:
            changes["superseded_by"] = by
            if not by and card.status == "superseded":
                prior = befores.get(cid)
                changes["status"] = "active"
                changes["valid_to"] = prior.valid_to if prior is not None and prior.status != "superseded" else None
        eps = [e for e in card.episodes if e not in revoked]
        if len(eps) != len(card.episodes):
            changes["source"] = {**card.source, "episodes": eps}
        if changes:
            new[cid] = dataclasses.replace(card, **changes)
    for cid, card in sorted(new.items()):
        if current.get(cid) != card:
            plan.cards[cid] = card
            if cid not in plan.restored:
                plan.trimmed.append(cid)
    plan.kept = sorted(set(plan.kept))
    plan.removed.sort()
    plan.restored = sorted(c for c in plan.restored if c in plan.cards)
    plan.trimmed.sort()
    return plan
