"""Facts that differ in one value, end to end (issue 21, item 10): two machines each write a `fact` card about
the NAS's address, git merges them, and `memvault conflicts` (and doctor) report the pair; `resolve` settles
it. The shipped examples (captured and distilled offline) and the eval fixture give no spurious pair."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MEMVAULT = [sys.executable, "-m", "memvault"]


def mv(vault: Path, *args: str, code: int = 0, env: dict | None = None) -> str:
    import os

    done = subprocess.run([*MEMVAULT, "--vault", str(vault), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})
    assert done.returncode == code, (args, done.returncode, done.stderr)
    return done.stdout


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def value_pairs(vault: Path) -> list[dict]:
    return [c for c in json.loads(mv(vault, "conflicts", "--json"))["conflicts"] if c["sort"] == "value"]


def test_two_machines_state_two_addresses_and_conflicts_says_so(tmp_path):
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    subprocess.run([*MEMVAULT, "init", str(laptop), "--git"], check=True, capture_output=True)
    git(laptop, "log", "-1")  # init --git made the first commit
    git(tmp_path, "clone", "-q", str(laptop), str(desktop))
    mv(laptop, "remember", "The NAS answers on 10.0.0.5", "--kind", "fact", "-e", "nas", "--project", "home",
       env={"MEMVAULT_NOW": "2026-11-02T08:00:00Z"})
    mv(desktop, "remember", "The NAS answers on 10.0.0.9", "--kind", "fact", "-e", "nas", "--project", "home",
       env={"MEMVAULT_NOW": "2026-11-03T08:00:00Z"})
    mv(desktop, "remember", "The NAS has four bays", "--kind", "fact", "-e", "nas", "--project", "home")
    for v in (laptop, desktop):
        git(v, "add", "-A")
        git(v, "commit", "-qm", f"cards on {v.name}")
    git(laptop, "pull", "-q", "--no-rebase", "--no-edit", str(desktop), "HEAD")
    mv(laptop, "reindex")
    [pair] = value_pairs(laptop)
    assert {pair["a_title"], pair["b_title"]} == {"The NAS answers on 10.0.0.5", "The NAS answers on 10.0.0.9"}
    assert "nas" in pair["reason"]
    text = mv(laptop, "conflicts")
    assert "value" in text
    doc = subprocess.run([*MEMVAULT, "--vault", str(laptop), "doctor", "--json"], capture_output=True, text=True)
    assert doc.returncode == 0 and len(json.loads(doc.stdout)["conflicts"]) == 1  # one entry per pair (issue 38)
    newer = pair["a"] if pair["a_title"].endswith("10.0.0.9") else pair["b"]
    older = pair["b"] if newer == pair["a"] else pair["a"]
    mv(laptop, "resolve", newer, "--over", older)
    assert value_pairs(laptop) == []


def test_no_spurious_value_pair_in_the_shipped_examples_and_the_eval_fixture(tmp_path):
    fixture = tmp_path / "fixture"
    shutil.copytree(ROOT / "eval" / "fixture", fixture)
    found = json.loads(mv(fixture, "conflicts", "--json"))
    print(f"eval fixture: {found['count']} conflicts, {len(value_pairs(fixture))} of sort value")
    assert value_pairs(fixture) == []
    demo = tmp_path / "demo"
    subprocess.run([*MEMVAULT, "init", str(demo)], check=True, capture_output=True)
    for log in sorted((ROOT / "examples").glob("*.json*")) + sorted((ROOT / "examples").glob("*.txt")):
        mv(demo, "capture", str(log), *(["--project", "demo"] if log.suffix == ".txt" else []))
    mv(demo, "distill")
    facts = [p for p in (demo / "cards").rglob("*.md") if "kind: fact" in p.read_text(encoding="utf-8")]
    print(f"examples: {len(facts)} fact cards, {len(value_pairs(demo))} value pairs")
    assert value_pairs(demo) == []
