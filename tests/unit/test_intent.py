"""Intent markers (search/intent.py): the same answers as the plain regexes they stand for, which are compiled only
when a text holds a marker."""

from __future__ import annotations

import re

import pytest

from memvault.search import intent

HISTORY = re.compile(r"\b(?:" + "|".join(intent._HISTORY_EN) + r")\b|" + "|".join(intent._HISTORY_ZH))
CURRENT = re.compile(r"\b(?:" + "|".join(intent._CURRENT_EN) + r")\b|" + "|".join(intent._CURRENT_ZH))

TEXTS = [
    "", "postgres backup", "what did we use before postgres", "what do we use now", "beforehand", "golden oldies",
    "the old and the new", "at first we used sqlite", "used to", "nowhere", "is it still on", "之前用的数据库",
    "现在的数据库", "原来 现在", "at the moment 以前", "first-class", "momentum", "Before caps", "once, twice",
    "these days vs back then", "一开始", "旧的配置", "还在用吗", "latest/current", "prior_art",
]


@pytest.mark.parametrize("text", TEXTS)
def test_markers_answer_as_the_regexes(text):
    history, current = bool(HISTORY.search(text)), bool(CURRENT.search(text))
    assert intent.split_intent(text) == ("history" if history else "current",
                                         CURRENT.sub(" ", HISTORY.sub(" ", text)))
    assert bool(intent.asks_now(text)) == (current and not history)


def test_a_question_without_markers_compiles_nothing():
    fresh = intent._Markers(("before",), ("之前",))
    assert fresh.search("postgres backup 数据库") is False and fresh._rx is None
    assert fresh.sub(" ", "postgres backup") == "postgres backup" and fresh._rx is None
    assert fresh.search("before 之前") is True and fresh._rx is not None
    assert fresh.search("beforehand") is False  # a substring, not the word: the regex decides
