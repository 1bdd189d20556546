"""The conflict detector (memvault.distill.conflicts): pure, zh and en, with the negatives it must not flag."""

from __future__ import annotations

import random
import time

from memvault.distill.conflicts import by_card, detect
from memvault.model import Card

_n = [0]


def card(kind="state", title="t", project="shop", status="active", **kw) -> Card:
    _n[0] += 1
    return Card(id=f"c-20261101-{_n[0]:06x}", kind=kind, title=title, project=project, status=status,
                created="2026-11-01T08:00:00Z", **kw)


def state(subject, field, value, **kw) -> Card:
    return card(title=f"{subject} {field}: {value}", subject=subject, field=field, value=value, **kw)


def pairs(cards, **kw):
    return {(frozenset((c.a, c.b)), c.sort) for c in detect(cards, **kw)}


def test_same_state_key_with_another_value_en_and_zh():
    a, b = state("shop db", "engine", "Postgres"), state("Shop DB", "engine", "SQLite")
    c, d = state("购物车", "数据库", "Postgres"), state("购物车", "数据库", "MySQL")
    assert pairs([a, b, c, d]) == {(frozenset((a.id, b.id)), "state"), (frozenset((c.id, d.id)), "state")}
    assert by_card(detect([a, b]))[a.id] == [b.id]


def test_same_subject_and_field_written_differently_on_any_kind():
    a = state("api gateway", "deploy target", "fly.io")
    b = card(kind="fact", title="the gateway runs elsewhere", subject="API-Gateway", field="DeployTarget",
             value="k8s")
    c, d = state("订单服务", "部署目标", "阿里云"), state("订单服务", "部署 目标", "腾讯云")
    assert pairs([a, b, c, d]) == {(frozenset((a.id, b.id)), "restated"), (frozenset((c.id, d.id)), "restated")}


def test_near_duplicates_of_one_project_and_kind_en_and_zh():
    a = card(kind="decision", title="Keep the vault in plain text files")
    b = card(kind="decision", title="Keep the vault in plain-text files.")
    c = card(kind="rule", title="发布前必须运行全部测试")
    d = card(kind="rule", title="发布前必须运行全部的测试。")
    assert pairs([a, b, c, d]) == {(frozenset((a.id, b.id)), "duplicate"), (frozenset((c.id, d.id)), "duplicate")}


def test_negatives_are_not_conflicts():
    same_value = [state("shop db", "engine", "Postgres"), state("Shop DB", "engine", "postgres")]
    other_fields = [state("shop db", "engine", "Postgres"), state("shop db", "port", "5432"),
                    state("小说", "主角", "林舟"), state("小说", "视角", "第一人称")]
    old = state("shop db", "host", "a.example")
    superseded = [old, state("shop db", "host", "b.example", status="superseded"),
                  state("shop db", "host", "c.example", status="retracted")]
    projects = [state("deploy", "day", "Friday", project="shop"), state("deploy", "day", "Monday", project="blog"),
                state("deploy", "day", "Sunday", project=None)]
    swapped = [card(kind="decision", title="Use Postgres for the shop database"),
               card(kind="decision", title="Use SQLite for the shop database"),
               card(kind="decision", title="购物车数据库用简洁格式"), card(kind="decision", title="购物车数据库用详细格式")]
    kinds = [card(kind="fact", title="Keep the vault in plain text files"),
             card(kind="rule", title="Keep the vault in plain text files")]
    states_alike = [card(title="Shop database engine", subject="x", field="a", value="1"),
                    card(title="Shop database engine", subject="y", field="b", value="2")]
    dup_other_project = [card(kind="fact", title="Backups run nightly at two", project="shop"),
                         card(kind="fact", title="Backups run nightly at two", project="blog")]
    for group in (same_value, other_fields, superseded, projects, swapped, kinds, states_alike, dup_other_project):
        assert detect(group) == [], group


def test_project_filter_and_sorted_pairs():
    a, b = state("s", "f", "1", project="shop"), state("s", "f", "2", project="shop")
    c, d = state("s", "f", "1", project="blog"), state("s", "f", "2", project="blog")
    found = detect([d, c, b, a], project="shop")
    assert [(x.a, x.b, x.project) for x in found] == [(min(a.id, b.id), max(a.id, b.id), "shop")]


def test_fast_at_20k_cards_because_candidates_come_from_keys():
    rng = random.Random(14)
    common = [f"word{k}" for k in range(300)]  # shared 4-character prefixes, the worst case for the lookup
    cards = []
    for i in range(20000):
        if i % 3 == 0:
            cards.append(state(f"svc-{i}", "version", f"v{i}"))
        else:
            words = " ".join([rng.choice(common) for _ in range(4)] + [f"x{rng.randrange(10**8)}" for _ in range(2)])
            cards.append(card(kind="fact", title=words.capitalize(), project=("shop", "blog")[i % 2]))
    cards.append(state("svc-0", "version", "v-other"))
    start = time.process_time()  # this process's CPU time: other processes on a loaded machine do not count
    found = detect(cards)
    assert time.process_time() - start < 10  # ~1 s here; all pairs would be 2e8 title comparisons
    assert [(f.sort, f.a) for f in found] == [("state", cards[0].id)]
