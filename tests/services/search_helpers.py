"""Small vaults for search tests, written through the real codec and vault."""

from __future__ import annotations

import os
from pathlib import Path

from memvault.vault import codec
from memvault.model import Card
from memvault.vault.store import Vault


def card(cid: str, title: str, body: str = "", **kw) -> Card:
    created = kw.pop("created", f"20{cid[4:6]}-{cid[6:8]}-{cid[8:10]}T10:00:00Z")
    return Card(id=cid, kind=kw.pop("kind", "decision"), title=title, body=body, created=created,
                valid_from=created[:10], **kw)


def many_cards(root: Path, n: int, start: int = 0) -> None:
    """Cards `start` .. `start + n - 1` spread over twelve months, English and Chinese words, 40 entities; written
    as files straight through the codec (fast enough for the thousands a bulk build needs)."""
    for i in range(start, start + n):
        month = f"2025-{i % 12 + 1:02d}"
        c = card(f"c-2025{i % 12 + 1:02d}01-{i:04x}", f"note {i} about kalomi{i % 50}",
                 f"body words vexter{i % 97} 数据{i % 13}库", created=f"{month}-01T10:00:00Z",
                 entities=(f"ent-{i % 40}",))
        folder = root / "cards" / month
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{c.id}.md").write_text(codec.card_to_text(c), encoding="utf-8")


def write(root: Path, *cards: Card) -> None:
    vault = Vault.open(root, os.environ)
    for c in cards:
        vault.write_card(c)


def entity_page(root: Path, slug: str, name: str, aliases: list[str]) -> None:
    from memvault.model import Entity

    (root / "entities").mkdir(exist_ok=True)
    (root / "entities" / f"{slug}.md").write_text(
        codec.entity_to_text(Entity(slug=slug, name=name, aliases=tuple(aliases)), ""), encoding="utf-8")
