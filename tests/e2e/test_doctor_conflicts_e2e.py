"""doctor's conflicts across runs, in real processes (issue 37): the second doctor on an unchanged vault reuses the
first one's findings (.memvault/doctor-conflicts.cache); after a change it reports the new conflict and drops the
settled one; past 200 pairs it stops, says so, and `memvault conflicts` still lists them all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from memvault.model import Card
from memvault.vault import codec

MEMVAULT = [sys.executable, "-m", "memvault"]


def doctor(vault: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([*MEMVAULT, "--vault", str(vault), "doctor", *args], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def put(vault: Path, cid: str, age: int = 60, **kw) -> Path:
    """A card file as a git merge leaves it, older than the two seconds doctor does not trust an mtime for."""
    day = kw.pop("day", "2026-11-01")
    card = Card(id=cid, created=f"{day}T08:00:00Z", valid_from=day, source={"kind": "remember"}, **kw)
    path = vault / "cards" / day[:7] / f"{cid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(codec.card_to_text(card), encoding="utf-8")
    past = time.time() - age
    os.utime(path, (past, past))
    return path


def pairs(vault: Path) -> set[tuple[str, str, str]]:
    return {(c["a"], c["b"], c["sort"]) for c in
            json.loads(subprocess.run([*MEMVAULT, "--vault", str(vault), "conflicts", "--json"], capture_output=True,
                                      text=True, check=True).stdout)["conflicts"]}


def test_a_change_between_two_doctors_shows_the_new_conflict_and_drops_the_settled_one(vault):
    put(vault, "c-20261101-aaa001", kind="state", title="Shop database engine: Postgres", project="shop",
        subject="shop database", field="engine", value="Postgres")
    put(vault, "c-20261102-aaa002", kind="state", title="Shop database engine: SQLite", project="shop",
        subject="shop database", field="engine", value="SQLite", day="2026-11-02")
    put(vault, "c-20261101-bbb001", kind="rule", title="发布前必须运行全部测试", project="novel")
    first = json.loads(doctor(vault, "--json").stdout)
    assert len(first["conflicts"]) == 1 and "c-20261102-aaa002" in first["conflicts"][0]
    assert first["more_conflicts"] is False
    cache = vault / ".memvault" / "doctor-conflicts.cache"
    stored = cache.stat().st_mtime_ns
    # Unchanged: the same findings, taken from the cache (the file is not written again).
    assert json.loads(doctor(vault, "--json").stdout)["conflicts"] == first["conflicts"]
    assert cache.stat().st_mtime_ns == stored
    # A person settles the engine pair by hand (the SQLite card is superseded) and a git pull brings a near-duplicate
    # of the Chinese rule; both files are older than two seconds, so doctor trusts its caches for the others.
    put(vault, "c-20261102-aaa002", age=30, kind="state", title="Shop database engine: SQLite", project="shop",
        subject="shop database", field="engine", value="SQLite", day="2026-11-02", status="superseded")
    put(vault, "c-20261101-bbb002", age=30, kind="rule", title="发布前必须运行全部的测试。", project="novel")
    text = doctor(vault, "-v")
    lines = text.stdout.splitlines()
    assert len(lines) == 2 and all("conflicts with c-20261101-bbb00" in line and "duplicate" in line for line in lines)
    assert not any("aaa00" in line for line in lines)
    assert "1 conflicts" in text.stderr
    again = json.loads(doctor(vault, "--json").stdout)["conflicts"]
    assert len(again) == 1 and "c-20261101-bbb001" in again[0] and "c-20261101-bbb002" in again[0]
    assert pairs(vault) == {("c-20261101-bbb001", "c-20261101-bbb002", "duplicate")}


def test_past_200_pairs_doctor_stops_and_says_so_while_conflicts_lists_all(vault):
    for i in range(21):  # 21 cards with one title: 210 near-duplicate pairs
        put(vault, f"c-20261101-ccc{i:03d}", kind="decision", title="Backups run nightly at two", project="home")
    put(vault, "c-20261101-ddd001", kind="decision", title="备份每晚两点运行", project="home")
    report = json.loads(doctor(vault, "--json").stdout)
    assert len(report["conflicts"]) == 200 and report["more_conflicts"] is True
    text = doctor(vault, "-v")
    assert len(text.stdout.splitlines()) == 400  # one line for each card of a pair
    assert "more than 200 conflicts (the first 200 listed; memvault conflicts lists them all)" in text.stderr
    assert len(pairs(vault)) == 210
