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


def write(root: Path, *cards: Card) -> None:
    vault = Vault.open(root, os.environ)
    for c in cards:
        vault.write_card(c)


def entity_page(root: Path, slug: str, name: str, aliases: list[str]) -> None:
    from memvault.model import Entity

    (root / "entities").mkdir(exist_ok=True)
    (root / "entities" / f"{slug}.md").write_text(
        codec.entity_to_text(Entity(slug=slug, name=name, aliases=tuple(aliases)), ""), encoding="utf-8")
