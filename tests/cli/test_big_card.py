"""A card far above the size of a memory (issue 38: one 50 MB card made every search take 14-21 s at ~750 MB):
search indexes only its first CARD_LIMIT bytes, so searches stay fast and small; doctor names the card and its
size. Chinese and English words alike."""

from __future__ import annotations

import sqlite3

from test_conflicts_cli import put

from memvault.search.index.prepare import CARD_LIMIT


def test_a_huge_card_is_indexed_up_to_the_limit_and_doctor_reports_it(run, vault):
    put(vault, "c-20261101-big001", kind="fact", title="Lighthouse log 灯塔日志", project="sea",
        body="lamp trimmed, 灯塔 清洁。\n" * (2 * CARD_LIMIT // 30) + "needle past the limit 针\n")
    put(vault, "c-20261101-small1", kind="fact", title="Harbour pilot on duty", project="sea")
    hits = run.json("search", "lamp")["hits"]
    assert hits[0]["id"] == "c-20261101-big001"
    assert run.json("search", "灯塔", "--cards-only")["hits"][0]["id"] == "c-20261101-big001"
    run("search", "needle", code=1)  # past the limit: not indexed
    assert run.json("search", "pilot")["hits"][0]["id"] == "c-20261101-small1"
    with sqlite3.connect(vault / ".memvault/search.sqlite") as db:
        (stored,) = db.execute("SELECT length(body) FROM cards WHERE id = 'c-20261101-big001'").fetchone()
    assert stored <= CARD_LIMIT
    report = run.json("doctor", code=3)
    (big,) = [p for p in report["problems"] if "a card may hold" in p]
    assert big.startswith("cards/2026-11/c-20261101-big001.md: 2.") and "MB" in big
    assert not any("small1" in p for p in report["problems"])
