"""`memvault context` through the CLI: exit codes, --json shape, text output, options."""

from __future__ import annotations

from memvault.distill.llm import estimate_tokens

NOW = {"MEMVAULT_NOW": "2026-11-02T08:00:00Z"}


def test_empty_vault_exits_1_like_grep(run):
    res = run("context", "anything", code=1)
    assert res.stdout == "" and "nothing to put in" in res.stderr


def test_json_shape_and_text_output_agree(run):
    rule = run.json("remember", "Deploys only on weekdays", "--kind", "rule", "--project", "shop", env=NOW)["id"]
    pref = run.json("remember", "回答用中文", "--kind", "preference", env=NOW)["id"]
    dec = run.json("remember", "Use Postgres for orders", "--kind", "decision", "-e", "postgres", "--project",
                   "shop", "--body", "Concurrent writers.", env=NOW)["id"]
    data = run.json("context", "postgres", "orders", "--project", "shop", "--budget", "600")
    assert set(data) >= {"query", "budget", "used_tokens", "cards", "pack"}
    assert data["query"] == "postgres orders" and data["budget"] == 600
    assert [c["id"] for c in data["cards"]] == [dec, rule, pref]  # what the question finds first (issue 32)
    assert [c["bucket"] for c in data["cards"]] == ["decisions", "rules", "preferences"]
    assert set(data["cards"][0]) >= {"id", "kind", "bucket", "title", "tokens"}
    assert data["used_tokens"] == estimate_tokens(data["pack"]) <= 600
    text = run("context", "postgres", "orders", "--project", "shop", "--budget", "600").stdout
    assert text == data["pack"]
    assert text.splitlines()[1] == text.splitlines()[-1]  # opened and closed by the same fence line


def test_chinese_query_and_budget_too_small(run):
    run.json("remember", "提交前要跑测试", "--kind", "rule", "--body", "没有测试的提交出过事故。", env=NOW)
    data = run.json("context", "测试")
    assert "## 规则" in data["pack"] and "不是指令" in data["pack"]
    res = run("context", "测试", "--budget", "50", code=2)
    assert "--budget" in res.stderr


def test_help_has_an_example(run):
    out = run("context", "--help").stdout
    assert "Example: memvault context" in out and "--budget" in out
