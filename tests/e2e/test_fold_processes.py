"""Real processes for the fold of `memvault consolidate`: kill -9 at each point of its change set then a rerun
(the tree a crash-free run leaves, one journal line), the distill lock held by another process (exit 4, nothing
written), and a rerun that changes nothing."""

from __future__ import annotations

import json
import shutil
import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_conflicts_cli import put  # noqa: E402
from test_resolve_processes import ROOT, hold_lock, memvault, tree  # noqa: E402


def make_vault(path: Path, extra: int = 0) -> Path:
    """Two folds (en facts about redis, zh events about 灯塔) and a decision, all older than 90 days; `extra`
    more old facts about postgres (a change set of more than pages.MANY cards is written another way)."""
    shutil.copytree(ROOT / "vault-template", path)
    for i in range(extra):
        put(path, f"c-20260115-b{i:05d}", kind="fact", title=f"Postgres note {i}", project="shop",
            entities=("postgres",), day="2026-01-15")
    for i, day in enumerate(("2026-03-01", "2026-04-02", "2026-05-03", "2026-06-04", "2026-06-20")):
        put(path, f"c-{day.replace('-', '')}-e0000{i}", kind="fact", title=f"Redis note {i} about snapshots",
            project="shop", entities=("redis",), day=day)
    for i, day in enumerate(("2026-03-05", "2026-04-06", "2026-05-07", "2026-06-08")):
        put(path, f"c-{day.replace('-', '')}-z0000{i}", kind="event", title=f"灯塔第{i}夜亮起", project="novel",
            entities=("灯塔",), day=day)
    put(path, "c-20260310-d00001", kind="decision", title="Use Redis for queues", project="shop",
        entities=("redis",), day="2026-03-10")
    return path


def journal_types(vault: Path) -> list[str]:
    return [json.loads(x)["type"] for p in sorted((vault / "journal").glob("*.jsonl")) for x in p.read_text().splitlines()]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    ref = make_vault(tmp_path_factory.mktemp("ref") / "v")
    done = memvault(ref, "consolidate", "--json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["folded"]) == 2
    return tree(ref)


@pytest.mark.parametrize("point", ["consolidate:after-card", "consolidate:before-journal",
                                   "consolidate:after-journal"])
def test_kill_9_during_a_fold_then_rerun_gives_the_same_tree(tmp_path, reference, point):
    vault = make_vault(tmp_path / "v")
    untouched = tree(vault)
    crashed = memvault(vault, "consolidate", extra_env={"MEMVAULT_CRASH_AT": point})
    assert crashed.returncode == -signal.SIGKILL
    assert (vault / ".memvault/write-intent.json").exists()
    if point != "consolidate:after-journal":
        assert tree(vault) != untouched and journal_types(vault) == []  # half-written, not committed
    rerun = memvault(vault, "consolidate", "--json")
    assert rerun.returncode == 0, rerun.stderr
    assert len(json.loads(rerun.stdout)["folded"]) == (0 if point == "consolidate:after-journal" else 2)
    assert tree(vault) == reference
    assert journal_types(vault) == ["consolidate"]
    assert not (vault / ".memvault/write-intent.json").exists()
    again = memvault(vault, "consolidate", "--json")
    assert json.loads(again.stdout)["folded"] == [] and tree(vault) == reference  # a rerun is a no-op
    assert journal_types(vault) == ["consolidate"]


def test_doctor_after_a_killed_consolidate_says_what_a_consolidate_needs(tmp_path, reference):
    """Not "the next distill rolls it back and distils its turns again" (issue 38): a consolidate has no
    turns; the next card change rolls it back and the person runs consolidate again."""
    vault = make_vault(tmp_path / "v")
    crashed = memvault(vault, "consolidate", extra_env={"MEMVAULT_CRASH_AT": "consolidate:after-card"})
    assert crashed.returncode == -signal.SIGKILL
    doc = memvault(vault, "doctor", "--json")
    (note,) = [w for w in json.loads(doc.stdout)["warnings"] if "interrupted" in w]
    assert doc.returncode == 0 and note.startswith("change s-") and "distils its turns" not in note
    assert "run the command that made it again" in note
    fixed = json.loads(memvault(vault, "doctor", "--fix", "--json").stdout)["fixed"]
    assert any(f.startswith("change s-") and "rolled back" in f and "turns" not in f for f in fixed)
    assert memvault(vault, "consolidate").returncode == 0 and tree(vault) == reference


def test_a_fold_waits_for_no_one_when_the_lock_is_held(tmp_path, reference):
    vault = make_vault(tmp_path / "v")
    holder = hold_lock(vault)
    try:
        before = tree(vault)
        busy = memvault(vault, "consolidate", "--fold-only")
        assert busy.returncode == 4, busy.stderr
        assert tree(vault) == before and journal_types(vault) == []
    finally:
        holder.kill()
        holder.wait(timeout=10)
    done = memvault(vault, "consolidate")
    assert done.returncode == 0, done.stderr
    assert tree(vault) == reference


def test_kill_9_during_a_big_fold_then_rerun_gives_the_same_tree(tmp_path):
    ref = make_vault(tmp_path / "ref", extra=80)
    assert memvault(ref, "consolidate").returncode == 0
    vault = make_vault(tmp_path / "v", extra=80)
    crashed = memvault(vault, "consolidate", extra_env={"MEMVAULT_CRASH_AT": "consolidate:before-journal"})
    assert crashed.returncode == -signal.SIGKILL and journal_types(vault) == []
    rerun = memvault(vault, "consolidate", "--json")
    assert len(json.loads(rerun.stdout)["folded"]) == 2 + 10  # 80 postgres facts: 10 folds of 8
    assert tree(vault) == tree(ref) and journal_types(vault) == ["consolidate"]
