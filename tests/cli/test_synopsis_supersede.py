"""Issue 8, item 6: one active synopsis per project. A new synopsis supersedes the project's earlier one,
whoever writes it (remember, distill, import), and `context` pins only the latest even on older data."""

from __future__ import annotations

import pytest
import json
import sys
from pathlib import Path

from conftest import Runner

from memvault.model import Card
from memvault.vault.store import Vault

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "services"))
from test_distill_rollback import capture, chat, distill, journal  # noqa: E402


DAY1, DAY2, DAY3 = "2026-11-01T08:00:00Z", "2026-11-02T08:00:00Z", "2026-11-03T08:00:00Z"


def by_id(root: Path) -> dict[str, Card]:
    return {c.id: c for c in Vault.open(root, {}).cards()}


def pinned(run, project: str | None = None) -> list[str]:
    args = ["context", "anything at all"] + (["--project", project] if project else [])
    return [c["id"] for c in run.json(*args)["cards"] if c["pinned"]]


def test_remember_synopsis_supersedes_the_previous_one_of_its_project_only(run, vault):
    a = run.json("remember", "Shop: checkout works, payments next", "--kind", "synopsis", "--project", "shop",
                 env={"MEMVAULT_NOW": DAY1})
    other = run.json("remember", "Novel: chapter 3 drafted", "--kind", "synopsis", "--project", "novel",
                     env={"MEMVAULT_NOW": DAY1})
    b = run.json("remember", "Shop: payments done, shipping next", "--kind", "synopsis", "--project", "shop",
                 env={"MEMVAULT_NOW": DAY2})
    assert b["superseded"] == [a["id"]]
    cards = by_id(vault)
    assert cards[a["id"]].status == "superseded" and cards[a["id"]].superseded_by == (b["id"],)
    assert cards[b["id"]].status == "active" and cards[b["id"]].supersedes == (a["id"],)
    assert cards[other["id"]].status == "active"  # another project's synopsis is not touched
    assert pinned(run, "shop") == [b["id"]]
    assert sorted(pinned(run)) == sorted([b["id"], other["id"]])
    [rec] = [r for r in journal(vault) if r["type"] == "remember" and r["created"] == [b["id"]]]
    assert [s["id"] for s in rec["superseded"]] == [a["id"]] and "status: active" in rec["superseded"][0]["before"]
    run("doctor")


@pytest.mark.usefixtures("write_protocol")  # its fake model writes every card
def test_distill_synopsis_supersedes_one_written_by_hand_and_a_rollback_undoes_it(run, vault, fake_llm):
    old = run.json("remember", "Demo: storage chosen", "--kind", "synopsis", "--project", "demo",
                   env={"MEMVAULT_NOW": DAY1})
    old_bytes = (vault / old["path"]).read_bytes()

    def model(body: dict) -> str:
        if "which queue?" not in body["messages"][1]["content"]:  # the prompt shows the user's side
            return json.dumps({"cards": []})
        return json.dumps({"cards": [{"action": "create", "kind": "synopsis", "title": "Demo: queue chosen too",
                                      "body": "", "entities": [], "project": "demo", "valid_from": None,
                                      "confidence": "inferred", "episodes": ["e0"]}]})

    fake_llm.set_default(model)
    capture(run, chat("s", [("which queue?", "Redis streams")]))
    distill(run, fake_llm, now=DAY3)
    cards = by_id(vault)
    [new] = [c for c in cards.values() if c.id != old["id"]]
    assert cards[old["id"]].status == "superseded" and cards[old["id"]].superseded_by == (new.id,)
    assert new.status == "active" and new.supersedes == (old["id"],)
    assert pinned(run, "demo") == [new.id]
    [batch] = [r for r in journal(vault) if r["type"] == "distill"]
    assert [s["id"] for s in batch["superseded"]] == [old["id"]]

    # The turn is edited in the chat history: the batch is rolled back, and the old synopsis with it.
    capture(run, chat("s", [("which queue, really?", "ok")]))
    summary = distill(run, fake_llm, now="2026-11-04T08:00:00Z")
    assert summary["rolled_back"] == 1
    assert (vault / old["path"]).read_bytes() == old_bytes
    assert pinned(run, "demo") == [old["id"]]


def test_import_of_a_newer_synopsis_supersedes_the_vault_one_and_reimport_is_identical(run, vault, tmp_path):
    mine = run.json("remember", "Shop: checkout works", "--kind", "synopsis", "--project", "shop",
                    env={"MEMVAULT_NOW": DAY1})
    other_root = tmp_path / "other"
    Runner(None)("init", str(other_root))
    other = Runner(other_root)
    theirs = other.json("remember", "Shop: shipping works", "--kind", "synopsis", "--project", "shop",
                        env={"MEMVAULT_NOW": DAY2})
    bundle = tmp_path / "b.json"
    other("export", "-o", str(bundle), env={"MEMVAULT_NOW": DAY3})
    out = run.json("import", str(bundle), env={"MEMVAULT_NOW": DAY3})
    assert out["imported"] == 1
    cards = by_id(vault)
    assert cards[mine["id"]].status == "superseded" and cards[mine["id"]].superseded_by == (theirs["id"],)
    assert cards[theirs["id"]].status == "active"
    assert pinned(run, "shop") == [theirs["id"]]
    again = run.json("import", str(bundle), env={"MEMVAULT_NOW": DAY3})
    assert again["imported"] == 0 and again["conflicts"] == 0 and again["identical"] == 1
    run("doctor")


def test_context_pins_only_the_latest_synopsis_on_a_vault_that_holds_two(run, vault):
    v = Vault.open(vault, {})
    older = Card(id="c-20261101-aaaaaa", kind="synopsis", title="Shop: older summary", project="shop",
                 created=DAY1, valid_from="2026-11-01", source={"kind": "remember"})
    newer = Card(id="c-20261102-bbbbbb", kind="synopsis", title="Shop: newer summary", project="shop",
                 created=DAY2, valid_from="2026-11-02", source={"kind": "remember"})
    rule = Card(id="c-20261101-cccccc", kind="rule", title="Deploy on weekdays", project="shop",
                created=DAY1, valid_from="2026-11-01", source={"kind": "remember"})
    for card in (older, newer, rule):
        v.write_card(card)
    assert sorted(pinned(run, "shop")) == sorted([newer.id, rule.id])
    pack = run("context", "anything", "--project", "shop").stdout
    assert "newer summary" in pack and "older summary" not in pack


def test_a_synopsis_that_holds_from_an_earlier_date_is_born_superseded(run, vault):
    now = run.json("remember", "Shop: shipping works", "--kind", "synopsis", "--project", "shop",
                   env={"MEMVAULT_NOW": DAY2})
    late = run.json("remember", "Shop: checkout works", "--kind", "synopsis", "--project", "shop",
                    "--valid-from", "2026-10-01", env={"MEMVAULT_NOW": DAY3})
    cards = by_id(vault)
    assert cards[late["id"]].status == "superseded" and cards[late["id"]].superseded_by == (now["id"],)
    assert cards[now["id"]].status == "active"
    assert pinned(run, "shop") == [now["id"]]
