"""graph: neighbours of a card or entity through shared entities; `graph --html` draws graph.html (graph_page),
and draws it again after cards change when one exists (redraw_if_present)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memvault.errors import NoMatch
from memvault.search.index import Index, entity_names
from memvault.vault.store import Vault, atomic_write
from memvault.views import graph_page

GRAPH_FILE = "graph.html"


def neighbours(idx: Index, ident: str, limit: int = 20, include_all: bool = False) -> dict[str, Any]:
    """A card's neighbours: other cards sharing any of its entities, most shared first (hub entities count
    less: weight = sum of 1/log2(1 + cards of the entity)). An entity's neighbours: its cards and the entities
    they also name."""
    idx.refresh()
    row = idx.card_head(ident)
    if row:
        ents = idx.card_entities_sorted(row[0])
        found: dict[str, dict[str, Any]] = {}
        for ent in ents:
            degree = idx.entity_degree(ent)
            for cid, kind, title, project, st in idx.entity_neighbours(ent, row[0], include_all):
                n = found.setdefault(cid, {"id": cid, "type": "card", "kind": kind, "title": title,
                                           "project": project, "status": st, "via": [], "weight": 0.0})
                n["via"].append(ent)
                n["weight"] += 1.0 / _log2(1 + degree)
        items = sorted(found.values(), key=lambda n: (-n["weight"], n["id"]))[:limit]
        for n in items:
            n["weight"] = round(n["weight"], 4)
        return {"center": {"id": row[1], "type": "card", "kind": row[2], "title": row[3], "project": row[4],
                           "status": row[5], "entities": ents}, "neighbours": items}
    found = entity_names(idx, ident)
    if found is None:
        raise NoMatch(f"no card or entity named {ident!r}")
    slug, names = found
    cards = [{"id": r[0], "type": "card", "kind": r[1], "title": r[2], "project": r[3], "status": r[4],
              "via": [slug], "weight": 1.0} for r in idx.cards_naming(sorted(names), include_all)]
    co = idx.co_entities(sorted(names))
    ents = [{"id": e, "type": "entity", "title": e, "via": [], "weight": float(n)} for e, n in co]
    title = next((n for n in names if n != slug), slug)  # the page's name when it has one
    return {"center": {"id": slug, "type": "entity", "title": title},
            "neighbours": (cards + ents)[:limit] if limit else cards + ents}


def _log2(x: float) -> float:
    import math

    return math.log2(x) if x > 1 else 1.0


def write_html(vault: Vault, mode: str, project: str | None = None, since: str | None = None,
               path: Path | None = None) -> Path:
    """Draw graph.html at the vault root, or at `path` (from the current folder) (graph_page, graph_layout):
    every card, or `project`'s, or those whose world date is on or after `since`; the same cards give the same
    bytes. Returns its path."""
    with Index(vault.root, mode) as idx:
        idx.refresh()
        rows = idx.graph_rows(project, since)
    deny = list(vault.config.section("redact").get("deny") or [])
    data = graph_page.page_data(rows, deny, {"project": project, "since": since})
    path = vault.root / GRAPH_FILE if path is None else path
    atomic_write(path, graph_page.render(data))
    return path


def redraw_if_present(vault: Vault, mode: str) -> Path | None:
    """After cards changed: draw graph.html again, with the options it was drawn with, when memvault drew one
    before (a person asked for it once); else nothing. Drawing 2,000 cards takes under a second."""
    path = vault.root / GRAPH_FILE
    try:
        with open(path, "rb") as fh:  # its head says whose page it is and how it was drawn
            text = fh.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return None
    options = graph_page.read_options(text)
    if options is None:
        return None
    return write_html(vault, mode, options.get("project"), options.get("since"))
