"""The offline engine reads people's lives (issue 20): events, plans, habits, relationships, likes and feelings
become cards; remarks, questions, advice, thanks and greetings never do. English and Chinese."""

from __future__ import annotations

import pytest

from memvault.distill.offline.dates import when
from memvault.distill.offline.entities import entities_of
from memvault.distill.offline.extract import statements


def told(text: str) -> list[tuple[str, str]]:
    return [(s.kind, s.text) for s in statements(text)]


@pytest.mark.parametrize("text, kind", [
    ("I ran a charity race for mental health last Saturday.", "event"),
    ("Yesterday I adopted a rescue dog, his name is Biscuit.", "event"),
    ("I just started a new job at the library!", "event"),
    ("We're going camping next month.", "event"),
    ("I'm planning a trip to Lisbon in May.", "event"),
    ("I usually run every morning before work.", "preference"),
    ("I love painting landscapes, it relaxes me.", "preference"),
    ("My sister lives in Denver with her two kids.", "fact"),
    ("I'm a loan officer at Harbor Bank.", "fact"),
    ("I felt so proud after my first pottery class.", "fact"),
    ("Lena flew back to Denver last Sunday.", "event"),
    ("上周三我去南京看了大熊猫。", "event"),
    ("下个月准备去菲律宾潜水。", "event"),
    ("我每周二晚上打羽毛球。", "preference"),
    ("我特别喜欢吃抹茶味的点心。", "preference"),
    ("我老公在一家医院当护士。", "fact"),
    ("上个月在三亚考到了 OW 证！", "event"),
])
def test_a_life_told_makes_a_card(text, kind):
    got = told(text)
    assert [k for k, _ in got] == [kind], got


@pytest.mark.parametrize("text", [
    "That must be so much fun!",
    "You'd be a great counselor!",
    "I'm so proud of you!",
    "I totally agree, family is everything.",
    "Thanks, Mel! That's really sweet.",
    "You should try yoga, it helps with stress.",
    "How long have you been married?",
    "I knew you'd be a great teacher!",
    "Aw, you must miss her already.",
    "I'm always here to support you.",
    "My mom always says a dog picks you, not the other way around.",
    "Maybe I'll take up pottery someday.",
    "We'll make it through this, hang in there.",
    "Hey Mel! Good to see you!",
    "I loved it!",
    "时间过得真快啊！",
    "辛苦了，人民教师！",
    "你一定会是个好老师的。",
    "没问题，包在我身上！",
    "谢谢你，真的很感动。",
    "我老婆说下个月想去青岛看海，你去过吗？",
    "剩下的下周再定吧。",
])
def test_remarks_questions_advice_and_thanks_make_nothing(text):
    assert told(text) == []


def test_a_hedge_or_a_question_in_one_clause_keeps_what_another_states():
    assert told("Quick note, I adopted a kitten yesterday, so I might be slow to reply lol") == [
        ("event", "I adopted a kitten yesterday")]
    assert [k for k, _ in told("我对花生过敏，中午点外卖老踩雷，有什么办法吗？")] == ["preference"]


def test_a_shared_photo_is_what_it_shows():
    (st,) = statements("[shares a photo of a painting of a sunset over a lake]")
    assert st.kind == "event"


def test_no_rule_from_a_guess_or_a_remark_but_rules_stay_rules():
    assert told("That must have been awesome") == []
    assert told("Never saw this coming") == []
    assert told("At least the weather was nice.") == []
    assert [k for k, _ in told("You must never log the user's auth token.")] == ["rule"]
    assert [k for k, _ in told("PRs must have at least 2 reviewers.")] == ["rule"]


@pytest.mark.parametrize("text, at, future, expected", [
    ("I ran a race last Saturday", "2023-05-25T13:00:00Z", False, "2023-05-20"),  # a Thursday
    ("we went yesterday", "2023-05-25T13:00:00Z", False, "2023-05-24"),
    ("two weeks ago I adopted a cat", "2023-05-25T13:00:00Z", False, "2023-05-11"),
    ("last week", "2023-05-25T13:00:00Z", False, "2023-05-15"),  # the Monday of that week
    ("going camping next month", "2023-05-25T13:00:00Z", True, "2023-06-01"),
    ("the show is on Saturday", "2023-05-25T13:00:00Z", True, "2023-05-27"),
    ("we met on Saturday", "2023-05-25T13:00:00Z", False, "2023-05-20"),
    ("classes start April 4th", "2026-03-24T10:00:00Z", True, "2026-04-04"),
    ("on 7 May 2023", "2024-01-01T00:00:00Z", False, "2023-05-07"),
    ("上周三我去了", "2023-05-25T13:00:00Z", False, "2023-05-17"),
    ("下周三飞东京", "2023-05-25T13:00:00Z", True, "2023-05-31"),
    ("上个月分手了", "2023-05-25T13:00:00Z", False, "2023-04-01"),
    ("九月上大班", "2023-05-25T13:00:00Z", True, "2023-09-01"),
    ("3天前", "2023-05-25T13:00:00Z", False, "2023-05-22"),
    ("I may go there", "2023-05-25T13:00:00Z", False, None),
    ("no date at all", "2023-05-25T13:00:00Z", False, None),
])
def test_relative_dates_resolve_against_the_turns_day(text, at, future, expected):
    assert when(text, at, future=future) == expected


@pytest.mark.parametrize("text, expected", [
    ("Agreed, we go with Postgres 16.", ("Postgres",)),  # a version number stays out of the name
    ("Decision: RQ + Redis for alerts", ("RQ", "Redis")),
    ("Remembering those days makes me smile", ()),  # sentence-opening words are no names
    ("Thanks, Caroline! I went to the LGBTQ support group", ("LGBTQ",)),  # a name said to someone
    ("Last Fri I took my kids to a pottery workshop", ()),
    ("I told Caroline about it", ("Caroline",)),
    ("Postgres is our store", ("Postgres",)),  # a known name may open a sentence
    ("I visited Paris with Anna last May.", ("Paris", "Anna")),
])
def test_entities_are_things_named_in_the_text(text, expected):
    assert entities_of(text) == expected


@pytest.mark.parametrize("text,future,day", [
    ("I booked tickets for the show this Saturday", False, "2026-03-14"),  # said on Tuesday 10 March: ahead
    ("I went hiking this Monday", False, "2026-03-09"),  # this week's Monday, already past
    ("I'll call her this Monday", True, "2026-03-16"),  # a plan for a day of this week that has passed
    ("We met last Saturday", False, "2026-03-07"),
])
def test_this_weekday_is_the_day_of_this_week(text, future, day):
    """'this Saturday' names the Saturday of the week the turn was said in, whatever the verb's tense: a turn of
    a Tuesday that booked tickets 'for this Saturday' is not about the Saturday before."""
    assert when(text, "2026-03-10T10:00:00Z", future=future) == day


@pytest.mark.parametrize("text,remark", [
    ("I hear that, taking your mind off something like that is very challenging", True),  # agreement
    ("I hear you, it's a lot", True),
    ("I hear that the bakery on Elm Street closed", False),  # news the speaker heard, not agreement
])
def test_i_hear_that_agrees_only_when_nothing_follows_it(text, remark):
    from memvault.distill.offline.personal import is_remark

    assert is_remark(text, False) is remark
