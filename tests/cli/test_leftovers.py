"""What a stopped writer leaves (issue 38), without a crash: a temp file of a killed write is reported by doctor
and removed by `doctor --fix` and by the next writer once the lock's last holder is known to have died; a purge
done before a clone is not reported as unfinished there (its index was built from files without the text)."""

from __future__ import annotations

import json
import os
import time

from test_conflicts_cli import put

TEXT = "the ferry code is 7731 and 渡船口令"


def stale_temp(vault, name="cards/2026-11/.c-20261101-aaa001.md.k3j2h1g0.tmp"):
    path = vault / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TEXT, encoding="utf-8")
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def test_doctor_reports_a_stale_temp_file_and_fix_removes_it(run, vault):
    put(vault, "c-20261101-aaa001", kind="fact", title="Ferry timetable", project="sea")
    temp = stale_temp(vault)
    report = run.json("doctor", code=3)
    assert report["problems"] == ["cards/2026-11/.c-20261101-aaa001.md.k3j2h1g0.tmp: temp file left by a stopped "
                                  "write (it may hold text a purge removed): `memvault doctor --fix` removes it"]
    fixed = run.json("doctor", "--fix")
    assert not temp.exists() and any(".tmp" in f for f in fixed["fixed"]) and fixed["problems"] == []
    assert (vault / "cards/2026-11/c-20261101-aaa001.md").exists()


def test_the_next_writer_removes_temp_files_of_a_holder_that_died(run, vault):
    put(vault, "c-20261101-aaa001", kind="fact", title="Ferry timetable", project="sea")
    run("remember", "Ferry leaves at nine", "--project", "sea")  # the lock file: a holder that let go
    kept = stale_temp(vault, "entities/.ferry.md.a1b2c3d4.tmp")
    run("remember", "Ferry returns at five", "--project", "sea")
    assert kept.exists()  # the last holder let go cleanly: this temp file is not known to be its
    lock = vault / ".memvault/distill.lock"
    lock.write_text(json.dumps({"pid": 999999, "since": "2026-11-01T08:00:00Z"}), encoding="utf-8")  # killed
    run("remember", "Ferry is cancelled in storms", "--project", "sea")
    assert not kept.exists() and b'"released"' in lock.read_bytes()


def test_a_purge_done_before_a_clone_is_not_reported_unfinished_there(run, vault):
    put(vault, "c-20261101-aaa001", kind="fact", title=TEXT, project="sea")
    put(vault, "c-20261101-aaa002", kind="fact", title="Harbour pilot on duty", project="sea")
    run("forget", "c-20261101-aaa001", "--purge")
    (vault / ".memvault/purges.json").unlink()  # as a fresh clone has no record of purges yet
    run("search", "pilot")  # builds the index from files without the text
    report = run.json("doctor")
    assert report["problems"] == []
    run("remember", "Pilot boat repainted", "--project", "sea")  # finishes the purge once more: nothing to do
    assert json.loads((vault / ".memvault/purges.json").read_text())["done"]
    assert run.json("doctor")["problems"] == []


def test_an_old_temp_file_of_a_derived_file_goes_a_fresh_one_stays(run, vault):
    """.memvault/ temp files of caches a search writes (no lock): only an hour-old one is left behind."""
    (vault / ".memvault").mkdir(exist_ok=True)
    old = stale_temp(vault, ".memvault/.settings.json.x1y2z3w4.tmp")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    fresh = stale_temp(vault, ".memvault/.episodes.cache.q1w2e3r4.tmp")
    os.utime(fresh, None)
    report = run.json("doctor", code=3)
    assert [p.split(":")[0] for p in report["problems"]] == [".memvault/.settings.json.x1y2z3w4.tmp"]
    run("doctor", "--fix")
    assert not old.exists() and fresh.exists()


def test_a_purge_leaves_nothing_in_doctors_caches(run, vault):
    put(vault, "c-20261101-aaa001", kind="fact", title=TEXT, project="sea", entities=("ferry",))
    put(vault, "c-20261101-aaa002", kind="fact", title="Harbour pilot on duty", project="sea")
    for card in (vault / "cards").rglob("*.md"):  # doctor remembers files not changed in the last 2 s
        os.utime(card, (time.time() - 60, time.time() - 60))
    run("doctor")
    run("search", "ferry")
    held = [p.name for p in (vault / ".memvault").iterdir() if p.is_file() and b"7731" in p.read_bytes()]
    assert "doctor-cards.cache" in held
    run("forget", "c-20261101-aaa001", "--purge")
    assert [p for p in vault.rglob("*") if p.is_file() and b"7731" in p.read_bytes()] == []
    assert run.json("doctor")["problems"] == []
