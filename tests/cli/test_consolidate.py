"""`memvault consolidate` (issue 14, item 2, offline): one synopsis per project built from its active cards,
each line citing its card; it supersedes the previous synopsis; a rerun is a no-op; context pins it."""

from __future__ import annotations

import json

from test_conflicts_cli import put

from memvault.vault.store import Vault

DAY1, DAY2 = "2026-11-05T08:00:00Z", "2026-11-06T08:00:00Z"


def journal(vault):
    return [json.loads(x) for p in sorted((vault / "journal").glob("*.jsonl")) for x in p.read_text().splitlines()]


def seed(vault):
    put(vault, "c-20261101-a00001", kind="decision", title="Use Postgres for orders", project="shop")
    put(vault, "c-20261101-a00002", kind="state", title="Deploy target: fly.io", project="shop", subject="deploy",
        field="target", value="fly.io")
    put(vault, "c-20261101-a00003", kind="rule", title="Never deploy on Fridays", project="shop")
    put(vault, "c-20261101-a00004", kind="thread", title="Payments integration still open", project="shop")
    put(vault, "c-20261101-a00005", kind="decision", title="Old choice", project="shop", status="superseded")
    put(vault, "c-20261101-b00001", kind="decision", title="第三章改用第一人称视角", project="novel")
    put(vault, "c-20261101-b00002", kind="question", title="结局是否保留灯塔的线索", project="novel")


def test_one_synopsis_per_project_citing_cards_then_rerun_is_a_no_op(run, vault):
    seed(vault)
    dry = run.json("consolidate", "--dry-run", env={"MEMVAULT_NOW": DAY1})
    assert [w["project"] for w in dry["written"]] == ["novel", "shop"] and not list(vault.glob("journal/*.jsonl"))
    done = run.json("consolidate", env={"MEMVAULT_NOW": DAY1})
    ids = {w["project"]: w["id"] for w in done["written"]}
    cards = {c.id: c for c in Vault.open(vault, {}).cards()}
    shop, novel = cards[ids["shop"]], cards[ids["novel"]]
    assert shop.kind == novel.kind == "synopsis" and shop.status == "active" and shop.source["kind"] == "consolidate"
    assert "- Use Postgres for orders [c-20261101-a00001]" in shop.body
    assert "- deploy target: fly.io [c-20261101-a00002]" in shop.body
    assert "[c-20261101-a00003]" in shop.body and "[c-20261101-a00004]" in shop.body
    assert "c-20261101-a00005" not in shop.body  # superseded cards are not where things stand
    assert shop.title.startswith("Where shop stands") and novel.title.startswith("novel 现状")
    assert "## 决定\n- 第三章改用第一人称视角 [c-20261101-b00001]" in novel.body and "## 未决事项" in novel.body
    [rec] = journal(vault)
    assert rec["type"] == "consolidate" and sorted(rec["created"]) == sorted(ids.values())
    again = run.json("consolidate", env={"MEMVAULT_NOW": DAY2})
    assert again["written"] == [] and again["unchanged"] == ["novel", "shop"] and len(journal(vault)) == 1
    pinned = [c["id"] for c in run.json("context", "anything at all", "--project", "shop")["cards"] if c["pinned"]]
    assert ids["shop"] in pinned


def test_a_new_synopsis_supersedes_the_previous_one_of_its_project_only(run, vault):
    seed(vault)
    first = {w["project"]: w["id"] for w in run.json("consolidate", env={"MEMVAULT_NOW": DAY1})["written"]}
    run("remember", "Ship with blue-green deploys", "--kind", "decision", "--project", "shop",
        env={"MEMVAULT_NOW": DAY2})
    second = run.json("consolidate", env={"MEMVAULT_NOW": DAY2})
    [item] = second["written"]
    assert item["project"] == "shop" and item["superseded"] == [first["shop"]] and second["unchanged"] == ["novel"]
    cards = {c.id: c for c in Vault.open(vault, {}).cards()}
    assert cards[first["shop"]].status == "superseded" and cards[first["shop"]].superseded_by == (item["id"],)
    assert cards[first["novel"]].status == "active"
    assert "Ship with blue-green deploys" in cards[item["id"]].body
    rec = journal(vault)[-1]
    assert rec["type"] == "consolidate" and [s["id"] for s in rec["superseded"]] == [first["shop"]]
    only = run.json("consolidate", "--project", "novel", env={"MEMVAULT_NOW": DAY2})
    assert only["written"] == [] and only["unchanged"] == ["novel"]
    run("doctor")


def test_a_card_with_broken_yaml_is_named_left_out_and_kept_as_it_is(run, vault):
    seed(vault)
    put(vault, "c-20261101-b00003", kind="decision", title="灯塔在第九章倒塌", project="novel")
    broken = next(vault.glob("cards/*/c-20261101-b00003.md"))
    text = broken.read_text(encoding="utf-8").replace("title: ", "title: [unclosed: {", 1)
    broken.write_text(text, encoding="utf-8")
    for args in (("consolidate", "--dry-run", "--json"), ("consolidate", "--json")):
        res = run(*args, env={"MEMVAULT_NOW": DAY1})
        out = json.loads(res.stdout)
        assert [w["project"] for w in out["written"]] == ["novel", "shop"]
        [warning] = [w for w in out["warnings"] if "c-20261101-b00003.md" in w]
        assert "left out" in warning and "灯塔" not in warning
    res = run("consolidate", env={"MEMVAULT_NOW": DAY2})
    assert "c-20261101-b00003.md" in res.stderr and "left out" in res.stderr
    assert broken.read_text(encoding="utf-8") == text  # nothing lost: the file is as the user left it
