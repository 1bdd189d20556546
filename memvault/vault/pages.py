"""Entity pages: which page a name belongs to, and the deterministic generated block of each page.

Cards store entity *slugs* (the page's file stem); the page keeps the display name and aliases. A name the
model sends is matched against every page's slug, name and aliases (case- and NFKC-blind) before a new page is
made, so `PostgreSQL` finds the `postgres` page once a person added that alias.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.vault import codec
from memvault.errors import VaultFormatError
from memvault.model import Card, Entity
from memvault.vault.slug import clean_name, name_key, unique_slug
from memvault.vault.synopsis import link_synopses
from memvault.vault.edge import check_inside
from memvault.vault.files import sync_all
from memvault.vault.store import Vault, atomic_write


@dataclass
class EntityTable:
    """name key -> slug for every page (slug, name, aliases), and slug -> key of the name owning it."""

    by_key: dict[str, str] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # slug -> display name

    @classmethod
    def load(cls, vault: Vault, problems: list[VaultFormatError] | None = None) -> "EntityTable":
        pages, slugs = [], []
        for path in vault.entity_files():
            slugs.append(path.stem)
            try:
                ent = vault.read_entity(path)
            except VaultFormatError as exc:
                if problems is not None:
                    problems.append(exc)
                continue
            pages.append((path.stem, ent.name, ent.aliases))
        return cls.from_pages(pages, slugs)

    @classmethod
    def from_pages(cls, pages: Iterable[tuple[str, str, Iterable[str]]], slugs: Iterable[str]) -> "EntityTable":
        """The table from pages already read, (slug, name, aliases) each (the search index holds them). A
        slug of `slugs` with no page record is a damaged page: its file name is never reused."""
        table = cls()
        for slug, name, aliases in pages:
            table.owners[slug] = name_key(name)
            table.names[slug] = name
            for alias in (slug, name, *aliases):
                table.by_key.setdefault(name_key(alias), slug)
        for slug in slugs:
            table.owners.setdefault(slug, name_key(slug))
        return table

    def resolve(self, name: str) -> str:
        """The slug for a name, registering a new page when none matches."""
        key = name_key(name)
        if key in self.by_key:
            return self.by_key[key]
        slug = unique_slug(name, self.owners)
        self.owners[slug] = key
        self.by_key[key] = slug
        self.names[slug] = clean_name(name) or slug
        return slug


def _escape(text: str) -> str:
    # The block is rendered as markdown (Obsidian, GitHub): no raw HTML, no link syntax from the model.
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("[[", "[ [").replace("]]", "] ]").replace("\n", " "))


def _date(card: Card) -> str:
    return (card.valid_from or card.created or "")[:10]


def render_block(slug: str, cards: Iterable[Card]) -> str:
    """The entity's profile: what holds now (its active cards other than events), then its history (events,
    superseded and retracted cards), each newest first (world time, then id), one wikilink line per card."""
    mine = [c for c in cards if slug in c.entities]
    mine.sort(key=lambda c: (_date(c), c.created, c.id), reverse=True)
    now = [c for c in mine if c.status == "active" and c.kind != "event"]
    past = [c for c in mine if not (c.status == "active" and c.kind != "event")]
    lines = []
    for head, group in (("**Now**", now), ("**History**", past)):
        if group:
            lines += [head, ""] + [_line(c) for c in group] + [""]
    return "\n".join(lines).rstrip("\n")


def _line(c: Card) -> str:
    status = "" if c.status == "active" else f" · {c.status}"
    date = f" ({_date(c)})" if _date(c) else ""
    return f"- [[{c.id}]] {c.kind} · {_escape(c.title)}{date}{status}"


def cards_by_entity(cards: Iterable[Card]) -> dict[str, list[Card]]:
    """slug -> the cards naming it; rendering every page from this is linear, not pages x cards."""
    out: dict[str, list[Card]] = {}
    for card in cards:
        for slug in dict.fromkeys(card.entities):
            out.setdefault(slug, []).append(card)
    return out


def page_update(vault: Vault, slug: str, cards: Iterable[Card], new_name: str | None) -> tuple[Path, str | None]:
    """(path, new text) for one entity page, or (path, None) when the bytes would not change.

    A page that exists keeps its front matter and prose; a damaged one is left alone (doctor reports it).
    A page whose cards are all gone keeps an empty block: it may hold a person's front matter.
    """
    path = vault.entity_path(slug)
    block = render_block(slug, cards)
    try:
        old = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        old = None
    except UnicodeDecodeError:
        return path, None
    if old is not None and old.endswith(codec.block_section(block)) and old.count(codec.BLOCK_BEGIN) == 1:
        return path, None  # the generated block is already this one: no YAML to parse, nothing to write
    if old is None:
        if not block:
            return path, None
        ent = Entity(slug=slug, name=new_name or slug)
        return path, codec.entity_to_text(ent, block, vault.rules)
    try:
        ent = codec.parse_entity(old, vault.rel(path), slug)
    except VaultFormatError:
        return path, None
    text = codec.entity_to_text(ent, block, vault.rules)
    return path, (None if text == old else text)


# ---------------------------------------------------------------- writing a change set

INTENT = "write-intent.json"
MANY = 64  # a change set of more cards lists the cards folder once and flushes once (sync_all), not per file


def write_change_set(
    vault: Vault,
    all_cards: Mapping[str, Card],
    working: Mapping[str, Card],
    before: Mapping[str, Card | None],
    names: Mapping[str, str],
    record: dict[str, Any],
    *,
    removed: Iterable[str] = (),
    hook: Callable[[str], None] | None = None,
    drop_empty_pages: bool = False,
) -> dict[str, Card]:
    """Write changed cards, the entity pages they touch, then ONE journal line (the commit point).

    `all_cards` is every card before the change; `working` the new versions; `removed` ids whose files go.
    First `.memvault/write-intent.json` records the before-image of every file about to change, so
    `recover()` can undo a change set that a crash interrupted before its journal line.
    A new synopsis supersedes its project's earlier ones here (memvault.vault.synopsis), whoever writes it; the
    returned mapping holds every card written (`working` plus those links). `drop_empty_pages` (a purge)
    removes the entity pages left without cards that hold nothing a person wrote.
    """
    hook = hook or (lambda _name: None)
    working, before = dict(working), dict(before)
    context = link_synopses(vault, all_cards, working, before, record)
    if context:
        all_cards = {**context, **all_cards}
    merged = dict(all_cards)
    merged.update(working)
    gone = set(removed)
    for cid in gone:
        merged.pop(cid, None)
    files: dict[Path, str | None] = {}
    many = len(working) + len(gone) > MANY
    find = _path_finder(vault) if many else vault.find_card_path
    for cid, card in working.items():
        files[find(cid) or vault.card_path(card)] = codec.card_to_text(card, vault.rules)
    for cid in gone:
        path = find(cid)
        if path is not None:
            files[path] = None
    slugs = sorted({s for c in working.values() for s in c.entities}
                   | {s for c in before.values() if c is not None for s in c.entities}
                   | {s for cid in gone if cid in all_cards for s in all_cards[cid].entities})
    page_paths = []
    by_slug = cards_by_entity(merged.values())
    for slug in slugs:
        path, text = page_update(vault, slug, by_slug.get(slug, []), names.get(slug))
        if drop_empty_pages and not by_slug.get(slug) and _generated_only(vault, path, slug):
            files[path] = None  # a purge: the page's name may be the purged text, and nobody wrote on it
            continue
        if text is not None:
            files[path] = text
            page_paths.append(path)
    for path in files:
        check_inside(vault.root, path)  # a link out of the vault (a month folder, a page): nothing is written
    snapshot = {vault.rel(p): (p.read_text(encoding="utf-8") if p.exists() else None) for p in files}
    key = str(record.get("batch") or record.get("change") or "")
    atomic_write(vault.local / INTENT, json.dumps({"key": key, "files": snapshot}, ensure_ascii=False,
                                                   sort_keys=True))
    pages = set(page_paths)
    for path in sorted(p for p in files if p not in pages):
        if files[path] is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, files[path], durable=not many)
        hook("after-card")
    for path in sorted(page_paths):
        atomic_write(path, files[path], durable=not many)
    if many:
        sync_all()  # one flush for a big change set (a first fold: thousands of cards) before its commit point
    hook("before-journal")
    vault.append_journal([record])
    hook("after-journal")
    (vault.local / INTENT).unlink(missing_ok=True)
    return working


def _generated_only(vault: Vault, path: Path, slug: str) -> bool:
    """Whether the entity page at `path` holds only what memvault made: no aliases, kind, prose or other keys."""
    try:
        ent = codec.parse_entity(path.read_text(encoding="utf-8"), vault.rel(path), slug)
    except (OSError, UnicodeDecodeError, VaultFormatError):
        return False
    return not (ent.aliases or ent.kind or ent.prose.strip() or ent.extra)


def _path_finder(vault: Vault) -> Callable[[str], Path | None]:
    """find_card_path for many ids: one listing of the cards folder instead of one glob per id."""
    paths: dict[str, Path] = {}
    for path in vault.card_files():
        paths.setdefault(path.stem, path)  # sorted: the first, like find_card_path
    return paths.get


def interrupted(vault: Vault) -> tuple[str, list[str]] | None:
    """(key, the vault paths it was writing) of a change set interrupted before its journal line (Ctrl-C, a
    crash), which the next card change rolls back (`recover`); None when there is none. Reads only."""
    try:
        intent = json.loads((vault.local / INTENT).read_text(encoding="utf-8"))
        key = str(intent.get("key") or "")
        files = sorted(str(f) for f in intent.get("files") or {})
    except (OSError, ValueError, AttributeError):
        return None  # none, or torn while being written: before any vault file was touched
    if _committed(vault, key):
        return None
    return key, files


def _committed(vault: Vault, key: str) -> bool:
    return bool(key) and any(r.get("batch") == key or r.get("change") == key
                             for r in vault.journal(problems=[]))


def recover(vault: Vault) -> str | None:
    """Undo a change set interrupted before its journal line. Returns its key, or None if there was none."""
    intent_path = vault.local / INTENT
    try:
        intent = json.loads(intent_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        # Torn while being written, i.e. before any vault file was touched (it is written first).
        intent_path.unlink(missing_ok=True)
        return None
    key = str(intent.get("key") or "")
    committed = _committed(vault, key)
    if not committed:
        root = vault.root.resolve()
        for rel, before in sorted((intent.get("files") or {}).items()):
            path = (vault.root / rel).resolve()
            if root not in path.parents:
                continue  # a tampered intent file never reaches outside the vault
            if before is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, before)
    intent_path.unlink(missing_ok=True)
    return None if committed else key
