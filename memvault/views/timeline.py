"""timeline: cards in world-time order (valid_from, else created), supersede links visible."""

from __future__ import annotations

import json
from typing import Any

from memvault.errors import NoMatch
from memvault.search.index import Index, entity_names


def timeline(idx: Index, entity: str | None = None, project: str | None = None, since: str | None = None,
             limit: int | None = None, include_all: bool = False) -> list[dict[str, Any]]:
    """Oldest first. `limit` keeps the newest N (still printed oldest first), like `tail`."""
    idx.refresh()
    where, args = [], []
    if entity:
        found = entity_names(idx, entity)
        if found is None:
            raise NoMatch(f"no entity named {entity!r}")
        names = found[1]
        where.append(f"c.rowid IN (SELECT card FROM card_entities WHERE entity IN ({','.join('?' * len(names))}))")
        args.extend(names)
    if project:
        where.append("c.project = ?")
        args.append(project)
    if since:
        where.append("coalesce(c.valid_from, substr(c.created, 1, 10)) >= ?")
        args.append(since)
    if not include_all:
        where.append("c.status != 'retracted'")
    sql = ("SELECT c.id, c.kind, c.title, c.project, c.status, c.created, c.valid_from, c.valid_to,"
           " c.supersedes, c.superseded_by FROM cards c"
           + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY coalesce(c.valid_from, substr(c.created, 1, 10)) DESC, c.created DESC, c.id DESC")
    if limit:
        sql += f" LIMIT {int(limit)}"
    rows = idx.db.execute(sql, args).fetchall()
    out = [{"id": r[0], "kind": r[1], "title": r[2], "project": r[3], "status": r[4], "created": r[5],
            "date": r[6] or (r[5] or "")[:10], "valid_to": r[7], "supersedes": json.loads(r[8]),
            "superseded_by": json.loads(r[9])} for r in rows]
    out.reverse()
    if not out:
        raise NoMatch("no cards in that range")
    return out
