"""`memvault reflect` (issue 14, item 4): at most K reflection cards per project, each citing checked card ids,
no near-duplicate of an existing reflection, Chinese for a Chinese project; skipped with the offline engine;
a rerun with nothing new makes no call and writes nothing. Real HTTP: the fake server of tests/fake_llm.py."""

from __future__ import annotations

import json

from synopsis_fake import reflection
from test_conflicts_cli import put
from test_consolidate import journal
from test_consolidate_llm import cards, env, files

A = [f"c-20261101-a0000{i}" for i in range(1, 7)]
Z = [f"c-20261101-b0000{i}" for i in range(1, 6)]


def seed(vault):
    titles = ["Drop webpack, use plain ES modules", "No Sass: plain CSS is enough", "Use htmx instead of React",
              "Avoid TypeScript build step in the admin", "Ship the shop in one binary", "Deploy target is fly.io"]
    for i, (cid, title) in enumerate(zip(A, titles)):
        put(vault, cid, kind="decision", title=title, project="shop", entities=("frontend",) if i < 4 else ())
    for cid, title in zip(Z, ["第三章改用第一人称", "删掉序章", "结局保留灯塔线索", "主角不用超能力", "每章不超过五千字"]):
        put(vault, cid, kind="decision", title=title, project="novel")
    put(vault, "c-20261101-a00009", kind="decision", title="Tiny project card", project="tiny")


def item(title, *ids, body="Seen again and again."):
    return {"title": title, "body": body, "cards": list(ids)}


def test_offline_engine_skips_and_says_so(run, vault):
    seed(vault)
    data = run.json("reflect")
    assert data["skipped"] is True and "needs an LLM" in data["reason"] and data["written"] == []
    assert run("reflect").stdout.startswith("skipped: reflection needs an LLM")
    assert not list(vault.glob("journal/*.jsonl"))


def test_reflections_cite_checked_ids_at_most_k_and_a_rerun_is_a_no_op(run, vault, fake_llm):
    seed(vault)
    fake_llm.queue(json.dumps({"reflections": [
        item("The user rejects dependencies that need a build step", A[0], "C-20261101-A00002", A[3]),
        item("Invented insight", "c-20991231-abcdef", "c-20991231-abcdee"),  # ids it was never shown
        item("Restates one card", A[4]),
        item("The user prefers server-rendered HTML", A[2], body=f"As {A[1]} shows too."),  # id in the body
        item("One more insight over the cap", A[4], A[5])]}))
    done = run.json("reflect", "-p", "shop", "--max", "2", env=env(fake_llm))
    assert [w["title"] for w in done["written"]] == ["The user rejects dependencies that need a build step",
                                                     "The user prefers server-rendered HTML"]
    assert done["written"][0]["cards"] == [A[0], A[1], A[3]] and done["written"][1]["cards"] == [A[2], A[1]]
    assert sorted(d["reason"] for d in done["dropped"]) == [
        "cites 0 of the cards it was shown, needs 2", "cites 1 of the cards it was shown, needs 2", "over --max 2"]
    card = cards(vault)[done["written"][0]["id"]]
    assert card.kind == "reflection" and card.project == "shop" and card.confidence == "inferred"
    assert card.source["kind"] == "reflect" and card.source["cards"] == [A[0], A[1], A[3]]
    assert card.entities == ("frontend",)
    [rec] = journal(vault)
    assert rec["type"] == "reflect" and sorted(rec["created"]) == sorted(w["id"] for w in done["written"])
    shown = fake_llm.requests[0]["body"]["messages"]
    assert "at most 2 reflections" in shown[0]["content"] and A[5] in shown[1]["content"]
    before, asked = files(vault), len(fake_llm.requests)
    again = run.json("reflect", "-p", "shop", env=env(fake_llm, "2026-11-06T08:00:00Z"))
    assert again["unchanged"] == ["shop"] and again["written"] == [] and len(fake_llm.requests) == asked
    assert files(vault) == before
    assert f"rests on: {A[0]}, {A[1]}, {A[3]}" in run("show", card.id).stdout


def test_no_near_duplicate_of_an_existing_reflection_and_chinese_for_a_chinese_project(run, vault, fake_llm):
    seed(vault)
    put(vault, "c-20261101-a00010", kind="reflection", title="The user rejects dependencies that need a build step",
        project="shop")
    fake_llm.queue(json.dumps({"reflections": [item("The author keeps chapters short", Z[0], Z[4]),
                                               item("作者偏好克制、贴近现实的写法", Z[3], Z[4])]}))  # novel …
    fake_llm.queue(json.dumps({"reflections": [  # … then shop (projects go in name order)
        item("The user rejects dependencies that need a build-step.", A[0], A[1])]}))
    done = run.json("reflect", env=env(fake_llm))
    assert [d["reason"] for d in done["dropped"]] == ["not in the project's language (Chinese)",
                                                     "near-duplicate of an existing reflection"]
    assert [(w["project"], w["title"]) for w in done["written"]] == [("novel", "作者偏好克制、贴近现实的写法")]
    prompts = {r["body"]["messages"][1]["content"].split('"')[1]: r for r in fake_llm.requests}
    assert set(prompts) == {"novel", "shop"}  # "tiny" has too few cards to reflect on: no call
    assert "The user rejects dependencies that need a build step" in prompts["shop"]["body"]["messages"][1]["content"]
    assert "Chinese" in prompts["novel"]["body"]["messages"][0]["content"]


def test_nothing_found_is_remembered_and_an_endpoint_error_exits_5(run, vault, fake_llm):
    seed(vault)
    fake_llm.queue('{"reflections": []}')
    first = run.json("reflect", "-p", "shop", env=env(fake_llm))
    assert first["written"] == [] and not list(vault.glob("journal/*.jsonl"))
    again = run.json("reflect", "-p", "shop", env=env(fake_llm))
    assert again["unchanged"] == ["shop"] and len(fake_llm.requests) == 1
    fake_llm.set_default(lambda body: {"status": 500, "content": "boom with private text"})
    failed = run("reflect", "-p", "novel", code=5, env=env(fake_llm))
    assert "HTTP 500" in failed.stderr and "private text" not in failed.stderr
    fake_llm.set_default(reflection)
    assert run.json("reflect", "-p", "novel", "--dry-run", env=env(fake_llm))["written"]  # asked, not written
    assert not list(vault.glob("journal/*.jsonl"))
