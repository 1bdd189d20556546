"""`memvault conflicts`, `resolve`, and conflicts in `doctor`, `search` and `context` (issue 14, item 1).

The conflicting cards are written as two machines leave them after a git merge: card files side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.model import Card
from memvault.vault import codec
from memvault.vault.store import Vault

NOW = "2026-11-05T08:00:00Z"


def put(vault: Path, cid: str, **kw) -> Card:
    day = kw.pop("day", "2026-11-01")
    card = Card(id=cid, created=f"{day}T08:00:00Z", valid_from=day, source={"kind": "remember"}, **kw)
    folder = vault / "cards" / day[:7]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{cid}.md").write_text(codec.card_to_text(card), encoding="utf-8")
    return card


@pytest.fixture
def clash(vault):
    """en state conflict, zh state conflict, an en near-duplicate pair, and negatives."""
    put(vault, "c-20261101-aaa001", kind="state", title="Shop database engine: Postgres", project="shop",
        subject="shop database", field="engine", value="Postgres", entities=())
    put(vault, "c-20261102-aaa002", kind="state", title="Shop database engine: SQLite", project="shop",
        subject="shop database", field="engine", value="SQLite", day="2026-11-02")
    put(vault, "c-20261101-bbb001", kind="state", title="小说视角：第一人称", project="novel",
        subject="小说", field="视角", value="第一人称")
    put(vault, "c-20261101-bbb002", kind="state", title="小说视角：第三人称", project="novel",
        subject="小说", field="视角", value="第三人称")
    put(vault, "c-20261101-ddd001", kind="decision", title="Keep the vault in plain text files", project="shop")
    put(vault, "c-20261101-ddd002", kind="decision", title="Keep the vault in plain-text files.", project="shop")
    put(vault, "c-20261101-eee001", kind="state", title="Shop database port: 5432", project="shop",
        subject="shop database", field="port", value="5432")
    put(vault, "c-20261101-eee002", kind="state", title="Shop database engine: MySQL", project="blog",
        subject="shop database", field="engine", value="MySQL")
    return vault


PAIRS = {("c-20261101-aaa001", "c-20261102-aaa002", "state"), ("c-20261101-bbb001", "c-20261101-bbb002", "state"),
         ("c-20261101-ddd001", "c-20261101-ddd002", "duplicate")}


def test_conflicts_json_lists_each_pair_once_and_filters_by_project(run, clash):
    data = run.json("conflicts")
    assert {(c["a"], c["b"], c["sort"]) for c in data["conflicts"]} == PAIRS and data["count"] == 3
    first = next(c for c in data["conflicts"] if c["a"] == "c-20261101-aaa001")
    assert first["a_path"] == "cards/2026-11/c-20261101-aaa001.md" and first["project"] == "shop"
    novel = run.json("conflicts", "--project", "novel")
    assert [(c["a"], c["b"]) for c in novel["conflicts"]] == [("c-20261101-bbb001", "c-20261101-bbb002")]
    text = run("conflicts").stdout
    assert "c-20261101-aaa001  c-20261102-aaa002  state  shop" in text


def test_doctor_lists_conflicts_as_warnings_not_damage(run, clash):
    result = run("doctor", "-v", code=0)
    lines = result.stdout.splitlines()
    assert any(line.startswith("cards/2026-11/c-20261101-aaa001.md: conflicts with c-20261102-aaa002")
               for line in lines)
    assert any(line.startswith("cards/2026-11/c-20261101-bbb002.md: conflicts with c-20261101-bbb001")
               for line in lines)
    assert "3 conflicts" in result.stderr
    data = json.loads(run("doctor", "--json", code=0).stdout)
    # one entry per pair, as `memvault conflicts --json` counts them (issue 38: each pair was there twice)
    assert data["ok"] is True and data["problems"] == [] and len(data["conflicts"]) == 3
    assert len(data["conflicts"]) == run.json("conflicts")["count"]


def test_doctor_on_a_vault_without_conflicts_reports_none(run, vault):
    put(vault, "c-20261101-fff001", kind="state", title="Shop database engine: Postgres", project="shop",
        subject="shop database", field="engine", value="Postgres")
    data = json.loads(run("doctor", "--json").stdout)
    assert data["conflicts"] == []


def test_search_hit_says_which_card_it_conflicts_with(run, clash):
    hits = {h["id"]: h for h in run.json("search", "shop database engine")["hits"]}
    assert "conflicts with c-20261102-aaa002" in hits["c-20261101-aaa001"]["why"]
    assert not any("conflicts" in w for w in hits["c-20261101-eee001"]["why"])  # another field
    text = run("search", "小说", "视角").stdout
    assert "conflicts with c-20261101-bbb002" in text


def test_context_marks_both_sides_of_a_conflict_en_and_zh(run, clash):
    pack = run.json("context", "shop database engine", "--project", "shop")["pack"]
    line = next(x for x in pack.splitlines() if "c-20261101-aaa001 ·" in x)
    assert "CONFLICTS with c-20261102-aaa002" in line
    zh = run.json("context", "小说的视角是什么", "--project", "novel")["pack"]
    assert "与 c-20261101-bbb001 冲突" in zh and "与 c-20261101-bbb002 冲突" in zh


def test_resolve_supersedes_journals_and_a_rerun_is_a_no_op(run, clash):
    a, b = "c-20261101-aaa001", "c-20261102-aaa002"  # the older card wins: a person's choice stands
    dry = run.json("resolve", a, "--over", b, "--dry-run")
    assert dry == {"winner": a, "superseded": b, "changed": True, "dry_run": True, "change": None}
    assert not list((clash / "journal").glob("*.jsonl")) or "resolve" not in "".join(
        p.read_text() for p in (clash / "journal").glob("*.jsonl"))
    done = run.json("resolve", a, "--over", b, env={"MEMVAULT_NOW": NOW})
    assert done["changed"] is True and done["change"].startswith("r-")
    cards = {c.id: c for c in Vault.open(clash, {}).cards()}
    assert cards[b].status == "superseded" and cards[b].superseded_by == (a,) and cards[b].valid_to == "2026-11-02"
    assert cards[a].status == "active" and cards[a].supersedes == (b,)
    [rec] = [json.loads(x) for p in (clash / "journal").glob("*.jsonl") for x in p.read_text().splitlines()]
    assert rec["type"] == "resolve" and rec["card"] == a and rec["over"] == b and rec["change"] == done["change"]
    assert rec["superseded"][0]["id"] == b and "status: active" in rec["superseded"][0]["before"]
    assert rec["updated"][0]["id"] == a
    before = {p: p.read_bytes() for p in clash.rglob("*") if p.is_file() and ".memvault" not in p.parts}
    again = run.json("resolve", a, "--over", b, env={"MEMVAULT_NOW": "2026-11-06T08:00:00Z"})
    assert again["changed"] is False
    assert {p: p.read_bytes() for p in clash.rglob("*") if p.is_file() and ".memvault" not in p.parts} == before
    assert "already superseded" in run("resolve", a, "--over", b).stdout
    pairs = {(c["a"], c["b"]) for c in run.json("conflicts")["conflicts"]}
    assert (a, b) not in pairs and len(pairs) == 2


def test_resolve_refuses_what_it_cannot_do(run, clash):
    run("resolve", "c-20261101-aaa001", "--over", "c-20261101-nope00", code=1)
    run("resolve", "c-20261101-aaa001", "--over", "c-20261101-aaa001", code=2)
    run("resolve", "c-20261101-aaa001", "--over", "../etc", code=2)
    run("resolve", "c-20261101-aaa001", "--over", "c-20261102-aaa002")
    # B is now superseded: it cannot win, and another card cannot supersede it again
    run("resolve", "c-20261102-aaa002", "--over", "c-20261101-aaa001", code=2)
    run("resolve", "c-20261101-eee001", "--over", "c-20261102-aaa002", code=2)


def test_help_has_examples(run):
    assert "Example: memvault conflicts" in run("conflicts", "--help").stdout
    assert "Example: memvault resolve" in run("resolve", "--help").stdout
