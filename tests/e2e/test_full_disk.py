"""A full disk (issue 38): a vault on a small tmpfs filled to the last byte. Reading commands answer from the
current index (it is read as it is, its journal mode untouched); every writing command says `no space left on
PATH` in one line and exits 6, leaving no torn line and no half-written file; once space is freed, the same
commands store everything exactly once. Real processes, a real file system (tmpfs, mounted as root)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from test_distill_offline import TURNS, episode_lines, make_vault, memvault

LATER = {"MEMVAULT_NOW": "2027-06-01T08:00:00Z"}  # consolidate has old cards to fold


@pytest.fixture
def small_disk(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a 4 MiB tmpfs needs root (CI runs as root)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not allowed here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(mnt: Path) -> Path:
    """Write a file until the disk refuses one more byte."""
    filler = mnt / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 16, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def truth(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(vault).parts}


WRITERS = [
    ("capture", ("capture", "--format", "text"), {}),
    ("distill", ("distill",), {}),
    ("remember", ("remember", "Backups go to the NAS every night"), {}),
    ("forget --retract", ("forget", "CARD", "--retract"), {}),
    ("forget --purge", ("forget", "CARD", "--purge", "--with-episodes"), {}),
    ("consolidate", ("consolidate",), LATER),
    ("doctor --fix", ("doctor", "--fix"), {}),
    ("reindex", ("reindex",), {}),
]
NEW_TURN = "User: the garage door opener battery is a CR2032\nAssistant: noted\n"


def test_a_full_disk_reads_refuses_writes_in_one_line_then_stores_everything_once(small_disk):
    vault = make_vault(small_disk / "v", TURNS[:8])
    assert memvault(vault, "distill").returncode == 0
    with open(vault / "episodes/2026/11/2026-11-02.jsonl", "a", encoding="utf-8") as fh:  # waiting for distill
        fh.write("\n".join(episode_lines(TURNS[8:], start=8)) + "\n")
    page = next((vault / "entities").glob("*.md"))  # an out-of-date page: doctor --fix has work
    page.write_text(page.read_text(encoding="utf-8").replace("- [[", "- [[c-x]]\n- [[", 1), encoding="utf-8")
    assert memvault(vault, "search", "Jellyfin").returncode == 0  # the index is current
    card = json.loads(memvault(vault, "search", "Jellyfin", "--json", "--cards-only").stdout)["hits"][0]["id"]
    before = truth(vault)

    filler = fill(small_disk)
    for args in (("search", "Jellyfin", "--json"), ("stats", "--json"), ("timeline",), ("show", card),
                 ("context", "Jellyfin"), ("doctor",)):
        got = memvault(vault, *args)
        assert got.returncode in (0, 3), (args, got.stderr)
        assert "internal error" not in got.stderr and "no space" not in got.stderr, (args, got.stderr)
    hits = json.loads(memvault(vault, "search", "Jellyfin", "--json").stdout)["hits"]
    assert card in [h["id"] for h in hits]
    assert memvault(vault, "search", "Jellyfin", "--json").stdout == memvault(vault, "search", "Jellyfin",
                                                                               "--json").stdout
    outcomes = {}
    for name, args, env in WRITERS:
        got = memvault(vault, *[card if a == "CARD" else a for a in args], input=NEW_TURN, extra_env=env)
        lines = got.stderr.strip().splitlines()
        outcomes[name] = got.returncode
        assert got.returncode == 6, (name, got.returncode, got.stderr)
        assert lines[-1].startswith("memvault: no space left on ") and str(vault.parent) in lines[-1], name
        assert "internal error" not in got.stderr and "Traceback" not in got.stderr, name
        assert truth(vault) == before, name  # nothing half-written: no torn line, no partial file
        assert not [p for p in vault.rglob(".*.tmp")], name

    filler.unlink()  # space again: every command works, each turn and card once
    for name, args, env in WRITERS:
        got = memvault(vault, *[card if a == "CARD" else a for a in args], input=NEW_TURN, extra_env=env)
        assert got.returncode == 0, (name, got.stderr)
    doc = memvault(vault, "doctor", "--json")
    assert doc.returncode == 0 and json.loads(doc.stdout)["problems"] == [], doc.stdout
    days = "".join(p.read_text(encoding="utf-8") for p in (vault / "episodes").rglob("*.jsonl"))
    assert days.count("CR2032") == 1
    ids = [json.loads(x)["id"] for x in days.splitlines() if '"type"' not in x]
    assert len(ids) == len(set(ids))
    assert len(list((vault / "cards").rglob("*.md"))) == len({p.stem for p in (vault / "cards").rglob("*.md")})
    assert json.loads(memvault(vault, "stats", "--json").stdout)["pending_episodes"] == 0


def test_an_append_the_disk_cuts_short_is_cut_back_to_where_it_started(small_disk):
    from memvault.vault.files import append_lines

    day = small_disk / "day.jsonl"
    day.write_bytes(b'{"a":1}\n{"b":2}\n')
    filler = fill(small_disk)
    os.truncate(filler, filler.stat().st_size - 8192)  # two pages free: the append below needs six
    lines = [json.dumps({"n": i, "text": "x" * 200}) for i in range(100)]
    with pytest.raises(OSError) as caught:
        append_lines(day, lines)
    assert caught.value.errno == 28 and caught.value.filename == str(day)
    assert day.read_bytes() == b'{"a":1}\n{"b":2}\n'  # no torn line: doctor has nothing to report
    filler.unlink()
    append_lines(day, lines)
    assert day.read_bytes().count(b"\n") == 102
