"""Search never knows less than the raw turns (issue 20): cards and the turns no card covers come back in one
ranked list by default; a turn a listed card already cites is not repeated; --cards-only gives the cards
alone; a question with one matching word of many gets its best hits, marked weak, instead of nothing."""

from __future__ import annotations

import json

import pytest

from memvault.errors import NoMatch
from memvault.search import service as search


def capture(run, *turns, project="p"):
    lines = []
    for i, (user, assistant) in enumerate(turns):
        lines.append({"role": "user", "content": user, "ts": f"2026-10-0{i + 1}T09:00:00Z", "session": "s"})
        lines.append({"role": "assistant", "content": assistant, "ts": f"2026-10-0{i + 1}T09:00:05Z", "session": "s"})
    run("capture", "--format", "jsonl", "--project", project, input="".join(json.dumps(m) + "\n" for m in lines))


@pytest.fixture
def mixed(run, vault):
    capture(run,
            ("We decided to use Postgres for the orders database.", "Good choice."),
            ("The walnut bread sold out twice at the Saturday market.", "Bake more next week."),
            ("The orders export runs nightly at 2am.", "Noted."))
    run("distill")
    return vault


def hits(vault, query, **kw):
    return search.run_search(vault, query, search.options_from({}, **kw)).hits


def test_cards_and_uncovered_turns_in_one_list(mixed):
    got = hits(mixed, "postgres orders database")
    assert got[0].kind == "decision" and "Postgres" in got[0].title
    # a card then a turn, by rank; the turns listed are ones no card above them cites (each with its source)
    turns = [(i, h) for i, h in enumerate(got) if h.kind == "episode"]
    assert turns and turns[0][0] == 1
    for i, turn in turns:
        assert not any(turn.id in h.sources for h in got[:i])
        assert turn.refs and turn.session == "s"
    every = hits(mixed, "postgres orders database", episodes=False)
    assert {h.id for h in every} <= {h.id for h in got}


def test_a_question_no_card_answers_gets_the_turns(mixed):
    got = hits(mixed, "what sold out at the market")
    assert got[0].kind == "episode" and "walnut bread" in got[0].snippet
    with pytest.raises(NoMatch):
        hits(mixed, "what sold out at the market", episodes=False)  # cards only: no card says it


def test_cards_only_on_the_command_line(run, mixed):
    both = run.json("search", "postgres", "orders")["hits"]
    cards = run.json("search", "--cards-only", "postgres", "orders")["hits"]
    assert cards and "episode" not in {h["kind"] for h in cards}
    assert any(h["kind"] == "episode" for h in both)
    run("search", "--cards-only", "walnut", "bread", code=1)


def test_one_matching_word_of_many_gives_weak_hits_that_say_so(mixed):
    with pytest.raises(NoMatch) as info:  # no answer (exit 1); what came closest travels with it
        hits(mixed, "set up the nightly job queue for alerts")
    got = info.value.result.closest
    assert got and all(h.weak for h in got)
    assert got[0].why[0].startswith("weak match: ")
    assert "nightly" in got[0].snippet
    strong = hits(mixed, "nightly orders export")
    assert strong and not any(h.weak for h in strong)
