"""export / import: a portable JSON bundle of cards and entity pages.

Shape: {"format": "memvault-bundle", "schema": 1, "exported_at": …, "project": …,
        "cards": [{<front-matter fields in the file's order>…, "body": …}],
        "entities": [{"slug", "name", "aliases", "kind", "prose"}]}
sorted by card id and entity slug. Entity pages travel as their prose only: the generated block is derived.

A bundle is untrusted input. Import validates all of it before it writes anything — ids, kinds, statuses,
dates, entity slugs, NUL characters — and refuses the whole bundle on the first kind of trouble, so a hostile
bundle can never write outside the vault or half-import. It never overwrites: a card whose id the vault
already holds is either identical (skipped) or a conflict (the vault's card stays, the conflict is reported).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memvault.vault import codec
from memvault.redact import engine as redact
from memvault.errors import InputError, VaultFormatError
from memvault.model import CARD_STATUSES, Card, Entity
from memvault.vault.pages import recover, render_block, write_change_set
from memvault.vault.slug import clean_name, slugify
from memvault.vault.synopsis import same_but_links
from memvault.vault.edge import check_inside
from memvault.vault.store import Vault, atomic_write

FORMAT = "memvault-bundle"
SCHEMA = 1
LOCK_WHAT = "distill or another card change"  # the lock remember and forget take
_CREATED = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_MAX_PROBLEMS = 8


# ---------------------------------------------------------------- export


@dataclass
class ExportResult:
    bundle: dict[str, Any]
    problems: list[str] = field(default_factory=list)  # "path: reason" of cards/pages left out
    flagged: list[str] = field(default_factory=list)  # ids of cards the redaction rules would change

    def to_text(self) -> str:
        return json.dumps(self.bundle, ensure_ascii=False, indent=1) + "\n"


def export_bundle(vault: Vault, *, now: Callable[[], str], project: str | None = None) -> ExportResult:
    """Every card (of `project`, when given) and the entity pages (those its cards name, when given)."""
    problems: list[str] = []
    flagged: list[str] = []
    rules = redact.compile_rules(list(vault.config.section("redact").get("deny") or []))
    cards: dict[str, dict[str, Any]] = {}
    for path in vault.card_files():
        rel = vault.rel(path)
        try:
            text = path.read_text(encoding="utf-8")
            card = codec.parse_card(text, rel)
            meta, _body = codec.split_front_matter(text, rel)
        except UnicodeDecodeError:
            problems.append(f"{rel}: not valid UTF-8, left out")
            continue
        except VaultFormatError as exc:
            problems.append(f"{exc.message}, left out")
            continue
        if project and card.project != project:
            continue
        if "body" in meta:
            problems.append(f"{rel}: has a front-matter key named 'body', left out")
            continue
        if card.id in cards:
            problems.append(f"{rel}: duplicate id {card.id}, left out (the first file was exported)")
            continue
        # The bundle keeps the file's own front matter (a person's extra keys included), in its order.
        cards[card.id] = {**meta, "body": card.body}
        if redact.redact(f"{card.title}\n{card.body}", rules).findings:
            flagged.append(card.id)
    wanted = {s for c in cards.values() for s in (c.get("entities") or []) if isinstance(s, str)}
    entities = []
    for path in vault.entity_files():
        slug = path.stem
        if project and slug not in wanted:
            continue
        try:
            ent = vault.read_entity(path)
        except VaultFormatError as exc:
            problems.append(f"{exc.message}, left out")
            continue
        entities.append({"slug": slug, "name": ent.name, "aliases": list(ent.aliases), "kind": ent.kind,
                         "prose": ent.prose})
    bundle = {"format": FORMAT, "schema": SCHEMA, "exported_at": now(), "project": project,
              "cards": [cards[k] for k in sorted(cards)], "entities": sorted(entities, key=lambda e: e["slug"])}
    return ExportResult(bundle=bundle, problems=problems, flagged=sorted(flagged))


# ---------------------------------------------------------------- import


@dataclass
class ImportResult:
    imported: list[str] = field(default_factory=list)
    identical: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    entities_created: list[str] = field(default_factory=list)
    entities_merged: list[str] = field(default_factory=list)  # prose taken because the vault's page had none
    entities_kept: list[str] = field(default_factory=list)  # the vault's page has its own prose: left alone
    problems: list[str] = field(default_factory=list)
    dry_run: bool = False
    change: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"imported": len(self.imported), "identical": len(self.identical),
                "conflicts": len(self.conflicts), "dry_run": self.dry_run, "change": self.change,
                "cards": {"imported": self.imported, "identical": self.identical, "conflicts": self.conflicts},
                "entities": {"created": self.entities_created, "merged": self.entities_merged,
                             "kept": self.entities_kept},
                "problems": self.problems}


@dataclass(frozen=True)
class _Parsed:
    cards: tuple[Card, ...]  # sorted by id
    entities: tuple[Entity, ...]
    digest: str


def import_bundle(vault: Vault, data: bytes, *, name: str, now: Callable[[], str],
                  dry_run: bool = False) -> ImportResult:
    """Validate the bundle in `data` (read from `name`), then write the cards the vault does not hold yet.
    Raises InputError (nothing written) for a bundle that is not valid, Busy while a distill runs."""
    parsed = _scrubbed(parse_bundle(data, name, vault.config.kinds), vault.rules)
    if dry_run:
        return _plan(vault, parsed, dry_run=True)[0]
    with vault.exclusive("distill", LOCK_WHAT):
        recover(vault)
        result, all_cards, pages = _plan(vault, parsed, dry_run=False)
        wanted = set(result.imported)
        new = {card.id: card for card in parsed.cards if card.id in wanted}
        if not new and not pages:
            return result
        at = now()
        result.change = "m-" + hashlib.sha256(f"import\x1f{parsed.digest}\x1f{at}".encode()).hexdigest()[:12]
        # Pages first, with blocks listing only the cards already there: a crash before the change set below
        # leaves a consistent vault (and a second import finishes the job). The change set then adds the new
        # cards, their mentions on every page, and the journal line, under the usual write intent.
        for path, text in pages:
            atomic_write(check_inside(vault.root, path), text)
        record = {
            "v": 1, "type": "import", "at": at, "change": result.change, "bundle": parsed.digest,
            "created": sorted(new), "identical": len(result.identical), "conflicts": result.conflicts,
            "entities": {"created": result.entities_created, "merged": result.entities_merged},
        }
        names = {e.slug: e.name for e in parsed.entities}
        write_change_set(vault, all_cards, new, {cid: None for cid in new}, names, record)
        return result


def _scrubbed(parsed: _Parsed, rules) -> _Parsed:
    """The bundle as the vault would store it: redacted before any comparison or write, so a card that
    held a secret is compared (identical / conflict) in the form it has on disk."""
    from memvault.vault.scrub import scrub_card, scrub_entity
    from memvault.vault.slug import slugify

    entities = []
    for ent in parsed.entities:
        clean, _block = scrub_entity(ent, "", rules)
        slug = redact.redact(ent.slug, rules).text
        entities.append(replace(clean, slug=ent.slug if slug == ent.slug else slugify(slug)))
    return replace(parsed, cards=tuple(scrub_card(c, rules) for c in parsed.cards), entities=tuple(entities))


def _plan(vault: Vault, parsed: _Parsed, dry_run: bool):
    result = ImportResult(dry_run=dry_run)
    damaged: list[VaultFormatError] = []
    all_cards = {c.id: c for c in vault.cards(damaged)}
    result.problems.extend(str(p) for p in damaged)
    for card in parsed.cards:
        path = vault.find_card_path(card.id)
        if path is None:
            result.imported.append(card.id)
            continue
        try:
            mine = vault.read_card(path)
        except VaultFormatError:
            mine = None  # a damaged card with that id: still the vault's, never overwritten
        (result.identical if mine is not None and same_but_links(mine, card) else result.conflicts).append(card.id)
    current = list(all_cards.values())
    pages = []
    for ent in parsed.entities:
        path = vault.entity_path(ent.slug)
        if not path.exists():
            result.entities_created.append(ent.slug)
            pages.append((path, codec.entity_to_text(ent, render_block(ent.slug, current), vault.rules)))
            continue
        try:
            mine_ent = vault.read_entity(path)
        except VaultFormatError as exc:
            result.problems.append(f"{exc.message}: page left alone")
            continue
        if mine_ent.prose.strip() or not ent.prose.strip():
            if ent.prose.strip() and mine_ent.prose.strip() != ent.prose.strip():
                result.entities_kept.append(ent.slug)
            continue
        result.entities_merged.append(ent.slug)
        pages.append((path, codec.entity_to_text(replace(mine_ent, prose=ent.prose),
                                                 render_block(ent.slug, current), vault.rules)))
    return result, all_cards, pages


def parse_bundle(data: bytes, name: str, kinds: Sequence[str]) -> _Parsed:
    """Decode and validate a whole bundle. Problems name the position (cards[3].id), never the hostile text."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{name}: not a memvault bundle (not valid UTF-8)") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: not a memvault bundle (invalid JSON at line {exc.lineno}: {exc.msg})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InputError(f"{name}: not a memvault bundle (expected \"format\": \"{FORMAT}\")")
    if raw.get("schema") != SCHEMA or isinstance(raw.get("schema"), bool):
        raise InputError(f"{name}: bundle schema is not {SCHEMA} (made by another version of memvault?)")
    problems: list[str] = []
    cards_raw, ents_raw = raw.get("cards", []), raw.get("entities", [])
    if not isinstance(cards_raw, list):
        problems.append("cards must be a list")
        cards_raw = []
    if not isinstance(ents_raw, list):
        problems.append("entities must be a list")
        ents_raw = []
    if _has_nul(raw):
        problems.append("contains a NUL character")
    cards: dict[str, Card] = _unique(cards_raw, "cards", lambda item, where: _check_card(item, where, kinds, problems),
                                     lambda c: c.id, "id", problems)
    entities: dict[str, Entity] = _unique(ents_raw, "entities", lambda item, where: _check_entity(item, where, problems),
                                          lambda e: e.slug, "slug", problems)
    if problems:
        shown = "; ".join(problems[:_MAX_PROBLEMS])
        more = f"; and {len(problems) - _MAX_PROBLEMS} more" if len(problems) > _MAX_PROBLEMS else ""
        raise InputError(f"{name}: bundle refused, nothing written ({len(problems)} problems): {shown}{more}")
    return _Parsed(cards=tuple(cards[k] for k in sorted(cards)),
                   entities=tuple(entities[k] for k in sorted(entities)),
                   digest="sha256:" + hashlib.sha256(data).hexdigest()[:16])


def _unique(items: list[Any], label: str, check: Callable[[Any, str], Any], key: Callable[[Any], str], key_name: str,
            problems: list[str]) -> dict[str, Any]:
    """The records that pass `check`, by key; a key seen twice is a problem naming the later item."""
    out: dict[str, Any] = {}
    for i, item in enumerate(items):
        record = check(item, f"{label}[{i}]")
        if record is None:
            continue
        if key(record) in out:
            problems.append(f"{label}[{i}].{key_name}: {key(record)} appears twice")
            continue
        out[key(record)] = record
    return out


def _check_card(item: Any, where: str, kinds: Sequence[str], problems: list[str]) -> Card | None:
    if not isinstance(item, dict):
        problems.append(f"{where}: not an object")
        return None
    before = len(problems)
    body = item.get("body", "")
    if not isinstance(body, str):
        problems.append(f"{where}.body: not a string")
    meta = {k: v for k, v in item.items() if k != "body"}
    for key in meta:
        if not _KEY.match(key):
            problems.append(f"{where}: a front-matter key is not a plain name")
            break
    cid = meta.get("id")
    if not isinstance(cid, str) or not codec.SAFE_ID.match(cid):
        problems.append(f"{where}.id: not a safe card id (letters, digits, '.', '_', '-'; no path)")
    kind = meta.get("kind")
    if not isinstance(kind, str) or kind not in kinds:
        problems.append(f"{where}.kind: not one of this vault's kinds ({', '.join(kinds)})")
    if not isinstance(meta.get("title"), str) or not meta["title"].strip():
        problems.append(f"{where}.title: missing")
    status = meta.get("status", "active")
    if status not in CARD_STATUSES:
        problems.append(f"{where}.status: must be one of {', '.join(CARD_STATUSES)}")
    created = meta.get("created")
    if not isinstance(created, str) or not _CREATED.match(created):
        problems.append(f"{where}.created: must look like 2026-11-02T07:40:12Z")
    for key in ("entities",):
        for value in _list(meta.get(key), f"{where}.{key}", problems):
            if not safe_slug(value):
                problems.append(f"{where}.{key}: not a safe entity slug")
                break
    for key in ("supersedes", "superseded_by"):
        for value in _list(meta.get(key), f"{where}.{key}", problems):
            if not codec.SAFE_ID.match(value):
                problems.append(f"{where}.{key}: not a safe card id")
                break
    if meta.get("source") is not None and not isinstance(meta.get("source"), dict):
        problems.append(f"{where}.source: not an object")
    if len(problems) > before:
        return None
    # Through the codec both ways, like a card file: what is written is what `memvault show` will read back.
    text = f"---\n{codec.dump_front_matter(meta)}---\n{body}\n"
    try:
        return codec.parse_card(text, where)
    except VaultFormatError as exc:
        problems.append(exc.message)
        return None
    except Exception:  # noqa: BLE001 - a value YAML cannot carry; named by position only
        problems.append(f"{where}: a value cannot be written as front matter")
        return None


def _check_entity(item: Any, where: str, problems: list[str]) -> Entity | None:
    if not isinstance(item, dict):
        problems.append(f"{where}: not an object")
        return None
    before = len(problems)
    slug = item.get("slug")
    if not safe_slug(slug):
        problems.append(f"{where}.slug: not a safe entity slug (letters, digits, '-', '_'; no '/', '.', NUL)")
    name = item.get("name", slug)
    if not isinstance(name, str) or not clean_name(name):
        problems.append(f"{where}.name: missing")
    aliases = _list(item.get("aliases"), f"{where}.aliases", problems)
    kind = item.get("kind")
    if kind is not None and not isinstance(kind, str):
        problems.append(f"{where}.kind: not a string")
    prose = item.get("prose", "")
    if not isinstance(prose, str):
        problems.append(f"{where}.prose: not a string")
    elif codec.BLOCK_BEGIN in prose or codec.BLOCK_END in prose:
        problems.append(f"{where}.prose: holds a memvault:begin/end marker")
    if len(problems) > before:
        return None
    return Entity(slug=slug, name=clean_name(name), aliases=tuple(clean_name(a) for a in aliases if clean_name(a)),
                  kind=(clean_name(kind) or None) if kind else None, prose=prose.strip("\n"))


def safe_slug(value: Any) -> bool:
    """A slug memvault itself could have made (slug.py's rules): a plain file name inside entities/.

    slugify keeps letters, digits, '_' and single '-', so a slug it leaves unchanged has no '/', '.', NUL or
    newline. The only slugs it extends are device names (con → con-1a2b3c), which are safe once extended.
    """
    if not isinstance(value, str) or not value:
        return False
    made = slugify(value)
    return made == value or ("-" in value and made.startswith(value + "-"))


def _list(value: Any, where: str, problems: list[str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where}: must be a list of strings")
        return []
    return value


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False
