"""Index.entity_card_rowids: the newest cards naming an entity, read from the (entity, created, card) index
without sorting every card of the entity; held to a brute force over the files, ties and filters included."""

from __future__ import annotations

import pytest

from memvault.search.index import CardFilter, Index

from search_helpers import card, write


@pytest.fixture
def hub_vault(vault):
    """60 cards naming `postgres` over 6 days (ten per day, all at the same time: ties), some retracted, two
    projects and two kinds; 5 cards naming something else, newer than all of them."""
    cards = []
    for i in range(60):
        day = 1 + i // 10
        cards.append(card(f"c-202501{day:02d}-p{i:03d}", f"Postgres note {i}", "body", entities=("postgres",),
                          created=f"2025-01-{day:02d}T10:00:00Z", project="web" if i % 2 else "ops",
                          kind="fact" if i % 3 else "decision", status="retracted" if i % 7 == 0 else "active"))
    for i in range(5):
        cards.append(card(f"c-20250301-o{i:03d}", f"Other {i}", "body", entities=("redis",)))
    write(vault, *cards)
    with Index(vault) as idx:
        idx.refresh()
        yield idx


def brute(idx: Index, slug: str, flt: CardFilter, limit: int) -> list[int]:
    """The expected walk from the card records alone: newest first, then the card indexed last."""
    rows = idx.card_rows(list(range(1, 200)))
    keep = [(row["created"], rowid) for rowid, row in rows.items() if slug in row["entities"]
            and (flt.include_all or row["status"] != "retracted")
            and (flt.project is None or row["project"] == flt.project) and (flt.kind is None or row["kind"] == flt.kind)]
    return [rowid for _created, rowid in sorted(keep, reverse=True)][:limit]


@pytest.mark.parametrize("limit", [1, 7, 10, 25, 200])
@pytest.mark.parametrize("flt", [CardFilter(), CardFilter(include_all=True), CardFilter(project="web"),
                                 CardFilter(kind="decision"), CardFilter(project="ops", kind="fact")])
def test_entity_walk_returns_the_newest_cards_that_pass_the_filter(hub_vault, flt, limit):
    got = hub_vault.entity_card_rowids("postgres", flt, limit)
    assert got == brute(hub_vault, "postgres", flt, limit)
    assert got, "every filter leaves some card"


def test_entity_walk_reads_the_index_backwards_and_sorts_nothing(hub_vault):
    """The query plan walks ce_entity for the one entity; a temporary sort would mean every card of the entity
    is read before the first one is returned."""
    sql = hub_vault.db.execute("SELECT sql FROM sqlite_master WHERE name = 'ce_entity'").fetchone()[0]
    assert "entity, created, card" in sql
    # The statement entity_card_rowids runs, captured through the connection's trace hook.
    seen: list[str] = []
    hub_vault.db.set_trace_callback(seen.append)
    hub_vault.entity_card_rowids("postgres", CardFilter(project="web"), 5)
    hub_vault.db.set_trace_callback(None)
    stmt = next(s for s in seen if "card_entities" in s)
    plan = " | ".join(r[-1] for r in hub_vault.db.execute("EXPLAIN QUERY PLAN " + stmt))
    assert "ce_entity" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


def test_a_changed_card_moves_in_the_walk(hub_vault, vault):
    """An edit that gives a card a newer `created` puts it first; the old row is gone from the walk."""
    newest = hub_vault.entity_card_rowids("postgres", CardFilter(), 1)
    write(vault, card("c-20250101-p001", "Postgres note 1, edited", "body", entities=("postgres",),
                      created="2025-02-01T10:00:00Z", project="web", kind="fact"))
    hub_vault.refresh()
    first = hub_vault.entity_card_rowids("postgres", CardFilter(), 1)
    assert first != newest
    assert hub_vault.card_id(first[0]) == "c-20250101-p001"
    ids = [hub_vault.card_id(r) for r in hub_vault.entity_card_rowids("postgres", CardFilter(include_all=True), 200)]
    assert ids.count("c-20250101-p001") == 1 and len(ids) == 60


@pytest.mark.parametrize("flt", [CardFilter(), CardFilter(include_all=True), CardFilter(project="web")])
def test_a_hop_reads_each_cards_id_status_and_created_as_the_card_records_hold_them(hub_vault, flt):
    """entity_card_keys reads id and status from card_entities (a copy made when the card is indexed) without a
    project or kind filter, and from the cards rows with one: both must be what the card records say."""
    keys = hub_vault.entity_card_keys("postgres", flt, 200)
    assert [k[0] for k in keys] == brute(hub_vault, "postgres", flt, 200)
    rows = hub_vault.card_rows([k[0] for k in keys], tokens=False)
    assert [(k[1], k[2], k[3]) for k in keys] == [(rows[k[0]]["id"], rows[k[0]]["status"], rows[k[0]]["created"])
                                                  for k in keys]
    assert {k[2] for k in keys} == ({"active", "retracted"} if flt.include_all else {"active"})


def test_the_walk_without_a_filter_reads_the_entity_index_alone(hub_vault):
    """No page of the wide `cards` table per card reached: the plan is the covering index, nothing else."""
    seen: list[str] = []
    hub_vault.db.set_trace_callback(seen.append)
    hub_vault.entity_card_keys("postgres", CardFilter(), 5)
    hub_vault.db.set_trace_callback(None)
    stmt = next(s for s in seen if "card_entities" in s)
    plan = [r[-1] for r in hub_vault.db.execute("EXPLAIN QUERY PLAN " + stmt)]
    assert plan == ["SEARCH e USING COVERING INDEX ce_entity (entity=?)"], plan


def test_a_card_retracted_by_an_edit_leaves_the_walk(hub_vault, vault):
    """The copy of a card's status in card_entities follows an edit of the card's file."""
    newest = hub_vault.entity_card_keys("postgres", CardFilter(), 1)[0]
    assert newest[2] == "active"
    row = hub_vault.card_rows([newest[0]], tokens=False)[newest[0]]
    write(vault, card(row["id"], row["title"], "body", entities=("postgres",), created=row["created"],
                      project=row["project"], kind=row["kind"], status="retracted"))
    hub_vault.refresh()
    assert row["id"] not in [k[1] for k in hub_vault.entity_card_keys("postgres", CardFilter(), 200)]
    every = {k[1]: k[2] for k in hub_vault.entity_card_keys("postgres", CardFilter(include_all=True), 200)}
    assert every[row["id"]] == "retracted" and len(every) == 60


def test_an_entitys_degree_and_page_are_index_lookups(hub_vault):
    """Every search that names an entity or hops counts the entity's cards and reads its page: the count runs on
    the narrowest index of card_entities, and the page (by slug or name) never scans the entities table."""
    seen: list[str] = []
    hub_vault.db.set_trace_callback(seen.append)
    assert hub_vault.entity_degree("postgres") == 60
    hub_vault.entity_page("postgres")
    hub_vault.db.set_trace_callback(None)
    plans = {s: " | ".join(r[-1] for r in hub_vault.db.execute("EXPLAIN QUERY PLAN " + s)) for s in seen
             if s.lstrip().upper().startswith("SELECT")}
    count = next(p for s, p in plans.items() if "count(*)" in s)
    assert "COVERING INDEX ce_degree" in count, count
    page = next(p for s, p in plans.items() if "FROM entities" in s)
    assert "SCAN" not in page and "entities_name" in page, page
