"""reindex: rebuild every derived file from the truth — the search index (cards, entities, episodes), then the
generated blocks of entity pages, rendered from what the index read (no second parse of every card)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from memvault.model import Card
from memvault.search.index import Index
from memvault.vault import pages
from memvault.vault.edge import OUTSIDE, outside
from memvault.vault.files import atomic_write, sync_all
from memvault.vault.tempfiles import settle_if_free
from memvault.vault.slug import name_key
from memvault.vault.store import Vault


@dataclass
class ReindexResult:
    cards: int = 0
    entities: int = 0
    episodes: int = 0
    seconds: float = 0.0
    pages: str = "skipped"  # "written (N changed)"
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"cards": self.cards, "entities": self.entities, "episodes": self.episodes,
                "seconds": round(self.seconds, 3), "pages": self.pages, "problems": self.problems}


def reindex(vault: Vault, mode: str | None = None, on_progress: Callable[[str], None] | None = None) -> ReindexResult:
    started = time.perf_counter()
    result = ReindexResult()
    mode = mode or str(vault.config.section("search").get("chinese", "bigram"))
    if vault.cache == vault.local:  # a vault this user can write: finish what a stopped writer left first
        settle_if_free(vault)
    with Index(vault.root, mode) as idx:
        if on_progress:
            on_progress("indexing cards, entities and episodes")
        # Searches meanwhile read the index as it was (a big vault's is built in a new file, fresh.py).
        report = idx.refresh(episodes=True, full=True, rebuild=True)
        result.cards = report.cards_added
        result.episodes = report.episodes_added
        result.problems = report.problems
        if on_progress:
            on_progress("writing entity pages")
        written = _write_pages(vault, idx, result)
        result.pages = f"written ({written} changed)"
        if written:
            idx.refresh()  # the pages just written: their names and aliases into the index
        result.entities = idx.entity_count()
    result.seconds = time.perf_counter() - started
    return result


def _write_pages(vault: Vault, idx: Index, result: ReindexResult) -> int:
    """Regenerate the mention block of every entity page from the index's card records.

    A card entity that is a page's slug gets that page; one that resolves to another page by name or alias
    (a hand-written card naming 雾港 whose page is wugang.md) is left to that page rather than making a twin.
    New pages are written without one fsync each and flushed together at the end: a vault of 5,000 entities
    would otherwise spend most of its reindex in fsync. Pages that exist (they may hold a person's prose) are
    written durably one by one.
    """
    existing = {p.stem for p in vault.entity_files()}
    table = pages.EntityTable.from_pages(idx.entity_pages(), existing)
    done: set[str] = set()
    written = fresh = 0

    def update(slug: str, cards: list[Card]) -> None:
        nonlocal written, fresh
        try:
            path, text = pages.page_update(vault, slug, cards, None)
        except ValueError:  # a slug that would leave the entities folder
            result.problems.append(f"entity {slug!r}: not a safe page name, skipped")
            return
        if text is not None and outside(vault.root, path):
            result.problems.append(f"{vault.rel(path)}: {OUTSIDE}")
        elif text is not None:
            atomic_write(path, text, durable=slug in existing)
            written += 1
            fresh += slug not in existing

    # One entity's cards at a time, in slug order (memory stays flat at 1M cards).
    for slug, rows in idx.entity_card_groups():
        owner = table.by_key.get(name_key(slug))
        if slug in existing or owner is None or owner == slug:
            update(slug, [Card(id=i, kind=k, title=t, created=c or "", valid_from=v, status=s, entities=(slug,))
                          for i, k, t, c, v, s in rows])
            done.add(slug)
    for slug in sorted(existing - done):  # pages no card names any more keep an empty block
        update(slug, [])
    if fresh:
        sync_all()
    return written
