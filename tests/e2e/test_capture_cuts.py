"""A log that is only cut (`tail -n K`, `head -n K`) after the whole log was captured stores nothing and
revokes nothing: real processes, every example and fixture log, every format (issue 8, items 2 and 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEMVAULT = [sys.executable, "-m", "memvault"]
LOGS = sorted([*ROOT.glob("examples/*.json*"), *ROOT.glob("examples/*.txt"),
               *ROOT.glob("tests/data/formats/*.json*"), *ROOT.glob("tests/data/formats/*.txt")])


def _capture(vault: Path, data: bytes, extra: list[str]) -> dict | None:
    proc = subprocess.run([*MEMVAULT, "--vault", str(vault), "capture", "--json", *extra], input=data,
                          capture_output=True, timeout=120)
    if proc.returncode != 0:
        return None  # a cut JSON document is not JSON: nothing is read, nothing stored
    return json.loads(proc.stdout)


def cuts(path: Path) -> list[tuple[str, bytes]]:
    lines = path.read_bytes().splitlines(keepends=True)
    out = [(f"tail -n {k}", b"".join(lines[-k:])) for k in range(2, 7) if k < len(lines)]
    out += [(f"head -n {k}", b"".join(lines[:k])) for k in range(2, len(lines))]
    return out


def run_cuts(path: Path, vault: Path) -> tuple[int, list[str]]:
    """Capture the whole log, then every cut; returns (number of cuts, the cuts that stored or revoked)."""
    extra = ["--project", "shop"] if path.suffix == ".txt" else []
    whole = _capture(vault, path.read_bytes(), extra)
    assert whole is not None and whole["new"] > 0, path
    bad = []
    todo = cuts(path)
    for label, data in todo:
        res = _capture(vault, data, extra)
        if res is not None and (res["new"] or res["revoked"]):
            bad.append(f"{path.name} {label}: {res['new']} new, {res['revoked']} revoked")
    return len(todo), bad


def test_every_cut_of_every_log_stores_and_revokes_nothing(tmp_path):
    assert len(LOGS) >= 15
    def one(i_path):
        i, path = i_path
        vault = tmp_path / f"v{i}"
        subprocess.run([*MEMVAULT, "init", str(vault)], check=True, capture_output=True)
        return run_cuts(path, vault)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, enumerate(LOGS)))
    total = sum(n for n, _ in results)
    bad = [b for _, bs in results for b in bs]
    print(f"{total} cuts of {len(LOGS)} logs, {len(bad)} stored or revoked something")
    assert total > 150
    assert bad == [], "\n".join(bad)


@pytest.mark.parametrize("cmd", [["tail", "-n", "3"], ["tail", "-n", "4"]])
def test_tail_beginning_with_an_assistant_line_revokes_nothing(tmp_path, cmd):
    vault = tmp_path / "v"
    subprocess.run([*MEMVAULT, "init", str(vault)], check=True, capture_output=True)
    log = ROOT / "examples" / "claude-code-session.jsonl"
    assert _capture(vault, log.read_bytes(), [])["new"] == 4
    cut = subprocess.run([*cmd, str(log)], capture_output=True, check=True).stdout
    res = _capture(vault, cut, [])
    assert (res["new"], res["revoked"]) == (0, 0)


def test_cut_text_transcripts_piped_through_a_shell_store_nothing_twice(tmp_path):
    vault = tmp_path / "v"
    subprocess.run([*MEMVAULT, "init", str(vault)], check=True, capture_output=True)
    chat = tmp_path / "chat.txt"
    chat.write_text("User: Which queue should tidepool use?\nAssistant: Postgres SKIP LOCKED, no Redis.\n"
                    "用户：beta 推迟到哪天？\n助手：2026 年 4 月 29 日。\n"
                    "User: And who tells the pilot ports?\nAssistant: You do, this week.\n", encoding="utf-8")
    mv = " ".join([sys.executable, "-m", "memvault", "--vault", str(vault)])
    for cmd in (f"{mv} capture --project shop --json < {chat}", f"tail -n 2 {chat} | {mv} capture --project shop --json",
                f"head -3 {chat} | {mv} capture --project shop --json",
                f"tail -n 3 {chat} | {mv} capture --project shop --json"):
        out = json.loads(subprocess.run(cmd, shell=True, check=True, capture_output=True).stdout)
        if "tail" in cmd or "head" in cmd:
            assert (out["new"], out["revoked"]) == (0, 0), cmd
    lines = [json.loads(x) for f in (vault / "episodes").rglob("*.jsonl") for x in f.read_text().splitlines()]
    assert len(lines) == 3 and len({e["session"] for e in lines}) == 1
