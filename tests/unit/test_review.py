"""distill/review.py's reply parsing (issue 33): a review keeps drafts by id, corrects or adds compact rows, and
what is harmless is repaired, never a rejected batch."""

from __future__ import annotations

import pytest

from memvault.distill import review
from memvault.distill.proposals import InvalidOutput
from memvault.errors import UsageError

KINDS = ("event", "fact", "preference", "decision", "rule", "state")


def parse(data, n_drafts=3, n_episodes=2):
    repairs: dict[str, int] = {}
    return review.parse(data, n_drafts=n_drafts, n_episodes=n_episodes, kinds=KINDS, repairs=repairs), repairs


def test_labels_drop_chat_set_kinds_and_keep_what_is_unlabelled():
    items, repairs = parse({"c0": "event", "c1": "chat", "c2": ["fact", "Ana lives in Oslo"], "c9": "fact",
                            "add": [["e1", "preference", "Tom loves jazz"]]}, n_drafts=4)
    keeps = [i for i in items if i[0] == "keep"]
    assert keeps == [("keep", 0, "event", None), ("keep", 2, "fact", "Ana lives in Oslo"), ("keep", 3, None, None)]
    assert [i[1].title for i in items if i[0] == "add"] == ["Tom loves jazz"]
    assert repairs == {"target_dropped": 1, "unlabelled": 1}
    # a label that is no kind keeps the draft as it was
    assert parse({"c0": "keep", "c1": "Drop", "c2": "habit"})[0] == [("keep", 0, None, None), ("keep", 2, None, None)]


def test_a_keep_list_is_read_too():
    items, repairs = parse({"keep": ["c0", ["c2", "fact", "Ana lives in Oslo"]],
                            "add": [["e1", "event", "Tom starts at Deloitte next month"]]})
    assert items[:2] == [("keep", 0, None, None), ("keep", 2, "fact", "Ana lives in Oslo")]
    assert items[2][0] == "add" and items[2][1].title == "Tom starts at Deloitte next month"
    assert items[2][1].episodes == (1,) and items[2][1].statement is True
    assert repairs == {}


def test_harmless_mistakes_are_repaired_and_counted():
    # ids as numbers or "C1", an id out of range, one twice, a bad added row, a kind the vault does not know
    items, repairs = parse({"keep": [1, "C0", "c7", "c0"], "add": ["oops", ["e0", "hobby", "Maya knits"]],
                            "why": "x"})
    assert [(i[0], i[1]) for i in items[:2]] == [("keep", 1), ("keep", 0)]
    assert items[2][1].kind == "fact"
    assert repairs["target_dropped"] == 2 and repairs["add_dropped"] == 1 and repairs["keys_dropped"] == 1
    assert repairs["kind_fixed"] == 1


def test_a_bare_list_is_a_keep_list_and_the_write_format_is_additions():
    assert parse(["c1"])[0] == [("keep", 1, None, None)]
    items, _ = parse({"cards": [["e0", "fact", "Maya has a dog named Biscuit"]]})
    assert [i[0] for i in items] == ["add"]


@pytest.mark.parametrize("data", [{"add": []}, {}, {"keep": "c0"}, "c0", None, {"cards": "x"}])
def test_a_reply_that_judges_no_draft_is_invalid_with_a_fix_naming_the_format(data):
    with pytest.raises(InvalidOutput) as exc:
        parse(data)
    assert '{"keep": ["c0", ...]' in exc.value.fix


def test_with_no_draft_only_additions_are_asked_for():
    assert parse({"add": []}, n_drafts=0)[0] == []
    assert parse({}, n_drafts=0)[0] == []


def test_a_reply_cut_in_its_additions_keeps_its_labels_or_keep_list():
    repairs: dict[str, int] = {}
    text = '{"c0": "event", "c1": "chat", "c2": "fact", "add": [["e0", "event", "Maya went to Ma'
    assert review.salvage(text, 3, KINDS, repairs) == [("keep", 0, "event", None), ("keep", 2, "fact", None)]
    assert repairs == {"add_cut": 1}
    text = '{"keep": ["c0", ["c1", "fact", "Ana lives in Oslo"]], "add": [["e0", "event", "Maya went to Ma'
    assert review.salvage(text, 3, KINDS, {}) == [("keep", 0, None, None), ("keep", 1, "fact", "Ana lives in Oslo")]
    assert review.salvage('{"keep": ["c0", "c', 3, KINDS, {}) is None  # cut before its additions: nothing to save
    assert review.salvage('{"c0": "event", "c1": "ch', 3, KINDS, {}) is None


def test_the_protocol_setting_is_checked():
    assert review.protocol({}) == "review"
    assert review.protocol({"llm_protocol": " Write "}) == "write"
    with pytest.raises(UsageError, match="distill.llm_protocol"):
        review.protocol({"llm_protocol": "guess"})
