"""The dense layer in real processes: `memvault embed` killed with SIGKILL midway loses at most the batch in
flight and the rerun embeds only the rest; a search with embeddings off never imports numpy (or httpx)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from fake_embed import FakeEmbed
from services.search_helpers import card, write
from services.test_dense_search import configure

N, BATCH = 24, 3


def _stored(root) -> int:
    with sqlite3.connect(root / ".memvault" / "vectors.sqlite") as db:
        return db.execute("SELECT count(*) FROM vectors WHERE space = 'card'").fetchone()[0]


def test_embed_killed_midway_resumes_with_only_the_rest(vault):
    write(vault, *[card(f"c-2611{i:02d}-k{i:03d}", f"Card number {i} about topic {i}", f"body {i} 第{i}张")
                   for i in range(1, N + 1)])
    with FakeEmbed(dim=32) as fake:
        configure(vault, base_url=fake.base_url, model="fake", batch=BATCH)
        fake.block_from = 5  # four batches are answered; the fifth waits until after the kill
        proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault), "embed", "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 300  # a hang guard: the loop ends at the fifth request
        while len(fake.requests) < 5 and time.time() < deadline:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=300)
        assert proc.returncode == -signal.SIGKILL
        fake.release.set()
        # the server finishes answering the request in flight (to nobody): wait until it has, not a fixed time
        while sum(len(r["body"]["input"]) for r in fake.requests) > len(fake.texts) and time.time() < deadline:
            time.sleep(0.02)
        first = list(fake.texts)  # texts the server answered before the kill
        kept = _stored(vault)
        assert 0 < kept < N
        assert len(first) - kept <= BATCH  # at most the batch in flight was lost
        fake.block_from = None
        before = len(fake.texts)
        out = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "embed", "--json"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        again = fake.texts[before:]
        assert json.loads(out.stdout)["embedded"] == {"card": N - kept}
        assert len(again) == N - kept  # only the rest
        assert _stored(vault) == N
        assert len(set(first[:kept]) & set(again)) == 0  # nothing stored was sent again


PROBE = ("import sys\nfrom memvault.cli.fast import try_search\ncode = try_search(['--vault', sys.argv[1], 'search',"
         " 'postgres'])\nprint(code, 'numpy' in sys.modules, 'httpx' in sys.modules,"
         " any(m.startswith('memvault.search.dense') for m in sys.modules))\n")


def test_a_search_with_embeddings_off_imports_no_numpy(vault):
    write(vault, card("c-261101-aaaa", "Postgres for the orders service", "sqlite serialises writers"))
    out = subprocess.run([sys.executable, "-c", PROBE, str(vault)], capture_output=True, text=True, timeout=60)
    assert out.stdout.split()[-4:] == ["0", "False", "False", "False"], out.stdout + out.stderr
    with FakeEmbed(dim=32) as fake:  # the probe can fail: with embeddings on, the same search loads them
        configure(vault, base_url=fake.base_url, model="fake", admit=0.5)
        out = subprocess.run([sys.executable, "-c", PROBE, str(vault)], capture_output=True, text=True, timeout=60)
        assert out.stdout.split()[-4:] == ["0", "True", "True", "True"], out.stdout + out.stderr


NO_NUMPY = ("import sys\nsys.modules['numpy'] = None  # as if memvault[embed] were not installed\n"
            "from memvault.cli.fast import try_search\nsys.exit(try_search(['--vault', sys.argv[1], 'search', 'postgres']))\n")


def test_without_numpy_a_search_falls_back_to_words_and_says_how_to_fix_it(vault):
    write(vault, card("c-261101-aaaa", "Postgres for the orders service", "sqlite serialises writers"))
    with FakeEmbed(dim=32) as fake:
        configure(vault, base_url=fake.base_url, model="fake")
        out = subprocess.run([sys.executable, "-c", NO_NUMPY, str(vault)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "c-261101-aaaa" in out.stdout
    assert out.stderr.count("memvault: warning:") == 1 and "pip install 'memvault[embed]'" in out.stderr


def test_embed_with_embeddings_off_is_a_usage_error(vault):
    out = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "embed"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and "embeddings are off" in out.stderr


HOLD = ("import sqlite3, sys, time\ndb = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('BEGIN IMMEDIATE')\nprint('locked', flush=True)\ntime.sleep(600)\n")


def test_a_search_never_waits_long_for_another_writer_of_the_vectors(vault):
    from memvault.search.dense.hybrid import SEARCH_BUSY_MS
    from memvault.search.index import Index
    from services.test_dense_search import search

    # How long it waits is a setting, checked here; the time it takes is bench/vectors.py's to print.
    assert SEARCH_BUSY_MS * 10 <= Index.vec_busy_ms

    write(vault, card("c-261101-aaaa", "Postgres for the orders service", "sqlite serialises writers"))
    with FakeEmbed(dim=32) as fake:
        configure(vault, base_url=fake.base_url, model="fake")
        assert subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "embed"],
                              capture_output=True, timeout=60).returncode == 0
        write(vault, card("c-261102-bbbb", "Postgres replicas", "one per region"))  # needs an inline embed
        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(vault / ".memvault" / "vectors.sqlite")],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "locked"
            result = search(vault, "postgres")  # returns while the holder still has the lock (it sleeps 60 s)
            assert holder.poll() is None
        finally:
            holder.kill()
            holder.wait()
    assert {h.id for h in result.hits} == {"c-261101-aaaa", "c-261102-bbbb"}
    assert len(result.warnings) == 1 and "busy" in result.warnings[0]
