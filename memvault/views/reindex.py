"""reindex: rebuild every derived file from the truth — the search index (cards, entities, episodes) and,
when the entity-page writer is installed, the generated blocks of entity pages."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from memvault.search.index import Index
from memvault.vault.store import Vault


@dataclass
class ReindexResult:
    cards: int = 0
    entities: int = 0
    episodes: int = 0
    seconds: float = 0.0
    pages: str = "skipped"  # "written" | "skipped (memvault.vault.pages not installed)"
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"cards": self.cards, "entities": self.entities, "episodes": self.episodes,
                "seconds": round(self.seconds, 3), "pages": self.pages, "problems": self.problems}


def reindex(vault: Vault, mode: str | None = None, on_progress: Callable[[str], None] | None = None) -> ReindexResult:
    started = time.perf_counter()
    result = ReindexResult()
    if importlib.util.find_spec("memvault.vault.pages") is not None:
        result.pages = _write_pages(vault, result)
    else:
        result.pages = "skipped (memvault.vault.pages not installed)"
    mode = mode or str(vault.config.section("search").get("chinese", "bigram"))
    with Index(vault.root, mode) as idx:
        idx.clear()
        if on_progress:
            on_progress("indexing cards, entities and episodes")
        report = idx.refresh(episodes=True, full=True)
        result.cards = report.cards_added
        result.entities = idx.entity_count()
        result.episodes = report.episodes_added
        result.problems = report.problems
    result.seconds = time.perf_counter() - started
    return result


def _write_pages(vault: Vault, result: ReindexResult) -> str:
    """Regenerate the mention block of every entity page (memvault.vault.pages, the distill side's writer).

    A card entity that is a page's slug gets that page; one that resolves to another page by name or alias
    (a hand-written card naming 雾港 whose page is wugang.md) is left to that page rather than making a twin.
    """
    from memvault.vault import pages
    from memvault.errors import VaultFormatError
    from memvault.vault.slug import name_key
    from memvault.vault.store import atomic_write

    problems: list[VaultFormatError] = []
    cards = vault.cards(problems)
    table = pages.EntityTable.load(vault, problems)
    result.problems.extend(str(p) for p in problems)
    existing = {p.stem for p in vault.entity_files()}
    slugs = set(existing)
    for card in cards:
        for ent in card.entities:
            owner = table.by_key.get(name_key(ent))
            if owner is None or owner == ent:
                slugs.add(ent)
    written = 0
    by_slug = pages.cards_by_entity(cards)
    for slug in sorted(slugs):
        try:
            path, text = pages.page_update(vault, slug, by_slug.get(slug, []), None)
        except ValueError:  # a slug that would leave the entities folder
            result.problems.append(f"entity {slug!r}: not a safe page name, skipped")
            continue
        if text is not None:
            atomic_write(path, text)
            written += 1
    return f"written ({written} changed)"
