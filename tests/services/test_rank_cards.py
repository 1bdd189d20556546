"""Index.rank_cards ranks on the FTS table alone and filters the page through `cards` afterwards; these tests
hold it to what the former single query (FTS joined to `cards`, filtered, then ranked) returned: the same
rowids in the same order, ties included, with retracted cards and other projects' cards among the best matches."""

from __future__ import annotations

import pytest

from memvault.search import tokenize
from memvault.search.index import CARD_FIELDS, CardFilter, Index, fts_all, fts_match
from memvault.search.candidates import CARD_WEIGHTS

from search_helpers import card, write

WEIGHTS = [CARD_WEIGHTS[f] for f in CARD_FIELDS]

# The query before rank_cards ranked on cfts alone (tests may hold SQL; the layer rule is for memvault/).
JOINED = ("SELECT c.rowid FROM cfts JOIN cards c ON c.rowid = cfts.rowid WHERE cfts MATCH ?{where}"
          " ORDER BY bm25(cfts, {weights}) LIMIT {limit}")


def joined(idx: Index, match: str, flt: CardFilter, limit: int) -> list[int]:
    where, args = "", []
    if not flt.include_all:
        where += " AND c.status != 'retracted'"
    if flt.project:
        where, args = where + " AND c.project = ?", [*args, flt.project]
    if flt.kind:
        where, args = where + " AND c.kind = ?", [*args, flt.kind]
    sql = JOINED.format(where=where, weights=", ".join(str(w) for w in WEIGHTS), limit=limit)
    return [r for (r,) in idx.db.execute(sql, (match, *args))]


@pytest.fixture
def ranked_vault(vault):
    """Cards about postgres backups: the 24 best matches are retracted, the next 12 belong to another project,
    then 30 identical cards (all tied), then weaker matches of both kinds mixed."""
    cards = []
    for i in range(24):
        cards.append(card(f"c-20250101-a{i:03d}", "Postgres backup postgres backup", "Nightly postgres backup.",
                          status="retracted", project="web"))
    for i in range(12):
        cards.append(card(f"c-20250102-b{i:03d}", "Postgres backup with pgbackrest", "Postgres backup to s3.",
                          project="other"))
    for i in range(30):
        cards.append(card(f"c-20250103-c{i:03d}", "Postgres backup", "Same words in every one of these.",
                          project="web", kind="fact" if i % 3 else "decision"))
    for i in range(30):
        cards.append(card(f"c-20250104-d{i:03d}", f"Disk note {i}", "A backup of the disk " + "words " * (i % 5),
                          project="web" if i % 2 else "other", status="retracted" if i % 4 == 0 else "active",
                          kind="fact"))
    write(vault, *cards)
    with Index(vault) as idx:
        idx.refresh()
        yield idx


def _status_and_project(idx: Index, rowids: list[int]) -> dict[int, tuple[str, str, str]]:
    return {r: (row["status"], row["project"], row["kind"]) for r, row in idx.card_rows(rowids).items()}


@pytest.mark.parametrize("limit", [1, 5, 20, 37, 60, 150])
@pytest.mark.parametrize("flt", [CardFilter(), CardFilter(include_all=True), CardFilter(project="web"),
                                 CardFilter(kind="fact"), CardFilter(include_all=True, project="other")])
def test_rank_cards_returns_what_the_joined_query_returned(ranked_vault, flt, limit):
    idx = ranked_vault
    terms = tokenize.tokens("postgres backup")
    for match in (fts_match(terms), fts_all(terms), fts_match(tokenize.tokens("disk"))):
        got = [r for (r,) in idx.rank_cards(match, WEIGHTS, flt, limit)]
        assert got == joined(idx, match, flt, limit)
        # Without SQL: rank every match unfiltered, then keep the cards that pass the filter, in that order.
        everything = [r for (r,) in idx.rank_cards(match, WEIGHTS, CardFilter(include_all=True), 10_000)]
        rows = _status_and_project(idx, everything)
        want = [r for r in everything if (flt.include_all or rows[r][0] != "retracted")
                and flt.project in (None, rows[r][1]) and flt.kind in (None, rows[r][2])][:limit]
        assert got == want


def test_the_tied_cards_come_in_rowid_order(ranked_vault):
    idx = ranked_vault
    got = [r for (r,) in idx.rank_cards(fts_all(tokenize.tokens("postgres backup")), WEIGHTS, CardFilter(), 150)]
    rows = idx.card_rows(got)
    tied = [r for r in got if rows[r]["id"].startswith("c-20250103-c")]
    assert len(tied) == 30 and tied == sorted(tied)
    assert not any(rows[r]["status"] == "retracted" for r in got)
