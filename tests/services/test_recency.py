"""The recency prior (search.recency_half_life_days, issue 14 item 5): on a question that says "now", a hit a
half-life older than the newest hit counts half; other questions, and a half-life of 0, leave scores alone."""

from __future__ import annotations

import pytest

from memvault.search import service as search
from memvault.search.order import recency
from memvault.search.results import Hit

from search_helpers import card, write


def hit(cid: str, score: float, world: str) -> Hit:
    return Hit(id=cid, kind="fact", title="t", project=None, status="active", score=score, snippet="", why=(),
               world=world)


def test_the_decay_counts_back_from_the_newest_hit():
    hits = [hit("a", 1.0, "2026-01-01"), hit("b", 1.0, "2025-01-01"), hit("c", 1.0, "2024-01-02"), hit("d", 1.0, "")]
    got = {h.id: h for h in recency(hits, 365)}
    assert got["a"].score == 1.0 and got["a"].why == ()
    assert got["b"].score == pytest.approx(0.5) and got["b"].why == ("recency prior x0.50",)
    assert got["c"].score == pytest.approx(0.25)
    assert got["d"].score == 1.0  # no date: unchanged
    assert recency(hits, 0) == hits


@pytest.fixture
def two(vault):
    # The 2023 card answers more of the question's words; the 2026 one is the newer word on it.
    write(vault, card("c-20230105-aaaa01", "Redis cache plan for sessions", "redis cache plan, sessions"),
          card("c-20260105-aaaa02", "Redis plan", "the plan for redis"))
    return vault


def ids(root, query, **kw):
    return [h.id for h in search.run_search(root, query, search.options_from({}, **kw)).hits]


def test_a_question_about_now_prefers_the_newer_card(two):
    assert ids(two, "redis cache plan now")[0] == "c-20260105-aaaa02"
    assert ids(two, "现在 redis cache plan")[0] == "c-20260105-aaaa02"
    assert ids(two, "redis cache plan now", recency_half_life_days=0)[0] == "c-20230105-aaaa01"


def test_other_questions_are_not_touched(two):
    assert ids(two, "redis cache plan")[0] == "c-20230105-aaaa01"
    assert ids(two, "what was the redis cache plan before")[0] == "c-20230105-aaaa01"


def test_the_setting_comes_from_memvault_yaml(two, run):
    text = (two / "memvault.yaml").read_text(encoding="utf-8")
    assert "recency_half_life_days: 365" in text
    first = run.json("search", "redis cache plan now")["hits"]
    assert first[0]["id"] == "c-20260105-aaaa02" and "world" not in first[0]
    assert any(w.startswith("recency prior") for w in first[1]["why"])
    (two / "memvault.yaml").write_text(text.replace("recency_half_life_days: 365", "recency_half_life_days: 0"),
                                       encoding="utf-8")
    assert run.json("search", "redis cache plan now")["hits"][0]["id"] == "c-20230105-aaaa01"
    bad = text.replace("recency_half_life_days: 365", "recency_half_life_days: -1")
    (two / "memvault.yaml").write_text(bad, encoding="utf-8")
    assert "recency_half_life_days" in run("search", "redis", code=2).stderr
