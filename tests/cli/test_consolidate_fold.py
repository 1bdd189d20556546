"""`memvault consolidate` folding (issue 14, item 3): old small cards of one entity and kind fold into one card
that lists and supersedes them; --dry-run, --json, --no-fold, --fold-only; the originals stay readable in
`show` and `timeline`; search finds the folded card by its originals' words, and context prefers it."""

from __future__ import annotations

import json

from test_conflicts_cli import put

from memvault.vault.store import Vault

NOW = {"MEMVAULT_NOW": "2026-11-05T08:00:00Z"}  # cutoff (90 days): 2026-08-07
EN = [("c-20260301-e00001", "Redis keeps the session store", "2026-03-01"),
      ("c-20260402-e00002", "Redis snapshots go to the backup disk", "2026-04-02"),
      ("c-20260503-e00003", "Redis memory limit raised after the outage", "2026-05-03"),
      ("c-20260604-e00004", "Redis eviction policy is allkeys-lru", "2026-06-04")]
ZH = [("c-20260305-z00001", "灯塔守夜人第一章出场", "2026-03-05"), ("c-20260406-z00002", "灯塔在雾港北岸", "2026-04-06"),
      ("c-20260507-z00003", "灯塔的灯每晚九点亮起", "2026-05-07"), ("c-20260608-z00004", "灯塔钥匙交给了记者", "2026-06-08")]


def seed(vault):
    for cid, title, day in EN:
        put(vault, cid, kind="fact", title=title, body=f"{title}.", project="shop", entities=("redis",), day=day)
    for cid, title, day in ZH:
        put(vault, cid, kind="event", title=title, body=f"{title}。", project="novel", entities=("灯塔",), day=day)
    # Never folded: too new, another kind, a state key, retracted.
    put(vault, "c-20261101-n00001", kind="fact", title="Redis moved to a bigger box", project="shop",
        entities=("redis",), day="2026-11-01")
    put(vault, "c-20260310-n00002", kind="decision", title="Use Redis for queues", project="shop",
        entities=("redis",), day="2026-03-10")
    put(vault, "c-20260311-n00003", kind="fact", title="Redis port: 6379", project="shop", entities=("redis",),
        subject="redis", field="port", value="6379", day="2026-03-11")
    put(vault, "c-20260312-n00004", kind="fact", title="Redis was on a laptop", project="shop", entities=("redis",),
        status="retracted", day="2026-03-12")


def journal(vault):
    return [json.loads(x) for p in sorted((vault / "journal").glob("*.jsonl")) for x in p.read_text().splitlines()]


def test_dry_run_then_fold_then_rerun_is_a_no_op(run, vault):
    seed(vault)
    before = sorted(p.read_bytes() for p in (vault / "cards").rglob("*.md"))
    dry = run.json("consolidate", "--dry-run", "--fold-only", env=NOW)
    assert sorted((f["project"], f["kind"], len(f["folds"])) for f in dry["folded"]) == [("novel", "event", 4),
                                                                                      ("shop", "fact", 4)]
    assert dry["written"] == [] and sorted(p.read_bytes() for p in (vault / "cards").rglob("*.md")) == before
    assert not list(vault.glob("journal/*.jsonl"))
    done = run.json("consolidate", env=NOW)
    folded = {f["project"]: f for f in done["folded"]}
    assert [f["id"] for f in dry["folded"]] == [f["id"] for f in done["folded"]]  # the dry run said what happens
    assert folded["shop"]["folds"] == [cid for cid, _t, _d in EN]
    assert [w["project"] for w in done["written"]] == ["shop"]  # novel has only events: no synopsis line
    cards = {c.id: c for c in Vault.open(vault, {}).cards()}
    shop = cards[folded["shop"]["id"]]
    assert shop.kind == "fact" and shop.status == "active" and shop.supersedes == tuple(c for c, _t, _d in EN)
    assert "- 2026-03-01 Redis keeps the session store [c-20260301-e00001]" in shop.body
    novel = cards[folded["novel"]["id"]]
    assert novel.title.startswith("灯塔：4 条事件") and "[c-20260305-z00001]" in novel.body
    for cid, _t, _d in EN + ZH:
        assert cards[cid].status == "superseded" and len(cards[cid].superseded_by) == 1
    for cid in ("c-20261101-n00001", "c-20260310-n00002", "c-20260311-n00003"):
        assert cards[cid].status == "active"
    [rec] = journal(vault)
    assert rec["type"] == "consolidate" and {f["id"] for f in rec["folded"]} == {shop.id, novel.id}
    assert set(rec["created"]) >= {shop.id, novel.id}
    again = run.json("consolidate", env=NOW)
    assert again["folded"] == [] and again["written"] == [] and len(journal(vault)) == 1
    run("doctor")


def test_no_fold_and_fold_only(run, vault):
    seed(vault)
    only_synopsis = run.json("consolidate", "--no-fold", env=NOW)
    assert only_synopsis["folded"] == [] and len(only_synopsis["written"]) == 1
    only_fold = run.json("consolidate", "--fold-only", env=NOW)
    assert len(only_fold["folded"]) == 2 and only_fold["written"] == []
    run("consolidate", "--no-fold", "--fold-only", code=2)


def test_originals_stay_readable_and_search_and_context_find_the_folded_card(run, vault):
    seed(vault)
    folded = {f["project"]: f["id"] for f in run.json("consolidate", "--fold-only", env=NOW)["folded"]}
    shown = run.json("show", "c-20260402-e00002", "--no-sources")
    assert shown["status"] == "superseded" and shown["folded_into"] == [folded["shop"]]
    assert shown["body"] == "Redis snapshots go to the backup disk."  # its own text is still there
    text = run("show", "c-20260402-e00002", "--no-sources").stdout
    assert f"folded into {folded['shop']}" in text
    box = run.json("show", folded["shop"], "--no-sources")
    assert [f["id"] for f in box["folds"]] == [cid for cid, _t, _d in EN] and box["folded_into"] == []
    assert "c-20260604-e00004" in run("show", folded["shop"], "--no-sources").stdout
    timeline = run.json("timeline", "--project", "shop")
    assert {"c-20260301-e00001", folded["shop"]} <= {t["id"] for t in timeline["entries"]}
    # Search: a word only an original's body and title hold finds the folded card first (current question).
    hits = run.json("search", "eviction policy")["hits"]
    assert hits[0]["id"] == folded["shop"]
    hits = run.json("search", "灯塔钥匙")["hits"]
    assert hits[0]["id"] == folded["novel"]
    # Context holds the folded card, not its superseded originals: all its lines for a question about the
    # entity, only the lines on topic (and how many more) for a question with a topic word.
    pack = run.json("context", "redis", "--project", "shop")
    ids = [c["id"] for c in pack["cards"]]
    assert folded["shop"] in ids and not {cid for cid, _t, _d in EN} & set(ids)
    assert all(f"[{cid}]" in pack["pack"] for cid, _t, _d in EN)
    pack = run.json("context", "redis eviction", "--project", "shop")
    assert folded["shop"] in [c["id"] for c in pack["cards"]]
    assert "[c-20260604-e00004]" in pack["pack"] and "[c-20260301-e00001]" not in pack["pack"]
    assert f"… 3 more: memvault show {folded['shop']}" in pack["pack"]
    zh = run.json("context", "灯塔钥匙", "--project", "novel")
    assert folded["novel"] in [c["id"] for c in zh["cards"]] and "[c-20260608-z00004]" in zh["pack"]
    assert f"另有 3 条：memvault show {folded['novel']}" in zh["pack"] and "[c-20260305-z00001]" not in zh["pack"]


def test_a_history_question_does_not_call_a_folded_card_no_longer_true(run, vault):
    seed(vault)
    folded = {f["project"]: f["id"] for f in run.json("consolidate", "--fold-only", env=NOW)["folded"]}
    pack = run.json("context", "what was the redis eviction policy before", "--project", "shop")
    assert pack["intent"] == "history"
    ids = [c["id"] for c in pack["cards"]]
    assert folded["shop"] in ids and "c-20260604-e00004" not in ids  # listed by the folded card, not history
    assert "History (no longer true)" not in pack["pack"]


def test_purging_a_folded_original_takes_its_line_out_of_the_folded_card_and_the_synopsis(run, vault):
    seed(vault)
    done = run.json("consolidate", env=NOW)
    folded = {f["project"]: f["id"] for f in done["folded"]}
    for cid, title, _day in (EN[0], ZH[0]):
        run("forget", cid, "--purge", env=NOW)
        holders = [str(p.relative_to(vault)) for p in vault.rglob("*")
                   if p.is_file() and title in p.read_text(encoding="utf-8", errors="ignore")]
        assert holders == [], f"{title!r} survives the purge in {holders}"
    cards = {c.id: c for c in Vault.open(vault, {}).cards()}
    shop = cards[folded["shop"]]
    assert EN[0][0] not in shop.body and all(f"{t} [{c}]" in shop.body for c, t, _d in EN[1:])
    assert ZH[0][0] not in cards[folded["novel"]].body and f"{ZH[1][1]} [{ZH[1][0]}]" in cards[folded["novel"]].body
    res = run("search", "session store", code=1)
    assert "session store" not in res.stdout + res.stderr
    assert run.json("search", "Redis snapshots")["hits"][0]["id"] in (folded["shop"], EN[1][0])


def test_purging_a_folded_card_makes_the_cards_it_listed_active_again(run, vault):
    seed(vault)
    done = run.json("consolidate", "--fold-only", env=NOW)
    for f in done["folded"]:
        run("forget", f["id"], "--purge", env=NOW)
    cards = {c.id: c for c in Vault.open(vault, {}).cards()}
    for cid, _t, _d in [*EN, *ZH]:
        assert cards[cid].status == "active" and cards[cid].superseded_by == (), cid
    hit = run.json("search", "Redis snapshots")["hits"][0]
    assert hit["id"] == EN[1][0] and hit["status"] == "active"
    assert run.json("search", "灯塔钥匙")["hits"][0]["id"] == ZH[3][0]
    assert "c-2026110" not in run("doctor").stdout  # no link to a card that is gone


def test_consolidate_embeds_the_cards_it_writes(run, vault):
    from fake_embed import FakeEmbed
    from services.test_dense_search import configure, search, stored

    seed(vault)
    with FakeEmbed(dim=64, model="fake-e5") as fake:
        configure(vault, base_url=fake.base_url, model="fake-e5")
        run("embed")
        before = stored(vault)
        done = run.json("consolidate", env=NOW)
        made = [f["id"] for f in done["folded"]] + [w["id"] for w in done["written"]]
        assert len(made) >= 3
        assert stored(vault) == before + len(made)  # the folded cards and the synopsis have their vectors
        result = search(vault, "Redis snapshots backup")
        assert not any("no vector yet" in w for w in result.warnings), result.warnings


def test_one_run_folds_to_a_fixed_point_and_a_second_run_changes_no_byte(run, vault):
    """The first fold retires cards that made three others pick a group too small to fold; counted again
    without them, those three and a fourth fold together (issue 38: a second run folded one more group)."""
    for i in range(4):
        put(vault, f"c-2026030{i + 1}-t0000{i}", kind="fact", title=f"Tide table {i}", project="sea",
            entities=("tide",), day=f"2026-03-0{i + 1}")
        put(vault, f"c-2026040{i + 1}-e0000{i}", kind="fact", title=f"Tide and reef {i}", project="sea",
            entities=("tide", "reef"), day=f"2026-04-0{i + 1}")
    for i in range(3):
        put(vault, f"c-2026050{i + 1}-d0000{i}", kind="fact", title=f"Reef and shoal {i}", project="sea",
            entities=("reef", "shoal"), day=f"2026-05-0{i + 1}")
    put(vault, "c-20260601-s00000", kind="fact", title="Shoal marker", project="sea", entities=("shoal",),
        day="2026-06-01")
    first = run.json("consolidate", env=NOW)
    assert sorted(len(f["folds"]) for f in first["folded"]) == [4, 8]
    tree = {p: p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file() and ".memvault" not in p.parts}
    second = run.json("consolidate", env=NOW)
    assert second["folded"] == [] and second["written"] == [] and second["change"] is None
    assert {p: p.read_bytes() for p in sorted(vault.rglob("*"))
            if p.is_file() and ".memvault" not in p.parts} == tree  # not one byte
