"""Real processes for the LLM synopsis, reflect and the synopsis rule of `distill --auto` (issue 14): the fake
model is a server process (tests/fake_llm.py, answers from tests/synopsis_fake.py); kill -9 at each point of
the change sets, then a rerun, leaves the tree an uninterrupted run leaves; the distill lock held by another
process makes both commands exit 4 before any call; reruns are no-ops."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fake_llm import stop_process

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "cli"))
sys.path.insert(0, str(TESTS / "e2e"))
from test_conflicts_cli import put  # noqa: E402
from test_resolve_processes import hold_lock  # noqa: E402
from write_protocol import use_write  # noqa: E402

ROOT = TESTS.parent
NOW = "2026-11-05T08:00:00Z"


@pytest.fixture
def fake(tmp_path):
    from fake_llm import start_process

    proc, url, log = start_process(tmp_path / "requests.jsonl", f"{TESTS / 'synopsis_fake.py'}:answer")
    yield url, log
    stop_process(proc)


def requests(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def make_vault(path: Path) -> Path:
    shutil.copytree(ROOT / "vault-template", path)
    for i, title in enumerate(["Use Postgres for orders", "Never deploy on Fridays", "Payments integration open",
                               "Drop webpack for plain ES modules"]):
        put(path, f"c-20261101-a0000{i}", kind=["decision", "rule", "thread", "decision"][i], title=title,
            project="shop", entities=("shop",))
    for i, title in enumerate(["第三章改用第一人称", "删掉序章", "结局保留灯塔线索", "主角不用超能力"]):
        put(path, f"c-20261101-b0000{i}", kind="decision", title=title, project="novel")
    return path


def memvault(vault: Path, url: str, *args: str, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update({"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_NOW": NOW, "MEMVAULT_LLM_MAX_RETRIES": "0",
                **(extra_env or {})})
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(root).parts}


def journal_types(vault: Path) -> list[str]:
    return [json.loads(x)["type"] for p in sorted((vault / "journal").glob("*.jsonl")) for x in p.read_text().splitlines()]


STEPS = (("consolidate", "--engine", "llm", "--json"), ("reflect", "--json"))


@pytest.mark.parametrize("point", ["consolidate:after-card", "consolidate:before-journal", "consolidate:after-journal",
                                   "reflect:after-card", "reflect:before-journal", "reflect:after-journal"])
def test_kill_9_then_rerun_gives_the_same_tree(tmp_path, fake, point):
    url, log = fake
    ref = make_vault(tmp_path / "ref")
    for step in STEPS:
        done = memvault(ref, url, *step)
        assert done.returncode == 0 and json.loads(done.stdout)["written"], done.stderr
    vault = make_vault(tmp_path / "v")
    for step in STEPS:
        if step[0] == point.split(":")[0]:
            untouched = tree(vault)
            crashed = memvault(vault, url, *step, extra_env={"MEMVAULT_CRASH_AT": point})
            assert crashed.returncode == -signal.SIGKILL
            assert (vault / ".memvault/write-intent.json").exists()
            assert tree(vault) != untouched  # something was half-written
        done = memvault(vault, url, *step)
        assert done.returncode == 0, done.stderr
    assert tree(vault) == tree(ref)
    assert journal_types(vault) == ["consolidate", "reflect"]
    assert not (vault / ".memvault/write-intent.json").exists()
    asked = len(requests(log))
    for step in STEPS:  # a rerun with nothing new: no call, no file, no journal line
        again = memvault(vault, url, *step)
        assert json.loads(again.stdout)["written"] == [] and again.returncode == 0
    assert tree(vault) == tree(ref) and len(requests(log)) == asked


def test_lock_held_by_another_process_exits_4_before_any_call(tmp_path, fake):
    url, log = fake
    vault = make_vault(tmp_path / "v")
    holder = hold_lock(vault)
    try:
        before = tree(vault)
        for step in STEPS:
            busy = memvault(vault, url, *step)
            assert busy.returncode == 4 and "distill" in busy.stderr, busy.stderr
        assert tree(vault) == before and requests(log) == []
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert memvault(vault, url, "reflect").returncode == 0


def episodes_vault(path: Path) -> Path:
    from memvault.model import Episode
    from memvault.vault import codec

    shutil.copytree(ROOT / "vault-template", path)
    use_write(path)  # its fake model writes every card (tests/write_protocol.py)
    lines = []
    for i in range(24):
        topic = ["Postgres", "SQLite", "周报", "Markdown", "pytest", "ruff"][i % 6]
        user = f"Decision {i}: use {topic} for part {i}" if i % 3 else f"第{i}个决定：用 {topic}"
        ep = Episode(id=f"ep-20261102T0700{i:02d}-{i:06x}", at=f"2026-11-02T07:{i:02d}:00Z", project="demo",
                     session="s1", turn=i + 1, user=user, assistant="ok", hash=f"sha256:{i}")
        lines.append(codec.episode_to_line(ep))
    (path / "episodes/2026/11").mkdir(parents=True)
    (path / "episodes/2026/11/2026-11-02.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = (path / "memvault.yaml").read_text().replace("every_cards: 50 ", "every_cards: 5  ")
    (path / "memvault.yaml").write_text(config)
    return path


def test_distill_auto_writes_the_synopsis_and_reflections_when_the_rule_says_so(tmp_path, fake):
    url, log = fake
    vault = episodes_vault(tmp_path / "v")
    explain = memvault(vault, url, "distill", "--auto", "--explain")
    assert explain.stdout.startswith("would run: 24 episodes waiting") and requests(log) == []
    done = memvault(vault, url, "distill", "--auto", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["cards"]["created"] == 12
    assert data["upkeep"]["synopsis"] == [{"project": "demo", "run": True, "reason": "12 new cards (every_cards 5)",
                                           "warnings": []}]
    [syn] = data["upkeep"]["consolidate"]["written"]
    assert syn["engine"] == "llm" and syn["lines"] == 8
    [insight] = data["upkeep"]["reflect"]["written"]
    assert len(insight["cards"]) == 2
    text = next(vault.glob(f"cards/*/{syn['id']}.md")).read_text()
    assert "engine: llm" in text and "kind: synopsis" in text
    assert journal_types(vault)[-2:] == ["consolidate", "reflect"]
    kinds = [r["body"]["messages"][0]["content"][:24] for r in requests(log)]
    assert kinds[-2:] == ["You write the synopsis o", "You look over the recent"]
    before, asked = tree(vault), len(requests(log))
    again = memvault(vault, url, "distill", "--auto", "--json", extra_env={"MEMVAULT_NOW": "2026-11-05T09:00:00Z"})
    quiet = json.loads(again.stdout)
    assert quiet["ran"] is False and quiet["upkeep"]["consolidate"] is None
    assert quiet["upkeep"]["synopsis"][0]["reason"] == "no new cards since the last synopsis"
    assert tree(vault) == before and len(requests(log)) == asked
    text_run = memvault(vault, url, "distill", "--auto", "--explain")
    assert "synopsis of demo: would not run: no new cards since the last synopsis" in text_run.stdout


def test_distill_auto_with_the_lock_held_warns_and_leaves_the_synopsis_for_the_next_run(tmp_path, fake):
    url, log = fake
    vault = make_vault(tmp_path / "v")  # cards, no episodes: distill has nothing to do, the synopsis is due
    config = (vault / "memvault.yaml").read_text().replace("every_cards: 50 ", "every_cards: 2  ")
    (vault / "memvault.yaml").write_text(config)
    holder = hold_lock(vault)
    try:
        busy = memvault(vault, url, "distill", "--auto", "--json")
        assert busy.returncode == 0 and "synopsis not written now" in busy.stderr, busy.stderr
        assert json.loads(busy.stdout)["upkeep"]["busy"] is True and requests(log) == []
    finally:
        holder.kill()
        holder.wait(timeout=10)
    done = json.loads(memvault(vault, url, "distill", "--auto", "--json").stdout)
    assert [w["project"] for w in done["upkeep"]["consolidate"]["written"]] == ["novel", "shop"]
    assert len(done["upkeep"]["reflect"]["written"]) == 2
