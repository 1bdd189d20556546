"""Query expansion without a model (synonym table, entity aliases) and the floor for hits resting on one name.

Aliases are on by default; the synonym table and the floors are settings (search.synonyms, search.name_floor,
search.expansion_floor), off by default because they cost the old eval set (eval/REPORT.md). `ids` turns them
on at the measured values; `default_ids` searches with the defaults."""

import pytest

from memvault.errors import NoMatch
from memvault.search import service as search

from search_helpers import card, entity_page, write


MEASURED = {"synonyms": True, "name_floor": 0.4, "expansion_floor": 0.25}


def ids(root, query, **kw):
    return [h.id for h in search.run_search(root, query, search.options_from(MEASURED, **kw)).hits]


def default_ids(root, query, **kw):
    return [h.id for h in search.run_search(root, query, search.options_from({}, **kw)).hits]


def test_synonyms_find_a_card_that_shares_no_word_with_the_question(vault):
    write(vault, card("c-20250101-aaaa", "Decided on Postgres", "For the shop db."),
          card("c-20250102-bbbb", "决定用 SQLite 存配置", "单文件，简单。"),
          card("c-20250103-cccc", "Garden watering", "Twice a week in summer."))
    assert ids(vault, "which database did we pick")[0] == "c-20250101-aaaa"
    # 选定 reaches 决定 and, across languages, "decided"; never the card about something else.
    assert set(ids(vault, "我们选定了什么")) == {"c-20250101-aaaa", "c-20250102-bbbb"}
    with pytest.raises(NoMatch):  # the same search without expansion finds nothing: the words differ
        ids(vault, "which database did we pick", expand=False)


def test_expansion_scores_below_the_questions_own_word(vault):
    write(vault, card("c-20250101-aaaa", "Database backups", "Nightly dump of the database."),
          card("c-20250102-bbbb", "DB backups", "Nightly dump of the db."))
    res = search.run_search(vault, "database", search.options_from(MEASURED))
    assert [h.id for h in res.hits] == ["c-20250101-aaaa", "c-20250102-bbbb"]
    assert res.hits[0].score > res.hits[1].score


def test_entity_alias_expands_to_the_other_names(vault):
    entity_page(vault, "postgres", "postgres", ["postgresql", "pg"])
    # The card says PostgreSQL but is not linked to the entity: only the alias expansion reaches it.
    write(vault, card("c-20250105-eeee", "Replication on PostgreSQL", "Streaming to a standby."),
          card("c-20250106-ffff", "Orders export to CSV", "Weekly export for accounting."))
    assert ids(vault, "pg")[0] == "c-20250105-eeee"
    with pytest.raises(NoMatch):
        ids(vault, "pg", expand=False)


@pytest.fixture
def people(vault):
    entity_page(vault, "alice", "Alice", [])
    entity_page(vault, "lin-wan", "林晚", ["小晚"])
    write(vault, card("c-20250101-aaaa", "Alice moved to Lisbon", "She rents near the river.", entities=("alice",)),
          card("c-20250102-bbbb", "林晚搬到了雾港", "租了河边的房子。", entities=("lin-wan",)))
    return vault


def test_a_hit_resting_on_one_name_does_not_answer_other_questions(people):
    for q in ("what is alice's blood type", "林晚的血型是什么"):
        with pytest.raises(NoMatch):
            ids(people, q)


def test_a_name_alone_or_with_a_matched_word_still_finds_its_cards(people):
    assert ids(people, "alice") == ["c-20250101-aaaa"]
    assert ids(people, "where does alice rent")[0] == "c-20250101-aaaa"
    assert ids(people, "小晚")[0] == "c-20250102-bbbb"
    assert ids(people, "林晚搬到哪里了")[0] == "c-20250102-bbbb"


def test_a_query_naming_several_things_finds_a_card_about_any_of_them(vault):
    write(vault, card("c-20250101-aaaa", "Orders live in the main database", "Chosen for transactions.",
                      entities=("postgres",)),
          card("c-20250102-bbbb", "Blog drafts are files", "Easy to diff.", entities=("markdown",)),
          card("c-20250103-cccc", "Local cache file", "One file per device.", entities=("sqlite",)))
    found = set(ids(vault, "sqlite postgres markdown"))
    assert found == {"c-20250101-aaaa", "c-20250102-bbbb", "c-20250103-cccc"}
    with pytest.raises(NoMatch):  # one named thing plus words no card answers is still refused
        ids(vault, "what port does postgres replica listen on")


def test_by_default_aliases_expand_but_synonyms_and_floors_do_not(vault):
    write(vault, card("c-20250101-aaaa", "Decided on Postgres", "For the shop db.", entities=("pg",)))
    entity_page(vault, "pg", "pg", ["postgresql"])
    with pytest.raises(NoMatch):  # "database" reaches "db" only through the synonym table
        default_ids(vault, "which database did we pick")
    assert default_ids(vault, "postgresql") == ["c-20250101-aaaa"]  # an alias of the entity the card names
    assert ids(vault, "which database did we pick")[0] == "c-20250101-aaaa"
