"""After Ctrl-C (or a crash) in the middle of a distill batch, `doctor` says what happened and does not call it
damage (issue 21, item 6): exit 0, a warning naming the interrupted batch and that the next distill rolls it
back, never "a git merge or a hand edit". `doctor --fix` rolls it back itself; while a distill runs, doctor says
so. Real processes; SIGINT is sent by the process to itself at the commit point, exactly as Ctrl-C would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_distill_offline import TURNS, episode_lines, make_vault, memvault

ROOT = Path(__file__).resolve().parents[2]


def interrupted_vault(path: Path, signal_name: str) -> Path:
    vault = make_vault(path, TURNS[:6])
    assert memvault(vault, "distill").returncode == 0
    with open(vault / "episodes/2026/11/2026-11-02.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n".join(episode_lines(TURNS[6:], start=6)) + "\n")
    # The second batch is stopped after its second card file, before its entity pages and journal line.
    env = {"MEMVAULT_CRASH_AT": "after-card:2"} | ({"MEMVAULT_CRASH_SIGNAL": "INT"} if signal_name == "INT" else {})
    stopped = memvault(vault, "distill", extra_env=env)
    assert stopped.returncode == (130 if signal_name == "INT" else -9), stopped.stderr
    assert (vault / ".memvault" / "write-intent.json").exists()
    return vault


@pytest.mark.parametrize("signal_name", ["INT", "KILL"])
def test_doctor_after_an_interrupted_batch_is_not_damage(tmp_path, signal_name):
    vault = interrupted_vault(tmp_path / "v", signal_name)
    doc = memvault(vault, "doctor")
    assert doc.returncode == 0, doc.stdout + doc.stderr
    assert "interrupted" in doc.stderr and "not damage" in doc.stderr and "next `memvault distill`" in doc.stderr
    assert "hand edit" not in doc.stdout + doc.stderr and doc.stdout == ""
    report = json.loads(memvault(vault, "doctor", "--json").stdout)
    assert report["ok"] and report["problems"] == [] and any("interrupted" in w for w in report["warnings"])
    # the next distill rolls it back and finishes: doctor is clean, nothing is pending
    assert memvault(vault, "distill").returncode == 0
    after = json.loads(memvault(vault, "doctor", "--json").stdout)
    assert after["ok"] and not any("interrupted" in w for w in after["warnings"])
    assert json.loads(memvault(vault, "stats", "--json").stdout)["pending_episodes"] == 0


def test_doctor_fix_rolls_the_batch_back(tmp_path):
    vault = interrupted_vault(tmp_path / "v", "INT")
    fixed = memvault(vault, "doctor", "--fix", "--json")
    assert fixed.returncode == 0, fixed.stderr
    report = json.loads(fixed.stdout)
    assert any("interrupted, rolled back" in f for f in report["fixed"])
    assert report["ok"] and not any("interrupted" in w for w in report["warnings"])
    assert not (vault / ".memvault" / "write-intent.json").exists()
    stats = json.loads(memvault(vault, "stats", "--json").stdout)
    assert stats["pending_episodes"] > 0  # the batch's turns wait for the next distill
    assert memvault(vault, "distill").returncode == 0
    assert json.loads(memvault(vault, "stats", "--json").stdout)["pending_episodes"] == 0


def test_doctor_while_a_distill_holds_the_lock_says_it_is_running(tmp_path):
    vault = interrupted_vault(tmp_path / "v", "INT")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\nfcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\nsys.stdin.read()\n", str(vault / ".memvault" / "distill.lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        doc = memvault(vault, "doctor")
        assert doc.returncode == 0 and "running now" in doc.stderr and "hand edit" not in doc.stdout
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
