"""timeline: cards in world-time order (valid_from, else created), supersede links visible."""

from __future__ import annotations

from typing import Any

from memvault.errors import NoMatch
from memvault.search.index import Index, entity_names
from memvault.search.index.reads import json_list


def timeline(idx: Index, entity: str | None = None, project: str | None = None, since: str | None = None,
             limit: int | None = None, include_all: bool = False) -> list[dict[str, Any]]:
    """Oldest first. `limit` keeps the newest N (still printed oldest first), like `tail`."""
    idx.refresh()
    names = None
    if entity:
        found = entity_names(idx, entity)
        if found is None:
            raise NoMatch(f"no entity named {entity!r}")
        names = found[1]
    rows = idx.timeline_rows(names, project, since, limit, include_all)
    out = [{"id": r[0], "kind": r[1], "title": r[2], "project": r[3], "status": r[4], "created": r[5],
            "date": r[6] or (r[5] or "")[:10], "valid_to": r[7], "supersedes": json_list(r[8]),
            "superseded_by": json_list(r[9])} for r in rows]
    out.reverse()
    if not out:
        raise NoMatch("no cards in that range")
    return out
