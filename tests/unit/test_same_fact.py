"""The same fact told again (issue 32, "one card per fact"): merge.fact_overlap / find_same_fact / retell.

The threshold (merge.FACT_OVERLAP = 0.75) was measured on LoCoMo's tuning half (eval/facts.py --convs 0,1,2,
docs/distill.md); the pairs here are written for this test, in English and Chinese."""

from __future__ import annotations

import pytest

from memvault.distill.merge import FACT_OVERLAP, fact_overlap, find_same_fact, retell
from memvault.model import Card

from tests.unit.test_cards import UNRELATED

SAME = [
    ("Mel volunteers at the animal shelter every weekend, walking the dogs",
     "Mel is still volunteering at the animal shelter on weekends and walking the dogs there"),
    ("Mel lost Mel's job at the bakery in March 2023", "Since Mel lost Mel's job at the bakery, things have been hard"),
    ("Since our last chat, Mel has been looking into nursing or hospital work more",
     "Mel is still looking into nursing and hospital jobs"),
    ("Mel每个周末都去动物收容所做志愿者", "这个月Mel还是在动物收容所做志愿者，周末去"),
    ("Mel每周三晚上去社区中心上陶艺课", "Mel最近还是每周三晚上在社区中心上陶艺课，学拉坯"),
]
DIFFERENT = [
    # another number, date or name
    ("Mel adopted a dog named Coco and walks her every morning",
     "Mel adopted a cat named Luna and walks her every morning"),
    ("Mel ran a charity race for the animal shelter on 20 May 2023",
     "Mel ran a charity race for the animal shelter on 17 June 2023"),
    ("Mel在公司3号楼的研发部上班", "Mel在公司5号楼的研发部上班"),
    ("Mel 2023年5月17日去南京看了大熊猫", "Mel 2023年8月2日去南京看了大熊猫"),
    # one thing swapped for another in the same frame
    ("Mel signed up the kids for a pottery class at the community center",
     "Mel signed up the kids for a painting class at the community center"),
    ("Mel给孩子报了社区中心的陶艺课", "Mel给孩子报了社区中心的绘画课"),
    # one denies what the other says
    ("Mel eats meat at every family dinner", "Mel doesn't eat meat at family dinners"),
    ("Mel周末去健身房锻炼身体", "Mel周末不去健身房锻炼身体"),
    # too little in common
    ("Mel bought a red bike", "Mel sold a red bike"),
    ("Mel loves hiking with the kids", "Mel loves painting sunsets by the lake"),
]


@pytest.mark.parametrize("a,b", SAME)
def test_a_fact_told_again_in_other_words_is_the_same(a, b):
    assert fact_overlap(a, b, "mel") >= FACT_OVERLAP, (a, b, fact_overlap(a, b, "mel"))


@pytest.mark.parametrize("a,b", DIFFERENT + UNRELATED)
def test_different_facts_that_share_words_stay_apart(a, b):
    assert fact_overlap(a, b, "mel") < FACT_OVERLAP, (a, b, fact_overlap(a, b, "mel"))


def card(cid: str, title: str, body: str = "", **kw) -> Card:
    base = dict(id=cid, kind="event", title=title, body=body or title + ".", project="friends",
                entities=("mel",), created="2026-04-01T08:00:00Z", valid_from="2023-05-25",
                confidence="extracted", source={"kind": "distill", "run": "r", "episodes": [f"ep-{cid}"]})
    base.update(kw)
    return Card(**base)


def test_find_same_fact_only_for_the_same_speaker_kind_and_project_and_never_a_state():
    old = card("c-1", SAME[0][0])
    new = card("c-2", SAME[0][1])
    assert find_same_fact(new, [old]) == old
    assert find_same_fact(card("c-3", SAME[0][1], entities=("caroline",)), [old]) is None
    assert find_same_fact(card("c-4", SAME[0][1], kind="fact"), [old]) is None
    assert find_same_fact(card("c-5", SAME[0][1], project="other"), [old]) is None
    assert find_same_fact(card("c-6", SAME[0][1], kind="state"), [card("c-7", SAME[0][0], kind="state")]) is None
    assert find_same_fact(card("c-8", SAME[0][1], supersedes=("c-1",)), [old]) is None
    assert find_same_fact(new, [card("c-9", SAME[0][0], status="superseded")]) is None


def test_retell_cites_both_tellings_and_keeps_what_each_says():
    old = card("c-1", "Mel lost Mel's job at the bakery", "Mel lost Mel's job at the bakery.\n\n(Caroline asked: news?)")
    new = card("c-2", "Mel lost Mel's job at the bakery in March 2023",
               "Since Mel lost Mel's job at the bakery in March 2023, Mel bakes cakes for friends.",
               valid_from="2023-03-01")
    merged = retell(old, new)
    assert merged.id == "c-1" and merged.episodes == ("ep-c-1", "ep-c-2")
    assert merged.title == new.title  # it adds a date
    assert merged.body.startswith(old.body) and merged.body.endswith("Mel bakes cakes for friends.")
    assert merged.valid_from == "2023-03-01"
    # told a third time with nothing new: the sources grow, the body does not
    again = retell(merged, card("c-3", "Mel lost Mel's job at the bakery"))
    assert again.body == merged.body and again.episodes == ("ep-c-1", "ep-c-2", "ep-c-3")
    # the body never grows past the limit
    assert retell(old, new, limit=len(old.body) + 10).body == old.body
