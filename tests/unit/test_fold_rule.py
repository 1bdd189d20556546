"""The fold rule of `memvault consolidate` (memvault.distill.fold): which old small cards fold together, and the
folded card that lists and supersedes them. Pure functions on Card records."""

from __future__ import annotations

import dataclasses

from memvault.distill import fold
from memvault.model import Card

AT = "2026-12-01T12:00:00Z"  # cutoff with the default 90 days: 2026-09-02
OLD, NEW = "2026-05-10", "2026-11-20"
RULES = fold.FoldRules()


def c(n: int, *, kind="fact", project="shop", entities=("redis",), day=OLD, body="short body", **kw) -> Card:
    return Card(id=f"c-{day.replace('-', '')}-{n:06x}", kind=kind, title=kw.pop("title", f"Redis note {n}"),
                body=body, project=project, entities=entities, created=f"{day}T08:00:00Z", valid_from=day,
                source={"kind": "distill", "episodes": [f"ep-{n}"]}, **kw)


def keys(cards, rules=RULES):
    return [(key, [x.id for x in members]) for key, members in fold.groups(cards, AT, rules)]


def test_four_old_small_cards_of_one_entity_kind_and_project_fold_three_do_not():
    four = [c(i) for i in range(4)]
    assert keys(four) == [(("shop", "fact", "redis"), [x.id for x in four])]
    assert keys(four[:3]) == []
    assert keys(four[:3], dataclasses.replace(RULES, min_cards=3)) != []


def test_age_counts_from_valid_from_against_the_run_clock():
    cards = [c(i) for i in range(3)] + [c(9, day="2026-09-02")]  # exactly at the cutoff: not older
    assert fold.cutoff(AT, RULES) == "2026-09-02" and keys(cards) == []
    assert keys([*cards[:3], c(8, day="2026-09-01")]) != []
    assert keys([c(i, day=NEW) for i in range(6)]) == []
    assert keys([c(i, day=NEW) for i in range(6)], dataclasses.replace(RULES, after_days=5)) != []


def test_other_kind_other_project_other_entity_never_share_a_fold():
    cards = [c(i) for i in range(3)] + [c(10, kind="decision"), c(11, project="blog"), c(12, entities=("pg",))]
    assert keys(cards) == []
    mixed = [c(i) for i in range(4)] + [c(20 + i, project="blog") for i in range(4)] + \
        [c(30 + i, kind="event") for i in range(4)]
    assert [k for k, _ in keys(mixed)] == [("blog", "fact", "redis"), ("shop", "event", "redis"),
                                           ("shop", "fact", "redis")]


def test_a_card_naming_several_entities_joins_the_group_of_the_entity_most_cards_name_once():
    redis = [c(i) for i in range(4)]
    pg = [c(10 + i, entities=("pg",)) for i in range(3)]
    both = c(99, entities=("pg", "redis"))  # names pg first, but redis has more cards: it goes there, once
    got = keys([*redis, *pg, both])
    assert got == [(("shop", "fact", "redis"), sorted([x.id for x in redis] + [both.id]))]
    tie = c(98, entities=("pg", "redis"))
    got = dict(keys([*[c(i) for i in range(3)], *pg, tie]))  # 3 and 3 (+ the card): a tie goes to its first
    assert got == {("shop", "fact", "pg"): sorted([x.id for x in pg] + [tie.id])}


def test_retracted_superseded_state_keys_long_bodies_no_entity_and_unlisted_kinds_never_fold():
    base = [c(i) for i in range(3)]
    for odd in (c(50, status="retracted"), c(51, status="superseded"), c(52, subject="redis", field="port"),
                c(53, body="x" * 281), c(54, entities=()), c(55, kind="state"), c(56, kind="synopsis"),
                c(57, kind="thread")):
        assert keys([*base, odd]) == [], odd
    assert keys([*base, c(58, body="x" * 280)]) != []  # fold_max_chars is inclusive


def test_an_already_folded_card_is_not_folded_again():
    made = fold.plan([c(i) for i in range(4)], AT, RULES, {"redis": "Redis"})
    [folded] = made.folds.values()
    after = fold.apply([c(i) for i in range(4)], made)
    assert keys(after) == []
    # Even with three new old cards next to it, the folded card does not count towards a group.
    assert keys([*after, c(40), c(41), c(42)]) == []


def test_a_big_group_folds_oldest_first_in_near_equal_chunks():
    days = [f"2026-0{1 + i % 8}-{10 + i:02d}" for i in range(17)]
    cards = [c(i, day=d) for i, d in enumerate(days)]
    chunks = keys(cards)
    assert [len(m) for _k, m in chunks] == [6, 6, 5]
    order = sorted(cards, key=lambda x: (x.valid_from, x.id))
    assert [i for _k, m in chunks for i in m] == [x.id for x in order]


def test_the_folded_card_lists_supersedes_and_unions_its_cards():
    cards = [c(0, day="2026-02-01", title="Redis is the session store", body="Sessions live in redis.",
               tags=("infra",)),
             c(1, day="2026-03-01", entities=("redis", "pg"), title="Redis backups run nightly",
               body="A long body " * 10),
             c(2, day="2026-04-01"), c(3, day="2026-01-15")]
    made = fold.plan(cards, AT, RULES, {"redis": "Redis"})
    [card] = made.folds.values()
    assert card.kind == "fact" and card.project == "shop" and card.status == "active"
    assert card.title == "Redis: 4 fact cards, 2026-01-15 to 2026-04-01"
    assert card.supersedes == tuple(x.id for x in sorted(cards, key=lambda x: x.valid_from))
    assert card.entities == ("redis", "pg") and set(card.episodes) == {"ep-0", "ep-1", "ep-2", "ep-3"}
    assert card.valid_from == "2026-01-15" and card.valid_to is None
    assert card.source["kind"] == "fold" and card.source["from"] == "2026-01-15" and card.source["cards"] == 4
    assert card.tags == ("infra", "folded")
    lines = card.body.splitlines()
    assert lines[1] == "- 2026-02-01 Redis is the session store: Sessions live in redis. [c-20260201-000000]"
    assert lines[2] == "- 2026-03-01 Redis backups run nightly [c-20260301-000001]"  # a long body stays out
    for x in cards:
        old = made.retired[x.id]
        assert old.status == "superseded" and old.superseded_by == (card.id,) and old.valid_to is None
        assert dataclasses.replace(old, status="active", superseded_by=()) == x
    assert fold.plan(cards, AT, RULES, {"redis": "Redis"}).folds.keys() == made.folds.keys()  # deterministic


def test_chinese_cards_get_a_chinese_title_and_lines():
    cards = [c(i, title=f"缓存服务第{i}条记录", body="每晚备份。", entities=("缓存",)) for i in range(4)]
    [card] = fold.plan(cards, AT, RULES, {"缓存": "缓存服务"}).folds.values()
    assert card.title == "缓存服务：4 条事实（2026-05-10 至 2026-05-10）"
    assert card.body.splitlines()[0] == "- 2026-05-10 缓存服务第0条记录：每晚备份。 [c-20260510-000000]"


def test_rules_come_from_the_consolidate_settings():
    rules = fold.FoldRules.from_config({"fold_after_days": 30, "fold_min_cards": 2, "fold_kinds": ["event"]})
    assert (rules.after_days, rules.min_cards, rules.kinds, rules.max_cards) == (30, 2, ("event",), 8)
    assert keys([c(0, kind="event"), c(1, kind="event"), c(2), c(3)], rules)[0][0] == ("shop", "event", "redis")
