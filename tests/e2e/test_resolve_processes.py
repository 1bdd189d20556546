"""Real processes for `memvault resolve`: the distill lock held by another process (exit 4, nothing written),
kill -9 at each point of its change set then a rerun (the tree a crash-free run leaves), and a rerun no-op."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_conflicts_cli import put  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-05T08:00:00Z"
A, B = "c-20261101-aaa001", "c-20261102-aaa002"


def make_vault(path: Path) -> Path:
    shutil.copytree(ROOT / "vault-template", path)
    put(path, A, kind="state", title="Deploy target: fly.io", project="shop", subject="deploy", field="target",
        value="fly.io", entities=("deploy",))
    put(path, B, kind="state", title="部署目标：阿里云", project="shop", subject="deploy", field="target", value="阿里云",
        entities=("deploy",), day="2026-11-02")
    return path


def memvault(vault: Path, *args: str, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update({"MEMVAULT_NOW": NOW, **(extra_env or {})})
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(root).parts}


@pytest.fixture
def reference(tmp_path):
    ref = make_vault(tmp_path / "ref")
    done = memvault(ref, "resolve", A, "--over", B, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["changed"] is True
    return tree(ref)


@pytest.mark.parametrize("point", ["resolve:after-card", "resolve:before-journal", "resolve:after-journal"])
def test_kill_9_then_rerun_gives_the_same_tree(tmp_path, reference, point):
    vault = make_vault(tmp_path / point.replace(":", "-"))
    untouched = tree(vault)
    crashed = memvault(vault, "resolve", A, "--over", B, extra_env={"MEMVAULT_CRASH_AT": point})
    assert crashed.returncode == -signal.SIGKILL
    assert (vault / ".memvault/write-intent.json").exists()
    if point != "resolve:after-journal":
        assert tree(vault) != untouched  # the crash left a half-written change set
    rerun = memvault(vault, "resolve", A, "--over", B, "--json")
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["changed"] is (point != "resolve:after-journal")
    assert tree(vault) == reference
    assert not (vault / ".memvault/write-intent.json").exists()
    lines = [json.loads(x) for p in (vault / "journal").glob("*.jsonl") for x in p.read_text().splitlines()]
    assert [r["type"] for r in lines] == ["resolve"]


def hold_lock(vault: Path) -> subprocess.Popen:
    """Another real process holding the vault's distill lock until killed."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom memvault.vault.store import Vault\n"
         "v = Vault.open(sys.argv[1], {})\nwith v.exclusive('distill', 'test holder'):\n"
         "    print('held', flush=True)\n    time.sleep(600)\n", str(vault)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_lock_held_by_another_process_exits_4_and_writes_nothing(tmp_path):
    vault = make_vault(tmp_path / "v")
    holder = hold_lock(vault)
    try:
        before = tree(vault)
        busy = memvault(vault, "resolve", A, "--over", B)  # the holder keeps the lock until killed: exit 4 at once
        assert busy.returncode == 4, busy.stderr
        assert tree(vault) == before
    finally:
        holder.kill()
        holder.wait(timeout=10)
    done = memvault(vault, "resolve", A, "--over", B)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("point", ["consolidate:after-card", "consolidate:before-journal"])
def test_consolidate_kill_9_then_rerun_gives_the_same_tree(tmp_path, point):
    ref = make_vault(tmp_path / "ref")
    assert memvault(ref, "consolidate").returncode == 0
    vault = make_vault(tmp_path / point.replace(":", "-"))
    crashed = memvault(vault, "consolidate", extra_env={"MEMVAULT_CRASH_AT": point})
    assert crashed.returncode == -signal.SIGKILL
    rerun = memvault(vault, "consolidate", "--json")
    assert rerun.returncode == 0, rerun.stderr
    assert len(json.loads(rerun.stdout)["written"]) == 1
    assert tree(vault) == tree(ref)
    again = memvault(vault, "consolidate", "--json")
    assert json.loads(again.stdout)["written"] == [] and tree(vault) == tree(ref)


def test_consolidate_waits_for_no_one_when_the_lock_is_held(tmp_path):
    vault = make_vault(tmp_path / "v")
    holder = hold_lock(vault)
    try:
        before = tree(vault)
        busy = memvault(vault, "consolidate")
        assert busy.returncode == 4, busy.stderr
        assert tree(vault) == before
    finally:
        holder.kill()
        holder.wait(timeout=10)
