import json

import pytest

from memvault.search import service as search
from memvault.errors import NoMatch

from search_helpers import card, entity_page, write


def ids(root, query, **kw):
    return [h.id for h in search.run_search(root, query, search.options_from({}, **kw)).hits]


@pytest.fixture
def chain_vault(vault):
    write(vault,
          card("c-20250101-aaaa", "Use SQLite for the shop database", "One file, simple backups.",
               project="shop", entities=("sqlite",), status="superseded", superseded_by=("c-20250601-bbbb",)),
          card("c-20250601-bbbb", "Move the shop database to Postgres", "Concurrent writes need a server.",
               project="shop", entities=("postgres",), supersedes=("c-20250101-aaaa",)),
          card("c-20250301-cccc", "Nextcloud on the Pi", "Installed Nextcloud for files.", project="home",
               status="retracted"),
          card("c-20250401-dddd", "数据库备份策略", "每天凌晨用 restic 备份数据库到 B2。", project="home",
               entities=("restic",)))
    return vault


def test_current_question_puts_the_active_card_first(chain_vault):
    assert ids(chain_vault, "shop database")[0] == "c-20250601-bbbb"


def test_history_question_restores_the_superseded_card(chain_vault):
    assert ids(chain_vault, "what was the shop database originally")[0] == "c-20250101-aaaa"
    assert ids(chain_vault, "shop database before we moved to postgres")[0] == "c-20250101-aaaa"
    assert ids(chain_vault, "最早 shop database")[0] == "c-20250101-aaaa"


def test_retracted_cards_only_with_all(chain_vault):
    with pytest.raises(NoMatch):
        ids(chain_vault, "nextcloud")
    assert ids(chain_vault, "nextcloud", include_all=True) == ["c-20250301-cccc"]


def test_query_with_nothing_relevant_returns_nothing_certain(chain_vault):
    # No word in the vault: nothing at all (exit 1, like grep).
    for q in ("kubernetes autoscaling policy", "去冰岛旅行的预算"):
        with pytest.raises(NoMatch):
            ids(chain_vault, q)
    # One word of four ("database") is in the vault: no answer (exit 1), but what came closest travels with the
    # error, every hit marked weak and saying why, and none that matches no word of the question (a hop).
    with pytest.raises(NoMatch) as info:
        search.run_search(chain_vault, "terraform database locking state", search.options_from({}))
    res = info.value.result
    assert not res.hits and res.closest and all(h.weak for h in res.closest)
    assert all(h.why[0].startswith("weak match: 1 of the question's 4 words") for h in res.closest)
    assert not any(w.startswith("via entity") for h in res.closest for w in h.why)
    assert res.to_json()["hits"] == [] and len(res.to_json()["closest"]) == len(res.closest)
    # A question that reaches the floor gets no weak hit and nothing closest.
    res = search.run_search(chain_vault, "shop database", search.options_from({}))
    assert res.hits and not any(h.weak for h in res.hits) and res.closest == ()


def test_question_about_what_the_vault_lacks_is_no_answer(chain_vault):
    # "shop database" is in the vault, "replica" and "failover" are not: words the vault has never seen are
    # much of the question, and no hit covers answer_floor of it -> no answer. With answer_floor 0, an answer.
    q = "shop database replica failover"
    with pytest.raises(NoMatch) as info:
        search.run_search(chain_vault, q, search.options_from({}))
    assert info.value.result.closest
    assert search.run_search(chain_vault, q, search.options_from({"answer_floor": 0.0})).hits
    # A question that names a thing the vault holds and asks what it never says: the names alone answer nothing.
    with pytest.raises(NoMatch):
        search.run_search(chain_vault, "when did postgres start", search.options_from({"answer_floor": 0.0}))


def test_chinese_query_matches_bigrams_and_explains_why(chain_vault):
    res = search.run_search(chain_vault, "数据库怎么备份", search.options_from({}))
    hit = res.hits[0]
    assert hit.id == "c-20250401-dddd"
    assert any(w.startswith("matched:") and "数据" in w for w in hit.why)


def test_hit_fields_snippet_and_superseded_reason(chain_vault):
    res = search.run_search(chain_vault, "sqlite backups", search.options_from({}, snippet_chars=40))
    old = next(h for h in res.hits if h.id == "c-20250101-aaaa")
    assert old.status == "superseded" and old.project == "shop" and old.kind == "decision"
    assert "superseded by c-20250601-bbbb" in old.why
    assert len(old.snippet) <= 42
    data = old.to_json()
    assert set(data) == {"id", "kind", "title", "project", "status", "score", "snippet", "why", "sources",
                         "refs", "created", "session", "path", "weak", "valid_from"}


def test_project_and_kind_filters(chain_vault):
    assert set(ids(chain_vault, "database", project="shop")) == {"c-20250101-aaaa", "c-20250601-bbbb"}
    with pytest.raises(NoMatch):  # the home project's only card says 数据库 (reached only with search.synonyms)
        ids(chain_vault, "database", project="home")
    # With the synonym table on, 数据库 is reached, and still not the other project's cards.
    assert ids(chain_vault, "database", project="home", synonyms=True) == ["c-20250401-dddd"]
    with pytest.raises(NoMatch):
        ids(chain_vault, "sqlite", project="home")
    with pytest.raises(NoMatch):
        ids(chain_vault, "database", kind="rule")


def test_entity_alias_in_query_finds_cards_without_the_word(vault):
    entity_page(vault, "postgres", "postgres", ["postgresql", "pg"])
    write(vault, card("c-20250105-eeee", "Nightly vacuum on the orders table", "Autovacuum was not enough.",
                      entities=("postgres",)),
          card("c-20250106-ffff", "Orders export to CSV", "Weekly export for accounting."))
    res = search.run_search(vault, "pg vacuum", search.options_from({}))
    assert res.hits[0].id == "c-20250105-eeee"
    assert "names entity postgres" in res.hits[0].why


def test_entity_hop_reaches_neighbour_and_hub_is_damped(vault):
    cards = [card("c-20250110-0001", "Caddy serves the shop over TLS", "Automatic certificates.",
                  entities=("caddy", "vps")),
             card("c-20250111-0002", "Reverse proxy config lives in git", "One file per site.",
                  entities=("caddy",))]
    # A hub: 40 cards name "vps"
    cards += [card(f"c-20250112-1{i:03d}", f"Note {i}", "Routine maintenance.", entities=("vps",))
              for i in range(40)]
    write(vault, *cards)
    res = search.run_search(vault, "tls certificates", search.options_from({}, limit=50))
    by_id = {h.id: h for h in res.hits}
    assert res.hits[0].id == "c-20250110-0001"
    neighbour = by_id["c-20250111-0002"]
    assert any("via entity caddy" in w for w in neighbour.why)
    hub_hits = [h for h in res.hits if h.id.startswith("c-20250112-1")]
    assert hub_hits and all(h.score < neighbour.score for h in hub_hits)
    assert ids(vault, "tls certificates", hops=0) == ["c-20250110-0001"]


def test_episodes_are_searched_with_their_message_refs(vault):
    day = vault / "episodes" / "2025" / "03"
    day.mkdir(parents=True)
    line = {"v": 1, "id": "ep-20250301T100000Z-abc123", "at": "2025-03-01T10:00:00Z", "project": "p",
            "session": "s1", "turn": 1, "user": "How do I rotate the restic repository password?",
            "assistant": "Use restic key add then key remove.", "tools": 0,
            "source": {"kind": "jsonl", "host": "h", "ref": "m1", "refs": ["m1", "m2"]}, "hash": "sha256:x"}
    (day / "2025-03-01.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(NoMatch):
        ids(vault, "restic password", episodes=False)  # cards only
    res = search.run_search(vault, "restic password", search.options_from({}, episodes=True))
    hit = res.hits[0]
    assert (hit.id, hit.kind, hit.refs, hit.session) == ("ep-20250301T100000Z-abc123", "episode", ("m1", "m2"), "s1")
    # a revoke line withdraws it
    revoke = {"v": 1, "type": "revoke", "ids": [hit.id], "reason": "history-edit", "at": "2025-03-02T00:00:00Z"}
    with open(day / "2025-03-01.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(revoke) + "\n")
    with pytest.raises(NoMatch):
        ids(vault, "restic password", episodes=True)


def test_output_is_redacted(vault):
    write(vault, card("c-20250120-9999", "Deploy token for the shop", "token ghp_" + "a1B2" * 9 + " in CI"))
    res = search.run_search(vault, "deploy token", search.options_from({}))
    assert "ghp_a1B2" not in res.hits[0].snippet


def test_and_first_threshold_is_five_percent_of_the_vault_within_bounds():
    from memvault.search.candidates import and_first_above

    assert [and_first_above(n) for n in (100, 10_000, 40_000, 100_000, 1_000_000)] == [1000, 1000, 2000, 5000, 5000]


def test_an_entity_is_named_among_many_that_share_its_first_word(vault):
    """Names of one or two tokens are looked up whole: with sixty entities called "ent N", a question naming
    one of them (in either order of its words) finds that entity's cards, and a three-word name still works."""
    write(vault, *[card(f"c-250101{i:04d}", f"Note {i}", "plain words", entities=(f"ent-{i}",)) for i in range(60)])
    write(vault, card("c-2501020001", "Harbour plan", "plain words", entities=("north-sea-ferry",)))
    for query in ("ent-42", "42 ent"):
        hits = search.run_search(vault, query, search.SearchOptions()).hits
        assert hits[0].id == "c-2501010042" and "names entity ent-42" in hits[0].why
    hits = search.run_search(vault, "ferry of the north sea", search.SearchOptions()).hits
    assert hits[0].id == "c-2501020001" and "names entity north-sea-ferry" in hits[0].why
