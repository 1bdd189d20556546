"""Conflicts as the commands show them: the whole vault (`memvault conflicts`, `doctor`) or around a few cards
(`search` hits, `context` packs). The detection itself is memvault.distill.conflicts (pure).

Around a few cards (a search's hits, a context pack) a whole-vault scan would cost seconds on every call, so
the candidates are the cards the search index finds for each card's subject (at most CANDIDATES, same
project): `state` and `restated` pairs whose partner names the subject's words in its title, body or entities.
Near-duplicates, and a partner that never names its subject, need the whole-vault scan of `memvault conflicts`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memvault.distill import conflicts as detector
from memvault.errors import VaultFormatError
from memvault.model import Card
from memvault.vault.store import Vault

CANDIDATES = 20


@dataclass
class ConflictReport:
    conflicts: list[detector.Conflict] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)  # card id -> vault path
    titles: dict[str, str] = field(default_factory=dict)  # card id -> title

    def to_json(self) -> dict[str, Any]:
        return {"conflicts": [dict(c.to_json(), a_path=self.paths.get(c.a), b_path=self.paths.get(c.b),
                                   a_title=self.titles.get(c.a), b_title=self.titles.get(c.b))
                              for c in self.conflicts], "count": len(self.conflicts)}

    def lines(self) -> list[str]:
        """`path: conflicts with c-… (sort: reason)`, once for each card of a pair."""
        out = []
        for c in self.conflicts:
            for mine in (c.a, c.b):
                out.append(f"{self.paths.get(mine, mine)}: conflicts with {c.other(mine)} ({c.sort}: {c.reason})")
        return out


def threshold(vault: Vault) -> float:
    return float(vault.config.section("distill").get("merge_threshold", 85))


def scan(vault: Vault, *, project: str | None = None, cards: Iterable[Card] | None = None,
         problems: list[VaultFormatError] | None = None, limit: int | None = None) -> ConflictReport:
    """Every conflict of the vault (or of `project`; at most `limit`, see detector.detect); `cards` when the
    caller already parsed them all."""
    cards = list(vault.cards(problems=problems if problems is not None else []) if cards is None else cards)
    found = detector.detect(cards, threshold=threshold(vault), project=project, limit=limit)
    ids = {i for c in found for i in (c.a, c.b)}
    paths, titles = {}, {}
    where = vault.find_card_paths(ids)
    for card in cards:
        if card.id in ids:
            path = where.get(card.id)
            paths[card.id] = vault.rel(path) if path else card.id
            titles[card.id] = card.title
    return ConflictReport(conflicts=found, paths=paths, titles=titles)


def around(vault: Vault, ids: Iterable[str]) -> dict[str, list[str]]:
    """card id -> ids of the active cards it conflicts with, for the given cards (see module doc)."""
    from memvault.errors import MemvaultError
    from memvault.search import service as searchlib
    from memvault.search.index import Index

    wanted = [i for i in dict.fromkeys(ids) if i]
    mine: dict[str, Card] = {}
    for cid in wanted:
        card = _read(vault, vault.find_card_path(cid))
        if card is not None:
            mine[cid] = card
    subjects = sorted({(c.project or "", c.subject) for c in mine.values()
                       if c.status == "active" and c.subject and c.field})
    if not subjects:
        return {}
    pool = dict(mine)
    opts = searchlib.options_from(vault.config.section("search"), None, limit=CANDIDATES, hops=0, episodes=False)
    paths: set[str] = set()
    with Index(vault.root, opts.mode, opts.stat_all_below) as idx:  # one index for every subject
        idx.refresh()
        for project, subject in subjects:
            try:
                found = searchlib.search_index(idx, subject, opts._replace(project=project or None))
            except MemvaultError:
                continue
            paths |= {h.path for h in found.hits if h.kind != "episode" and h.path and h.id not in pool}
    for path in sorted(paths):
        card = _read(vault, vault.root / path)
        if card is not None:
            pool.setdefault(card.id, card)
    found_pairs = detector.detect(pool.values(), threshold=threshold(vault))
    out = detector.by_card(c for c in found_pairs if c.sort != "duplicate")
    return {cid: out[cid] for cid in wanted if cid in out}


def _read(vault: Vault, path) -> Card | None:
    if path is None:
        return None
    try:
        return vault.read_card(path)
    except (OSError, VaultFormatError):
        return None
