"""eval/facts.py, the gold-fact eval: the matching rule (cites an evidence turn and carries at least half of the
fact's content words, stemmed, speakers' names and stop words left out) and the figures it derives, on synthetic
facts in LoCoMo's shape (the benchmark itself is not in the repository)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "eval"))

import facts  # noqa: E402

FACTS = [
    {"text": "Ana attended a pottery class and found the teacher inspiring.", "evidence": ["D1:1"]},
    {"text": "Ben adopted a shelter dog named Rex.", "evidence": ["D1:2"]},
]


def test_words_drop_names_and_stop_words_and_stem():
    words = facts.Words({"Ana", "Ben"})
    assert words("Ana attended the classes") == ["attend", "class"]


def test_a_card_holds_a_fact_only_with_the_turn_and_half_its_words():
    words = facts.Words({"Ana", "Ben"})
    cards = [
        {"text": "Ana attends pottery classes; the teacher inspires her", "turns": {"D1:1"}},  # holds fact 0
        {"text": "Ana attends pottery classes; the teacher inspires her", "turns": {"D1:2"}},  # wrong turn
        {"text": "Ben adopted something", "turns": {"D1:2"}},  # 1 of 4 content words: not half
        {"text": "Ben: Rex the shelter dog, adopted last week", "turns": {"D1:2", "D1:3"}},  # holds fact 1
    ]
    got = facts.score(cards, FACTS, words)
    assert [c["holds"] for c in cards] == [True, False, False, True]
    assert got["held"] == 2 and got["holding"] == 2
    assert got["recall"] == 1.0 and got["precision"] == 0.5
    assert abs(got["f1"] - 2 / 3) < 1e-9 and got["cards_per_fact"] == 2.0


def test_copied_sentences_are_counted():
    words = facts.Words({"Ana", "Ben"})
    turn = {"D1:2": "Ben: I adopted a shelter dog named Rex yesterday!"}
    assert facts.copied({"title": "Ben: I adopted a shelter dog named Rex yesterday", "turns": {"D1:2"}}, turn, words)
    assert not facts.copied({"title": "Ben adopted Rex, a shelter dog, on 7 May 2023", "turns": {"D1:2"}}, turn,
                            words)
