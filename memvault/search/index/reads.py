"""What card ranking reads from the index: field statistics, document frequencies, FTS5 candidates, cards of
an entity, entity links and supersede links, and whole card rows as plain records."""

from __future__ import annotations

import sqlite3
from collections import namedtuple
from collections.abc import Iterable, Sequence

from memvault.search.index.schema import CARD_FIELDS


TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from typing import Any

# Which cards a search may return: retracted ones only with include_all; one project and/or kind (str or None).
CardFilter = namedtuple("CardFilter", "include_all project kind", defaults=(False, None, None))


def _where(flt: CardFilter, alias: str = "c") -> tuple[str, list[Any]]:
    sql, args = [], []
    if not flt.include_all:
        sql.append(f"{alias}.status != 'retracted'")
    if flt.project:
        sql.append(f"{alias}.project = ?")
        args.append(flt.project)
    if flt.kind:
        sql.append(f"{alias}.kind = ?")
        args.append(flt.kind)
    return "".join(f" AND {s}" for s in sql), args


def marks(items: Iterable[Any]) -> str:
    return ",".join("?" for _ in items) or "NULL"


def fts_match(terms: Iterable[str]) -> str:
    """An FTS5 MATCH expression OR-ing already tokenised terms (letters, digits and CJK only)."""
    return " OR ".join(f'"{t}"' for t in dict.fromkeys(terms) if t and '"' not in t)


def fts_all(terms: Iterable[str]) -> str:
    """An FTS5 MATCH expression AND-ing already tokenised terms."""
    return " AND ".join(f'"{t}"' for t in terms)


class ReadsMixin:
    """Part of Index (core.py): expects self.db and the card totals of CardsMixin."""

    def card_stats(self) -> tuple[int, dict[str, float]]:
        n, *lens = self._totals()
        return n, {f: (lens[i] / n if n else 0.0) for i, f in enumerate(CARD_FIELDS)}

    def doc_freq(self, terms: Iterable[str], episodes: bool = False) -> dict[str, int]:
        terms = list(dict.fromkeys(terms))
        if not terms:
            return {}
        table = "evocab" if episodes else "cvocab"
        out = {}
        for t in terms:  # one indexed lookup per term: fts5vocab only uses the index for term = ?
            row = self.db.execute(f"SELECT doc FROM {table} WHERE term = ?", (t,)).fetchone()
            if row:
                out[t] = int(row[0])
        return out

    def count_matches(self, match: str) -> int:
        """How many cards match the FTS5 expression `match`."""
        return self.db.execute("SELECT count(*) FROM cfts WHERE cfts MATCH ?", (match,)).fetchone()[0]

    def rank_cards(self, match: str, weights: Sequence[float], flt: CardFilter, limit: int) -> list[tuple]:
        """(rowid,) of the cards matching `match` that pass `flt`, best FTS5 bm25 (with field weights) first; ties
        in rowid order.

        Without a project or kind filter the ranking runs on cfts alone and the few rowids it returns are checked
        against `cards` afterwards: joining every match to its wide `cards` row cost 15-25 % of the ranking at
        100k cards (bench/search.py queries). The page is `limit` plus some slack for retracted cards; when the
        slack is not enough, the join below answers. Both give the same rows in the same order: the kept rowids
        are the joined query's rows, both sorted on (bm25, rowid). A project or kind filter keeps the join: it
        drops the other projects' rows before bm25 is computed for them (40 ms against 130 ms for ranking every
        match of "postgres OR backup" with one project in seven, 100k cards)."""
        bm25 = f"bm25(cfts, {', '.join(str(w) for w in weights)})"
        where, args = _where(flt)
        if not (flt.project or flt.kind):
            page = limit + max(16, limit // 8)
            ranked = [r for (r,) in self.db.execute(
                f"SELECT rowid FROM cfts WHERE cfts MATCH ? ORDER BY {bm25}, rowid LIMIT {page}", (match,))]
            # The join's own filter (and its inner join: a cfts row without a cards row is dropped too).
            live = {r for (r,) in self.db.execute(
                f"SELECT c.rowid FROM cards c WHERE c.rowid IN ({marks(ranked)}){where}", (*ranked, *args))}
            kept = [(r,) for r in ranked if r in live]
            if len(kept) >= limit or len(ranked) < page:  # enough, or every match was ranked
                return kept[:limit]
        sql = (f"SELECT c.rowid FROM cfts JOIN cards c ON c.rowid = cfts.rowid WHERE cfts MATCH ?{where}"
               f" ORDER BY {bm25}, c.rowid LIMIT {limit}")
        return self.db.execute(sql, (match, *args)).fetchall()

    def entity_card_rowids(self, slug: str, flt: CardFilter, limit: int) -> list[int]:
        """Rowids of the newest `limit` cards naming the entity `slug` that pass `flt` (ties: the card indexed
        last first).

        card_entities keeps each card's `created` beside the entity, and the index (entity, created, card) is
        read backwards from the entity's newest card: the walk stops after `limit` cards that pass the filter,
        however many cards name the entity (sorting all of them cost 30 ms for an entity named by 5,000 cards of
        100k, and a search hops through several)."""
        return [r for (r,) in self._entity_cards(False, slug, flt, limit)]

    def entity_card_keys(self, slug: str, flt: CardFilter, limit: int) -> list[tuple[int, str, str, str]]:
        """entity_card_rowids with each card's (rowid, id, status, created): what a hop needs to order the cards
        it reaches without reading them again."""
        return self._entity_cards(True, slug, flt, limit).fetchall()

    def _entity_cards(self, keys: bool, slug: str, flt: CardFilter, limit: int):
        """card_entities repeats each card's id and status, and its index ends with them: without a project or
        kind filter the walk reads that index alone. Joining each card's wide `cards` row cost one page read
        per card reached (a hop through a hub reaches 200: ~1.5 ms of a search at 100k cards, bench/search.py)."""
        cols = "e.card, e.id, e.status, e.created" if keys else "e.card"
        order = f" ORDER BY e.created DESC, e.card DESC LIMIT {limit}"
        if not (flt.project or flt.kind):
            where, args = _where(flt, "e")
            return self.db.execute(f"SELECT {cols} FROM card_entities e WHERE e.entity = ?{where}{order}",
                                   (slug, *args))
        where, args = _where(flt)
        return self.db.execute(f"SELECT {cols} FROM card_entities e JOIN cards c ON c.rowid = e.card"
                               f" WHERE e.entity = ?{where}{order}", (slug, *args))

    def card_id(self, rowid: int) -> str:
        return self.db.execute("SELECT id FROM cards WHERE rowid = ?", (rowid,)).fetchone()[0]

    def card_entity_slugs(self, rowid: int) -> list[str]:
        """The entities a card names, in index order."""
        return [s for (s,) in self.db.execute("SELECT entity FROM card_entities WHERE card = ?", (rowid,)).fetchall()]

    def cards_with_ids(self, ids: Sequence[str], flt: CardFilter) -> list[tuple[int, str]]:
        """(rowid, id) of the cards with these ids that pass `flt`."""
        where, args = _where(flt)
        return self.db.execute(f"SELECT c.rowid, c.id FROM cards c WHERE c.id IN ({','.join('?' * len(ids))}){where}",
                               (*ids, *args)).fetchall()

    def card_rows(self, rowids: list[int], tokens: bool = True) -> dict[int, dict[str, Any]]:
        """Whole cards as records: card_heads (with "tok", the tokenised field texts; None with `tokens=False`,
        which skips the FTS table) plus card_details' title, body, source "episodes" and path."""
        out = self.card_heads(rowids, tokens)
        for rowid, (title, body, episodes, path) in self.card_details(list(out)).items():
            out[rowid].update(title=title, body=body, episodes=episodes, path=path)
        return out

    def card_heads(self, rowids: list[int], tokens: bool = True) -> dict[int, dict[str, Any]]:
        """What ranking needs of each candidate: id, kind, project, status, entities, supersede links, dates and
        "tok" (the tokenised field texts; None with `tokens=False`). Not the title, body, sources or path: a
        search at 100k cards ranks several hundred cards and shows ten, and `card_details` reads those."""
        out: dict[int, dict[str, Any]] = {}
        # The tokenised fields straight from FTS5's content table (cfts_content: id, c0..c3 in the column order
        # of cfts): through the virtual table, FTS5 runs one statement per row to fetch them (~600 per search).
        cols = "f.c0, f.c1, f.c2, f.c3" if tokens else "NULL, NULL, NULL, NULL"
        join = " JOIN cfts_content f ON f.id = c.rowid" if tokens else ""
        sql = (f"SELECT c.rowid, c.id, c.kind, c.project, c.status, c.entities, c.superseded_by, c.supersedes,"
               f" c.created, c.valid_from, {cols} FROM cards c{join} WHERE c.rowid IN ({marks(rowids)})")
        try:
            rows = self.db.execute(sql, rowids)
        except sqlite3.OperationalError:  # an SQLite that lays FTS5's content out otherwise: the virtual table
            rows = self.db.execute(sql.replace("f.c0, f.c1, f.c2, f.c3", "f.title, f.entities, f.body, f.tags")
                                   .replace("JOIN cfts_content f ON f.id", "JOIN cfts f ON f.rowid"), rowids)
        for r in rows:
            out[r[0]] = {"id": r[1], "kind": r[2], "project": r[3], "status": r[4], "entities": json_list(r[5]),
                         "superseded_by": json_list(r[6]), "supersedes": json_list(r[7]), "created": r[8],
                         "valid_from": r[9], "tok": r[10:14] if tokens else None}
        return out

    def card_keys(self, rowids: Sequence[int]) -> list[tuple[int, str, str, str]]:
        """(rowid, id, status, created) of each card: what orders hits that are shown but not re-scored."""
        return self.db.execute(f"SELECT rowid, id, status, created FROM cards WHERE rowid IN ({marks(rowids)})",
                               list(rowids)).fetchall()

    def card_details(self, rowids: Sequence[int]) -> dict[int, tuple[str, str, list[str], str]]:
        """(title, body, source episodes, path) of the cards a search shows."""
        return {r[0]: (r[1], r[2], json_list(r[3]), r[4]) for r in self.db.execute(
            f"SELECT rowid, title, body, episodes, path FROM cards WHERE rowid IN ({marks(rowids)})", list(rowids))}


def json_list(text: str) -> list[Any]:
    """A JSON list column; most are empty (no supersede chain), and json.loads costs ~2 us even for "[]". A list of
    plain strings (what the index writes for ids, entities, aliases and episodes: no backslash, so no escaped
    quote in any item, and no ", " inside an item) is split without the JSON parser: a search reads several
    hundred rows, and a search's process does not import json at all (~5.5 M instructions with its regexes)."""
    if text == "[]":
        return []
    if (text.startswith('["') and text.endswith('"]') and "\\" not in text
            and text.count('", "') == text.count(", ")):  # every ", " separates two strings: no number, no "a, b"
        return text[2:-2].split('", "')
    import json

    return json.loads(text)

