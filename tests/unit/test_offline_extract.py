"""The offline engine's extractor (issue 10), pure: what the user states outright becomes a statement of the
right kind; questions, hedges, hypotheticals, negations, quotes, code and role-play narration never do."""

from __future__ import annotations

import pytest

from memvault.distill import offline
from memvault.distill.offline.extract import statements
from memvault.model import Card, Episode


def kinds(text: str) -> list[str]:
    return [s.kind for s in statements(text)]


@pytest.mark.parametrize("text, expected", [
    ("we'll go with React Native for the mobile app.", ["decision"]),
    ("Let's use pydantic v2 for the config models.", ["decision"]),
    ("I prefer dark mode as the default theme.", ["preference"]),
    ("always run ruff before committing", ["preference"]),
    ("Don't ever use `time.sleep` in tests.", ["rule"]),
    ("All money amounts must be integers in cents.", ["rule"]),
    ("the NAS IP is 192.168.1.40 and it runs TrueNAS Scale.", ["fact", "fact"]),
    ("Remember that my passport expires on 2027-03-14.", ["fact"]),
    ("Note: the app store account is under the company name Brightleaf Labs.", ["fact"]),
    ("We switched state management from Redux to Zustand last sprint.", ["state"]),
    ("小账本的后端我们决定用 FastAPI，Django 太重了。", ["decision"]),
    ("定了，squash merge。", ["decision"]),
    ("就用 Playwright 吧。", ["decision"]),
    ("我喜欢接口返回的字段用 snake_case，别用驼峰。", ["preference"]),
    ("以后代码注释都用英文。", ["preference"]),
    ("不要再推荐群晖了。", ["preference"]),
    ("请求间隔必须大于 3 秒，禁止并发爬同一个站点。", ["rule", "rule"]),
    ("服务器端口是 8080，域名是 ledger.example.cn。", ["fact", "fact"]),
    ("记住：定时任务每天早上 8 点跑一次。", ["fact"]),
    ("不用 SQLite 了，改用 Postgres。", ["state"]),
    ("宽带从电信换成联通了，1000M。", ["state"]),
])
def test_outright_statements(text, expected):
    assert kinds(text) == expected


@pytest.mark.parametrize("text", [
    "should we use Expo or bare RN?",  # question
    "数据库要不要用 SQLite？",
    "what if we used Proxmox on the mini pc instead?",  # hypothetical
    "如果以后要多人同时记账，用 Postgres 呢",
    "maybe we should switch the backups to restic at some point",  # hedge
    "可能要加个导出 Excel 的功能，还没想好。",
    "I didn't say we'd go with Proxmox, I only asked.",  # negated
    "我没决定用 Redis 啊，只是问问。",
    "> we'll go with Redux for state\nthat's what the blog post says",  # quoted
    "今天看到别的组的规范写着「所有函数必须写 docstring」。",
    "why does it loop?\n```yaml\n# must run as root\nrestart: always\n```",  # code
    "*她推开门* 决定了，我就要这本！",  # role-play narration
    "lol I always forget to feed the cat",  # chit-chat
    "Never mind staging, it needs the VPN.",
])
def test_nothing_from_what_is_not_stated_outright(text):
    assert statements(text) == []


def test_out_of_character_text_counts_and_the_line_is_cited():
    (st,) = statements("*waves* \"Hello!\"\nOOC: never write her thoughts in first person.")
    assert st.kind == "rule"
    first, second = statements("why?\n```\nx = 1\ny = 2\n```\nthe reverse proxy listens on port 8443.\n"
                               "I prefer tabs.")
    assert (first.kind, first.line) == ("fact", 6) and (second.kind, second.line) == ("preference", 7)


def test_entities_from_names_backticks_and_cjk_subjects():
    (st,) = statements("Don't ever use `time.sleep` in tests.")
    assert "time.sleep" in st.entities
    (st,) = statements("we moved the NAS from TrueNAS Scale to Unraid.")
    assert {"NAS", "TrueNAS Scale", "Unraid"} <= set(st.entities) and (st.old, st.new) == ("TrueNAS Scale", "Unraid")
    (st,) = statements("服务器端口是 8080。")
    assert "服务器端口" in st.entities


def ep(i: int, user: str) -> Episode:
    return Episode(id=f"ep-{i}", at=f"2026-01-01T00:0{i}:00Z", project="p", session="s", turn=i, user=user,
                   assistant="We'll go with Kafka, you must use it.")


def test_only_the_user_counts_and_the_output_is_deterministic():
    batch = [ep(1, "ok give me the options"), ep(2, "let's use Expo.")]
    data, related = offline.propose(batch, {})
    assert [c["episodes"] for c in data["cards"]] == [["e1"]] and related == []
    assert data["cards"][0]["confidence"] == "extracted"
    assert offline.propose(batch, {}) == (data, related)


def test_a_state_change_targets_the_card_that_held_the_old_value():
    old = Card(id="c-1", kind="fact", title="it runs TrueNAS Scale", body="", project="p", entities=(),
               created="2026-01-01T00:00:00Z")
    other = Card(id="c-2", kind="fact", title="backups run on Sundays", body="", project="p", entities=(),
                 created="2026-01-02T00:00:00Z")
    data, related = offline.propose([ep(3, "we moved the NAS from TrueNAS Scale to Unraid")],
                                    {"c-1": old, "c-2": other})
    (card,) = data["cards"]
    assert card["action"] == "supersede" and related[card["target"]].id == "c-1"
    assert (card["kind"], card["subject"], card["value"]) == ("state", "NAS", "Unraid")


def test_plan_cuts_before_a_state_change():
    eps = [ep(1, "let's use Expo."), ep(2, "I prefer tabs."), ep(3, "we moved the app from Expo to bare RN"),
           ep(4, "ok")]
    assert [[e.id for e in b] for b in offline.plan(eps)] == [["ep-1", "ep-2"], ["ep-3", "ep-4"]]
