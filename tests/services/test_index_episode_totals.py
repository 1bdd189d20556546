"""The turns' count and mean lengths (BM25 over turns) are running totals kept in the index's meta: after every
way the raw layer changes they equal a count of every row, in English and Chinese."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from memvault.search.index import Index

SUMS = "SELECT count(*), coalesce(sum(len_user), 0), coalesce(sum(len_assistant), 0) FROM episodes"


def cli(root, *args, stdin=None):
    done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), *args], input=stdin,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def turns(*pairs, session="s"):
    return "".join(json.dumps({"role": role, "content": text, "session": session}, ensure_ascii=False) + "\n"
                   for user, assistant in pairs for role, text in (("user", user), ("assistant", assistant)))


def kept_and_counted(root):
    """(the totals as a search reads them, a count of every row), each read in a fresh Index."""
    with Index(root) as idx:
        idx.refresh(episodes=True)
        n, means = idx.episode_stats()
    with Index(root) as idx:
        c, su, sa = idx.db.execute(SUMS).fetchone()
        meta = idx.meta("episode_totals", "")
    return (n, round(means["user"], 6), round(means["assistant"], 6)), \
        (c, round(su / c, 6) if c else 0.0, round(sa / c, 6) if c else 0.0), meta


def test_the_running_totals_equal_a_count_after_capture_an_edit_and_a_deleted_day_file(vault):
    cli(vault, "capture", "--format", "jsonl", stdin=turns(
        ("We moved the orders table to Postgres 16 last night", "Good, the locks held"),
        ("我们把备份迁到了 Backblaze B2，每晚三点跑", "好的，我会盯着第一次备份")))
    kept, counted, meta = kept_and_counted(vault)
    assert kept == counted and counted[0] == 2 and meta.startswith("2 ")
    cli(vault, "capture", "--format", "jsonl", stdin=turns(("The staging server now runs Caddy instead of nginx",
                                                            "Noted"), session="t"))
    kept, counted, _ = kept_and_counted(vault)
    assert kept == counted and counted[0] == 3
    day = next((vault / "episodes").rglob("*.jsonl"))  # a hand edit: a line removed from a day file
    lines = day.read_text(encoding="utf-8").splitlines(keepends=True)
    day.write_text("".join(lines[:-1]), encoding="utf-8")
    os.utime(day, ns=(day.stat().st_atime_ns, day.stat().st_mtime_ns + 5_000_000_000))
    kept, counted, _ = kept_and_counted(vault)
    assert kept == counted and counted[0] == 2
    day.unlink()  # a day file deleted (git rm, a checkout of another branch)
    kept, counted, _ = kept_and_counted(vault)
    assert kept == counted and counted[0] == 0


def test_an_index_without_the_totals_counts_them_once(vault):
    cli(vault, "capture", "--format", "jsonl", stdin=turns(("Always answer in Markdown tables", "ok")))
    with Index(vault) as idx:
        idx.refresh(episodes=True)
        idx.db.execute("DELETE FROM meta WHERE k = 'episode_totals'")  # an index of before
    kept, counted, meta = kept_and_counted(vault)
    assert kept == counted and counted[0] == 1 and meta.startswith("1 ")  # and kept from then on
