"""History edits reach the cards (DESIGN §4): real `memvault capture` of a log, distill against the fake server,
an edited turn captured again, and the next distill rolls the stale batches back from the journal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from memvault.distill import cards as cardlib
from memvault.vault import codec
from memvault.model import Card
from memvault.vault.store import Vault

# Their fake models write every card: the write protocol (tests/write_protocol.py).
pytestmark = pytest.mark.usefixtures("write_protocol")

NOW = "2026-11-03T08:00:00Z"
LATER = "2026-11-04T08:00:00Z"


def chat(session: str, turns: list[tuple[str, str]], day: str = "2026-11-02", hour: int = 7) -> str:
    lines = []
    for i, (user, assistant) in enumerate(turns):
        ts = f"{day}T{hour:02d}:{i:02d}:00Z"
        lines.append({"role": "user", "content": user, "session": session, "timestamp": ts})
        lines.append({"role": "assistant", "content": assistant, "session": session, "timestamp": ts})
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in lines)


def episodes_of(body: dict) -> list[tuple[int, str, str]]:
    text = body["messages"][1]["content"]
    return [(int(n), u, a) for n, u, a in re.findall(r"^\[e(\d+)\] .*\nUSER: (.*)\nASSISTANT: (.*)$", text, re.M)]


def card(n: int, title: str, **kw) -> dict:
    return {"action": "create", "kind": "decision", "title": title, "body": "why: " + title,
            "entities": [title.split()[-1].lower()], "project": "demo", "valid_from": None,
            "confidence": "user_stated", "episodes": [f"e{n}"], **kw}


def model(body: dict) -> str:
    """A fake distiller: each answer becomes a decision titled after it. `SUPERSEDE: <old> -> <new>` in an
    answer proposes a change from the old title to the new one (code finds the card that held the old one);
    `MERGE` repeats a title (a near-duplicate)."""
    cards = []
    for n, _user, assistant in episodes_of(body):
        m = re.match(r"SUPERSEDE: (.*?) -> (.*)$", assistant)
        if m:
            cards.append(card(n, m.group(2), subject="index", value=m.group(2), old=m.group(1)))
        elif assistant.startswith("MERGE: "):
            cards.append(card(n, assistant[len("MERGE: "):]))
        elif assistant != "ok":
            cards.append(card(n, assistant))
    return json.dumps({"cards": cards}, ensure_ascii=False)


@pytest.fixture(autouse=True)
def show_answers(vault):
    """These fake models read their instructions from the assistant's answers: the prompt must show them."""
    show_assistant(vault)


def show_assistant(root: Path) -> None:
    path = root / "memvault.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.setdefault("distill", {})["assistant_chars"] = 4000
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def env(fake, now=NOW, **extra) -> dict:
    return {"MEMVAULT_LLM_BASE_URL": fake.base_url, "MEMVAULT_NOW": now, "MEMVAULT_LLM_MAX_RETRIES": "0",
            "MEMVAULT_LLM_MAX_OUTPUT_TOKENS": "960", **extra}  # 3 episodes per batch


def capture(run, text: str, project: str = "demo"):
    return run.json("capture", "--project", project, input=text)


def distill(run, fake, now=NOW, **extra) -> dict:
    return run.json("distill", env=env(fake, now, **extra))


def cards(root: Path) -> dict[str, Card]:
    return {c.title: c for c in Vault.open(root, {}).cards()}


def journal(root: Path) -> list[dict]:
    return [json.loads(x) for p in sorted((root / "journal").glob("*.jsonl")) for x in p.read_text().splitlines()]


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.parts}


TURNS = [("what do we call it", "Name it tidepool"), ("which database", "Use SQLite for storage"),
         ("and the queue", "Use Redis streams"), ("deploys?", "Deploy with systemd"),
         ("tests?", "Test with pytest"), ("lint?", "Lint with ruff")]


def test_edit_of_turn_2_rolls_back_both_stale_batches_and_leaves_an_unrelated_batch(run, vault, fake_llm):
    fake_llm.set_default(model)
    capture(run, chat("s", TURNS))
    capture(run, chat("u", [("docs?", "Write docs in Markdown")], day="2026-11-02", hour=9), project="other")
    first = distill(run, fake_llm)
    assert (first["batches"], first["cards"]["created"], first["rolled_back"]) == (3, 7, 0)
    other = next(p for p in (vault / "cards").rglob("*.md") if "Markdown" in p.read_text())
    other_bytes = other.read_bytes()

    edited = list(TURNS)
    edited[1] = ("which database, for 10k users", "Use Postgres 16 for storage")
    out = capture(run, chat("s", edited))
    assert out["revoked"] == 5 and out["new"] == 5

    calls_before = len(fake_llm.requests)
    second = distill(run, fake_llm, now=LATER)
    assert second["rolled_back"] == 2 and second["rollback_fallback"] == []
    assert second["pending_before"] == 6  # turn 1 (still live) and the five new turns
    titles = set(cards(vault))
    assert "Use SQLite for storage" not in titles and "Use Postgres 16 for storage" in titles
    assert titles == {"Name it tidepool", "Use Postgres 16 for storage", "Use Redis streams", "Deploy with systemd",
                      "Test with pytest", "Lint with ruff", "Write docs in Markdown"}
    assert other.read_bytes() == other_bytes  # the unrelated later batch is untouched
    live = {e.id for e in Vault.open(vault, {}).episodes()}
    for c in cards(vault).values():
        assert set(c.episodes) <= live, c.title  # no card cites a revoked turn
    rollbacks = [r for r in journal(vault) if r["type"] == "rollback"]
    assert len(rollbacks) == 2 and all(r["reason"] == "history-edit" and r["mode"] == "journal" for r in rollbacks)
    assert sum(len(r["removed"]) for r in rollbacks) == 6
    assert all(u["undo"] == "remove" and u["before"].startswith("---\nid: ") for r in rollbacks for u in r["updated"])
    # Newest batch first, so nothing a later batch wrote is undone under it.
    first_batches = [r["batch"] for r in journal(vault) if r["type"] == "distill"][:3]
    assert [r["batches"][0] for r in rollbacks] == [first_batches[1], first_batches[0]]
    assert len(fake_llm.requests) - calls_before == 2

    # A third run rolls nothing back twice and calls nobody.
    snapshot = tree(vault)
    third = distill(run, fake_llm, now="2026-11-05T08:00:00Z")
    assert (third["rolled_back"], third["calls"], third["pending_before"]) == (0, 0, 0)
    assert tree(vault) == snapshot


def test_a_supersede_made_by_the_stale_batch_is_undone_byte_for_byte(run, vault, fake_llm):
    fake_llm.set_default(model)
    capture(run, chat("a", [("index?", "Index in SQLite")], day="2026-11-01"))
    distill(run, fake_llm, now="2026-11-01T12:00:00Z")
    [sqlite_path] = (vault / "cards").rglob("*.md")
    sqlite_before = sqlite_path.read_bytes()

    log = [("switch?", "SUPERSEDE: Index in SQLite -> Index in Postgres")]
    capture(run, chat("b", log))
    s = distill(run, fake_llm)
    assert s["cards"]["superseded"] == 1
    old = cards(vault)["Index in SQLite"]
    assert old.status == "superseded" and old.valid_to == "2026-11-02"
    entity = (vault / "entities/postgres.md").read_text()
    assert "Index in Postgres" in entity

    capture(run, chat("b", [("switch? edited", "Index in Redis")]))  # a history edit: the question changed
    s = distill(run, fake_llm, now=LATER)
    assert s["rolled_back"] == 1 and s["cards"]["created"] == 1
    got = cards(vault)
    assert "Index in Postgres" not in got and got["Index in Redis"].status == "active"
    assert sqlite_path.read_bytes() == sqlite_before  # status, valid_to and superseded_by all restored
    assert "Index in Postgres" not in (vault / "entities/postgres.md").read_text()
    [rb] = [r for r in journal(vault) if r["type"] == "rollback"]
    assert rb["restored"] == [old.id] and len(rb["removed"]) == 1
    restore = next(u for u in rb["updated"] if u["undo"] == "restore")
    assert "status: superseded" in restore["before"]  # the rollback's own before-image, for audit


def test_later_unaffected_batch_keeps_its_work_on_a_card_the_stale_batch_created(run, vault, fake_llm):
    fake_llm.set_default(model)
    capture(run, chat("b", [("store?", "Store memory as plain text files")]))
    distill(run, fake_llm)
    # Another session, distilled later, merges into the card the first batch created.
    capture(run, chat("c", [("again", "MERGE: Store memory as plain-text files")], day="2026-11-03"))
    s = distill(run, fake_llm, now=LATER)
    assert s["cards"]["merged"] == 1
    [merged] = cards(vault).values()
    c_episode = next(e.id for e in Vault.open(vault, {}).episodes() if e.session == "c")
    assert len(merged.episodes) == 2

    capture(run, chat("b", [("store? edited", "Keep memory in SQLite")]))
    s = distill(run, fake_llm, now="2026-11-05T08:00:00Z")
    assert s["rolled_back"] == 1
    got = cards(vault)
    kept = got[merged.title]
    assert kept.id == merged.id and kept.episodes == (c_episode,)  # the revoked turn left its sources
    assert kept.body == merged.body and kept.status == "active"
    assert "Keep memory in SQLite" in got
    [rb] = [r for r in journal(vault) if r["type"] == "rollback"]
    assert rb["kept"] == [merged.id] and rb["trimmed"] == [merged.id] and rb["removed"] == []


def test_unusable_before_image_falls_back_to_redistilling_and_keeps_cards(run, vault, fake_llm):
    fake_llm.set_default(model)
    capture(run, chat("a", [("index?", "Index in SQLite")], day="2026-11-01"))
    distill(run, fake_llm, now="2026-11-01T12:00:00Z")
    capture(run, chat("b", [("switch?", "SUPERSEDE: Index in SQLite -> Index in Postgres"),
                            ("ui?", "Build the UI in Svelte")]))
    distill(run, fake_llm)
    # The before-image of the superseded card is damaged by hand: an exact undo is impossible.
    path = vault / "journal/2026-11.jsonl"
    lines = path.read_text().splitlines()
    rec = json.loads(lines[-1])
    rec["superseded"][0]["before"] = "not a card"
    lines[-1] = codec.dump_json_line(rec)
    path.write_text("\n".join(lines) + "\n")
    before = {t: c for t, c in cards(vault).items()}

    capture(run, chat("b", [("switch?", "SUPERSEDE: Index in SQLite -> Index in Postgres"),
                            ("ui? edited", "Build the UI in React")]))
    s = distill(run, fake_llm, now=LATER)
    assert s["rolled_back"] == 1 and s["rollback_fallback"] == [rec["batch"]]
    got = cards(vault)
    for title, c in before.items():
        assert got[title] == c, title  # cards kept exactly
    assert "Build the UI in React" in got
    [rb] = [r for r in journal(vault) if r["type"] == "rollback"]
    assert rb["mode"] == "redistill" and rb["removed"] == [] and "before-image" in rb["problem"]
    # The batch's live turn 1 was distilled again with the new turn 2.
    assert s["episodes_distilled"] == 2
    assert distill(run, fake_llm, now="2026-11-05T08:00:00Z")["rolled_back"] == 0


def test_chinese_turns_roll_back_too(run, vault, fake_llm):
    fake_llm.set_default(model)
    capture(run, chat("z", [("数据库用什么", "决定 使用 SQLite"), ("队列呢", "决定 使用 Redis")]))
    distill(run, fake_llm)
    capture(run, chat("z", [("数据库用什么（改）", "决定 使用 Postgres"), ("队列呢", "决定 使用 Redis")]))
    s = distill(run, fake_llm, now=LATER)
    assert s["rolled_back"] == 1
    assert set(cards(vault)) == {"决定 使用 Postgres", "决定 使用 Redis"}


# ---------------------------------------------------------------- the rule, on cards alone


def _c(cid: str, **kw) -> Card:
    base = dict(kind="decision", title=cid, created="2026-11-02T08:00:00Z", valid_from="2026-11-02",
                source={"kind": "distill", "run": "r", "episodes": ["ep-old"]})
    base.update(kw)
    return Card(id=cid, **base)


def test_plan_keeps_a_card_a_later_batch_superseded_and_unlinks_the_restored_one():
    # The stale batch superseded X with its new Y; a later batch then superseded Y with Z.
    x_before = _c("x")
    x_now = _c("x", status="superseded", valid_to="2026-11-03", superseded_by=("y",))
    y_now = _c("y", status="superseded", valid_to="2026-11-04", supersedes=("x",), superseded_by=("z",),
               source={"kind": "distill", "run": "r", "episodes": ["ep-bad", "ep-live"]})
    z_now = _c("z", supersedes=("y",))
    current = {"x": x_now, "y": y_now, "z": z_now}
    plan = cardlib.plan_rollback(["y"], {"x": x_before}, ["x"], current, later={"y", "z"}, revoked={"ep-bad"})
    assert plan.removed == [] and plan.restored == ["x"] and plan.kept == ["y"] and plan.trimmed == ["y"]
    assert plan.cards["x"] == x_before
    y = plan.cards["y"]
    assert y.supersedes == () and y.superseded_by == ("z",) and y.status == "superseded"  # Z's work stays
    assert y.episodes == ("ep-live",)
    assert "z" not in plan.cards


def test_plan_reactivates_a_kept_card_whose_only_successor_is_removed():
    # X was superseded by the stale batch's Y and later retracted-then-... touched by hand (remember/forget).
    x_before = _c("x", valid_to=None)
    x_now = _c("x", status="superseded", valid_to="2026-11-03", superseded_by=("y",), tags=("later",))
    y_now = _c("y", supersedes=("x",))
    plan = cardlib.plan_rollback(["y"], {"x": x_before}, ["x"], {"x": x_now, "y": y_now}, later={"x"},
                                 revoked=set())
    assert plan.removed == ["y"] and plan.kept == ["x"]
    x = plan.cards["x"]
    assert x.status == "active" and x.valid_to is None and x.superseded_by == () and x.tags == ("later",)
