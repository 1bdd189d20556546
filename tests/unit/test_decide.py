"""Issue 22, pure parts: what the LLM engine repairs in a reply, and how code decides what a proposed fact does
(distill/decide.py, merge.find_holder), in English and Chinese. The HTTP and process side is in
tests/e2e/test_distill_small_model.py."""

from __future__ import annotations

import pytest

from memvault.distill.decide import decide, grounded
from memvault.distill.llm_engine import load_prompt
from memvault.distill.llm.tokens import estimate_tokens
from memvault.distill.merge import find_holder
from memvault.distill.proposals import InvalidOutput, validate_output
from memvault.model import Card, Episode

KINDS = ("decision", "fact", "preference", "question", "event", "state", "rule", "thread", "synopsis", "reflection")


def card(cid: str, title: str, kind: str = "fact", project: str | None = "p", **kw) -> Card:
    return Card(id=cid, kind=kind, title=title, body="", project=project, created=kw.pop("created", "2026-11-01"),
                valid_from=kw.pop("valid_from", "2026-11-01"), **kw)


def ep(user: str, i: int = 0) -> Episode:
    return Episode(id=f"ep-{i}", at="2026-11-02T08:00:00Z", project="p", session="s", turn=i + 1, user=user,
                   assistant="ok")


def facts(*items: dict, n_episodes: int = 1, n_related: int = 0, repairs: dict | None = None):
    return validate_output({"cards": list(items)}, n_episodes=n_episodes, n_related=n_related, kinds=KINDS,
                           repairs=repairs)


def test_the_facts_protocol_needs_no_title_action_or_body():
    repairs: dict = {}
    [p] = facts({"episode": "e0", "quote": "就用 Postgres", "kind": "decision", "subject": "数据库",
                 "value": "Postgres", "old": None, "entities": ["Postgres"]}, repairs=repairs)
    assert (p.action, p.title, p.episodes, p.quote, p.old) == ("create", "数据库: Postgres", (0,), "就用 Postgres", None)
    assert not any(repairs.values())  # the protocol itself is not a mistake


@pytest.mark.parametrize("item,repair,action", [
    ({"action": "create", "target": 3}, "target_dropped", "create"),
    ({"action": "update", "target": 0}, "update_to_create", "create"),  # there are no cards
    ({"action": "supersede", "target": "7"}, "update_to_create", "create"),
    ({"action": "create", "confidence_level": "high"}, "keys_dropped", "create"),
])
def test_harmless_mistakes_are_repaired_and_counted(item, repair, action):
    base = {"kind": "fact", "title": "NAS OS: Unraid", "episodes": ["e0"]}
    repairs: dict = {}
    [p] = facts({**base, **item}, repairs=repairs)
    assert p.action == action and p.target is None and repairs == {repair: 1}
    with pytest.raises(InvalidOutput):  # without a repairs dict (the offline engine) the schema is strict
        facts({**base, **item})


def test_noop_of_nothing_is_dropped_and_a_state_without_field_gets_one():
    repairs: dict = {}
    out = facts({"action": "noop", "target": 2, "episodes": ["e0"]},
                {"kind": "state", "subject": "宽带", "value": "联通 1000M", "old": "电信 500M", "quote": "换成联通"},
                repairs=repairs)
    assert [p.field for p in out] == ["current"] and repairs == {"noop_dropped": 1}


def test_a_rejection_names_the_fix():
    with pytest.raises(InvalidOutput) as exc:
        facts({"kind": "gossip", "title": "x"})  # strict (the offline engine's output)
    assert "kind" in str(exc.value) and exc.value.fix.startswith("Use a kind from: decision")


def test_a_kind_the_vault_does_not_know_is_repaired_to_fact_not_rejected():
    repairs: dict = {}
    [p] = facts({"kind": "gossip", "title": "x"}, repairs=repairs)
    assert p.kind == "fact" and repairs == {"kind_fixed": 1}


@pytest.mark.parametrize("quote,user,ok", [
    ("we moved the NAS to Unraid", "Quick update: We moved the NAS to Unraid, finally.", True),
    ("moved the NAS to unraid", "We moved the NAS   to Unraid!", True),  # case, spaces, punctuation aside
    ("不用 SQLite 了，改用 Postgres", "算了，不用SQLite了，改用 Postgres 吧", True),
    ("I'd use Postgres 16", "Which database should I use?", False),
    ("以后都用中文回答", "你觉得用中文好吗", False),
])
def test_a_quote_must_be_the_users_words(quote, user, ok):
    assert grounded(quote, user) is ok


def test_find_holder_prefers_the_same_subject_then_the_newest():
    cards = [card("c1", "NAS OS: TrueNAS Scale", created="2026-10-01", valid_from="2026-10-01"),
             card("c2", "Backup target: TrueNAS Scale box", created="2026-10-05", valid_from="2026-10-05"),
             card("c3", "NAS OS: TrueNAS Scale", kind="state", subject="NAS OS", field="current",
                  value="TrueNAS Scale", created="2026-09-01", valid_from="2026-09-01"),
             card("c4", "NAS OS: TrueNAS Scale", project="other")]
    assert find_holder("NAS OS", "TrueNAS Scale", cards, "p").id == "c3"
    assert find_holder(None, "TrueNAS Scale", cards[:2], "p").id == "c2"
    assert find_holder("宽带", "电信 500M", [card("z", "宽带: 电信 500M")], "p").id == "z"
    assert find_holder("NAS OS", "Synology", cards, "p") is None


def test_decide_links_a_change_drops_what_the_user_did_not_say_and_keeps_updates_honest():
    old = card("c1", "数据库: SQLite", kind="decision")
    router = card("c2", "NAS OS: TrueNAS Scale")
    batch = [ep("不用 SQLite 了，改用 Postgres。要不要用 Redis？", 0), ep("The NAS has 4 bays", 1)]
    repairs: dict = {}
    proposals = facts(
        {"episode": "e0", "quote": "不用 SQLite 了，改用 Postgres", "kind": "decision", "subject": "数据库",
         "value": "Postgres", "old": "SQLite"},
        {"episode": "e0", "quote": "要不要用 Redis？", "kind": "decision", "subject": "缓存", "value": "Redis"},
        {"episode": "e1", "quote": "Redis is a good cache", "kind": "fact", "subject": "cache", "value": "Redis"},
        {"action": "update", "target": 0, "kind": "fact", "title": "NAS bays: 4", "episodes": ["e1"]},
        {"action": "update", "target": 0, "kind": "fact", "title": "NAS OS: TrueNAS Scale 24.04",
         "episodes": ["e1"]},
        n_episodes=2, n_related=1, repairs=repairs)
    out, related = decide(proposals, [router], [old, router], batch, repairs)
    change, new_fact, reworded = out
    assert (change.action, change.kind, change.subject, change.field) == ("supersede", "state", "数据库", "current")
    assert related[change.target] is old
    assert (new_fact.action, new_fact.target, new_fact.title) == ("create", None, "NAS bays: 4")
    assert (reworded.action, related[reworded.target]) == ("update", router)  # the same fact, reworded
    assert repairs == {"question_dropped": 1, "ungrounded_dropped": 1, "update_as_new_fact": 1}


def test_the_prompt_is_short_and_shows_a_chinese_and_an_english_example():
    system, user = load_prompt()
    assert estimate_tokens(system) + estimate_tokens(user) < 900
    assert "改用 ClickHouse" in system and "always answer in Markdown tables" in system
    # Every limit validation enforces is stated (a reply over one is cut, not rejected, but a model told does
    # better): the statement's length, the state values' length, cards per turn.
    flat = " ".join(system.split())
    assert "at most 160 characters" in flat and "at most 80 characters" in flat and "At most 4 cards" in flat
    assert "ASSISTANT:" not in system  # an AI's line is never an example: only a named person's side
    assert "{{episodes}}" in user and "{{fence}}" in user


def test_a_quote_cut_out_of_a_question_or_a_what_if_is_still_dropped():
    batch = [ep("what if we used Proxmox on the mini pc instead of plain debian? just thinking out loud"),
             ep("maybe we should switch the backups to restic at some point, not sure yet", 1),
             ep("算了，不用 SQLite 了，改用 Postgres。要不要加 Redis？", 2)]
    repairs: dict = {}
    proposals = facts(
        {"episode": "e0", "quote": "Proxmox on the mini pc instead of plain debian", "kind": "decision",
         "subject": "hypervisor", "value": "Proxmox"},
        {"episode": "e1", "quote": "switch the backups to restic", "kind": "Decisions", "subject": "backups",
         "value": "restic"},
        {"episode": "e2", "quote": "改用 Postgres", "kind": "decision", "subject": "数据库", "value": "Postgres"},
        n_episodes=3, repairs=repairs)
    out, _ = decide(proposals, [], [], batch, repairs)
    assert [p.value for p in out] == ["Postgres"]
    assert repairs == {"kind_fixed": 1, "question_dropped": 2}


@pytest.mark.parametrize("user,first,second,kept", [
    # a reason after a choice joins the choice's card (labelling rule 7)
    ("就用 Playwright 吧，京东的页面大部分是 JS 渲染的。",
     {"quote": "就用 Playwright 吧", "kind": "decision", "subject": "爬虫工具", "value": "Playwright"},
     {"quote": "京东的页面大部分是 JS 渲染的", "kind": "fact", "subject": "页面", "value": "JS 渲染"}, 1),
    ("We switched from Redux to Zustand, Redux was too much boilerplate.",
     {"quote": "switched from Redux to Zustand", "kind": "state", "subject": "state", "value": "Zustand",
      "old": "Redux"},
     {"quote": "Redux was too much boilerplate", "kind": "rule", "subject": "Redux", "value": "boilerplate"}, 1),
    # two statements of one kind in a sentence, or in two sentences, stay two cards
    ("请求间隔必须大于 3 秒，禁止并发爬同一个站点。",
     {"quote": "请求间隔必须大于 3 秒", "kind": "rule", "subject": "请求间隔", "value": "大于 3 秒"},
     {"quote": "禁止并发爬同一个站点", "kind": "rule", "subject": "并发", "value": "禁止"}, 2),
    ("We'll go with Postgres. Table names must be lowercase.",
     {"quote": "We'll go with Postgres", "kind": "decision", "subject": "database", "value": "Postgres"},
     {"quote": "Table names must be lowercase", "kind": "rule", "subject": "table names", "value": "lowercase"}, 2),
])
def test_a_reason_joins_its_card_and_separate_statements_stay(user, first, second, kept):
    repairs: dict = {}
    proposals = facts({"episode": "e0", **first}, {"episode": "e0", **second}, repairs=repairs)
    out, _ = decide(proposals, [], [], [ep(user)], repairs)
    assert len(out) == kept
    if kept == 1:
        assert second["quote"] in out[0].body and repairs == {"reason_joined": 1}


def test_inline_code_and_a_fence_marker_are_not_the_users_words():
    batch = [ep("what does `Unable to resolve module ./Foo` mean, I always forget"),
             ep("review this diff pls\n```diff\n-    amount: float\n```", 1)]
    repairs: dict = {}
    proposals = facts({"episode": "e0", "quote": "Unable to resolve module ./Foo", "kind": "fact", "subject": "error",
                       "value": "module"},
                      {"episode": "e1", "quote": "```diff", "kind": "fact", "subject": "diff", "value": "diff"},
                      n_episodes=2, repairs=repairs)
    out, _ = decide(proposals, [], [], batch, repairs)
    assert out == [] and repairs == {"quoted_dropped": 2}
