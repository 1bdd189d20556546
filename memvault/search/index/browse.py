"""What the views (context, graph, show, stats, timeline) read from the index: plain rows, SQL kept here."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from memvault.search.index.reads import json_list

TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from typing import Any

# One card as context packs read it.
SUMMARY_COLS = "id, kind, title, body, project, status, created, valid_from, superseded_by, tags"


class BrowseMixin:
    """Part of Index (core.py): expects self.db."""

    # -- context
    def pinned_rows(self, kinds: Sequence[str], project: str | None) -> list[tuple]:
        """(SUMMARY_COLS) of active cards of these kinds: of `project` plus personal ones, or all without one;
        in path order."""
        sql = (f"SELECT {SUMMARY_COLS} FROM cards"
               f" WHERE status = 'active' AND kind IN ({','.join('?' * len(kinds))})")
        args: list[Any] = list(kinds)
        if project:
            sql += " AND (project = ? OR project IS NULL)"
            args.append(project)
        return self.db.execute(sql + " ORDER BY path", args).fetchall()

    def cards_citing(self, episode_id: str) -> list[tuple]:
        """(id, kind, title, status) of the cards that name this episode among their sources, by id."""
        like = '%"' + episode_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + '"%'
        return self.db.execute("SELECT id, kind, title, status FROM cards WHERE episodes LIKE ? ESCAPE '\\'"
                               " ORDER BY id", (like,)).fetchall()

    def summary_rows(self, ids: Sequence[str]) -> list[tuple]:
        """(SUMMARY_COLS) of the cards with these ids, in path order."""
        return self.db.execute(f"SELECT {SUMMARY_COLS} FROM cards WHERE id IN ({','.join('?' * len(ids))})"
                               " ORDER BY path", list(ids)).fetchall()

    # -- graph
    def card_head(self, ident: str) -> tuple | None:
        """(rowid, id, kind, title, project, status) of the card with id `ident`, or None."""
        return self.db.execute("SELECT rowid, id, kind, title, project, status FROM cards WHERE id = ?",
                               (ident,)).fetchone()

    def card_entities_sorted(self, rowid: int) -> list[str]:
        return [e for (e,) in self.db.execute("SELECT entity FROM card_entities WHERE card = ? ORDER BY entity",
                                              (rowid,))]

    def entity_neighbours(self, entity: str, rowid: int, include_all: bool) -> list[tuple]:
        """(id, kind, title, project, status) of the other cards naming `entity`."""
        status = "" if include_all else " AND c.status != 'retracted'"
        return self.db.execute(
            "SELECT c.id, c.kind, c.title, c.project, c.status FROM card_entities e JOIN cards c"
            f" ON c.rowid = e.card WHERE e.entity = ? AND c.rowid != ?{status}", (entity, rowid)).fetchall()

    def cards_naming(self, names: Sequence[str], include_all: bool = True, created: bool = False) -> list[tuple]:
        """(id, kind, title, project, status[, created]) of the cards naming any of `names`, newest first."""
        status = "" if include_all else " AND c.status != 'retracted'"
        cols = "c.id, c.kind, c.title, c.project, c.status" + (", c.created" if created else "")
        return self.db.execute(
            f"SELECT DISTINCT {cols} FROM card_entities e JOIN cards c ON c.rowid = e.card"
            f" WHERE e.entity IN ({','.join('?' * len(names))}){status} ORDER BY c.created DESC, c.id",
            list(names)).fetchall()

    def co_entities(self, names: Sequence[str]) -> list[tuple[str, int]]:
        """(entity, cards shared) of the other entities named by cards that name any of `names`."""
        marks = ",".join("?" * len(names))
        return self.db.execute(
            f"SELECT e2.entity, count(*) FROM card_entities e1 JOIN card_entities e2 ON e1.card = e2.card"
            f" WHERE e1.entity IN ({marks}) AND e2.entity NOT IN ({marks}) GROUP BY e2.entity"
            f" ORDER BY count(*) DESC, e2.entity", (*names, *names)).fetchall()

    def card_heads(self, include_all: bool) -> list[tuple]:
        """(id, kind, title, project, status) of every card, by id."""
        status = "" if include_all else " WHERE status != 'retracted'"
        return self.db.execute(f"SELECT id, kind, title, project, status FROM cards{status} ORDER BY id").fetchall()

    def card_entity_pairs(self) -> list[tuple[str, str]]:
        """(card id, entity) of every mention."""
        return self.db.execute("SELECT c.id, e.entity FROM card_entities e JOIN cards c ON c.rowid = e.card").fetchall()

    # -- graph.html
    def graph_rows(self, project: str | None, since: str | None) -> list[tuple]:
        """(id, kind, title, body, project, status, created, valid_from, valid_to, entities, episodes,
        supersedes, superseded_by; lists as JSON text) of every card, retracted ones too, by id; `project`:
        only that project's; `since`: only cards whose world date (valid_from, else created) is on or after it."""
        where, args = _scope(project, since, "")
        sql = ("SELECT id, kind, title, body, project, status, created, valid_from, valid_to, entities, episodes,"
               " supersedes, superseded_by FROM cards" + (" WHERE " + " AND ".join(where) if where else ""))
        return self.db.execute(sql + " ORDER BY id", args).fetchall()

    # -- stats: both counts read the narrow index cards_status(status, project), not the cards' rows (SCHEMA 12:
    # 10k cards, 2.9 + 3.5 ms -> ~0.5 ms each; a whole scan of the wide rows grows with the cards' text)
    def status_counts(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT status, count(*) FROM cards GROUP BY status").fetchall())

    def project_counts(self) -> dict[str, int]:
        """Cards per project; "-" for cards without one."""
        out: dict[str, int] = {}
        # Grouped in the index's order (no temporary tree), the statuses of a project summed here.
        for project, n in self.db.execute("SELECT project, count(*) FROM cards GROUP BY status, project"):
            out[project or "-"] = out.get(project or "-", 0) + n
        return dict(sorted(out.items()))

    # -- timeline
    def timeline_rows(self, names: Sequence[str] | None, project: str | None, since: str | None,
                      limit: int | None, include_all: bool) -> list[tuple]:
        """(id, kind, title, project, status, created, valid_from, valid_to, supersedes, superseded_by), newest
        world time (valid_from, else the created date) first; `names`: only cards naming one of them. The order is
        that of the index cards_world (SCHEMA 12): `--limit 5` reads five rows, not every card and a sort, and the
        index holds project and status, so a rare --project skips the other cards' rows (10k cards: 3.4 -> 0.01 ms;
        --project with no card 1.3 -> 0.5 ms)."""
        where, args = _scope(project, since, "c.")
        if names is not None:
            where.append(f"c.rowid IN (SELECT card FROM card_entities WHERE entity IN ({','.join('?' * len(names))}))")
            args.extend(names)
        if not include_all:
            where.append("c.status != 'retracted'")
        sql = ("SELECT c.id, c.kind, c.title, c.project, c.status, c.created, c.valid_from, c.valid_to,"
               " c.supersedes, c.superseded_by FROM cards c"
               + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY coalesce(c.valid_from, substr(c.created, 1, 10)) DESC, c.created DESC, c.id DESC")
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self.db.execute(sql, args).fetchall()

    def entity_card_groups(self) -> Iterator[tuple[str, list[tuple[str, str, str, str, str | None, str]]]]:
        """(entity slug, [(id, kind, title, created, valid_from, status), ...]) for every entity cards name, in slug
        order, streamed one entity at a time (the entity index is read in order: no list of every card, which at
        1M cards held most of a reindex's memory)."""
        rows = self.db.execute(
            "SELECT e.entity, c.id, c.kind, c.title, c.created, c.valid_from, c.status"
            " FROM card_entities e JOIN cards c ON c.rowid = e.card ORDER BY e.entity")
        for slug, group in itertools.groupby(rows, key=lambda r: r[0]):
            yield slug, [r[1:] for r in group]

    def entity_pages(self) -> list[tuple[str, str, list[str]]]:
        """(slug, name, aliases) of every entity page the index read."""
        return [(slug, name, json_list(aliases or "[]"))
                for slug, name, aliases in self.db.execute("SELECT slug, name, aliases FROM entities ORDER BY slug")]


def _scope(project: str | None, since: str | None, alias: str) -> tuple[list[str], list[Any]]:
    """WHERE terms and arguments for "only this project" and "world date on or after `since`"."""
    where: list[str] = []
    args: list[Any] = []
    if project:
        where.append(f"{alias}project = ?")
        args.append(project)
    if since:
        where.append(f"coalesce({alias}valid_from, substr({alias}created, 1, 10)) >= ?")
        args.append(since)
    return where, args
