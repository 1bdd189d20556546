"""A build from nothing goes to a new file without a journal and is put in place by a symlink (search/index/fresh.py):
the same index as a build in place, readers of the old file undisturbed, a crash leaves an orphan the next build
removes, one build at a time."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from memvault.search import service as search
from memvault.search.index import Index
from memvault.search.index import cards as index_cards
from memvault.search.index import fresh

from search_helpers import many_cards

N = 700  # cards of the test vaults; BULK is lowered to 300 so that they are built in bulk


@pytest.fixture(autouse=True)
def _small_bulk(monkeypatch):
    monkeypatch.setattr(index_cards, "BULK", 300)


def _built(vault):
    """N cards built from nothing: (the index folder, the file search.sqlite links to)."""
    many_cards(vault, N)
    local = vault / ".memvault"
    with Index(vault) as idx:
        idx.refresh(full=True)
    return local, os.readlink(local / "search.sqlite")


def _content(db):
    """Everything a build writes that does not depend on when or where it ran."""
    return {
        "cards": db.execute("SELECT * FROM cards ORDER BY rowid").fetchall(),
        "fts": db.execute("SELECT rowid, title, entities, body, tags FROM cfts ORDER BY rowid").fetchall(),
        "vocab": db.execute("SELECT term, doc, cnt FROM cvocab ORDER BY term").fetchall(),
        "ents": db.execute("SELECT card, entity, created FROM card_entities ORDER BY card, entity").fetchall(),
        "keys": db.execute("SELECT key, slug, first FROM entity_keys ORDER BY key, slug").fetchall(),
        "dirs": db.execute("SELECT path FROM dirs ORDER BY path").fetchall(),
        "meta": db.execute("SELECT k, v FROM meta WHERE k NOT IN ('generation', 'lists', 'lists_ready')"
                           " ORDER BY k").fetchall(),
        "indexes": db.execute("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").fetchall(),
    }


def _builds(local):
    return sorted(n for n in os.listdir(local) if n.startswith("search-") and ".sqlite" in n)


def test_a_build_from_nothing_goes_to_a_new_file_with_the_same_content_as_a_build_in_place(vault, monkeypatch):
    many_cards(vault, N)
    local = vault / ".memvault"
    with Index(vault) as idx:
        report = idx.refresh(full=True)
        assert report.cards_added == N
        fresh_content = _content(idx.db)
    link = local / "search.sqlite"
    assert link.is_symlink()
    target = os.readlink(link)
    assert fresh._ours(target) == target and (local / target).is_file()
    assert _builds(local) == [target]  # no -wal or -shm left, no temporary link
    db = sqlite3.connect(link)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.execute("INSERT INTO cfts(cfts) VALUES ('integrity-check')")
    db.close()
    # Where no symlink can be made (some file systems), the same build in place, through the WAL.
    for name in os.listdir(local):
        if name.startswith("search"):
            os.unlink(local / name)

    def no_symlink(*_a, **_k):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "symlink", no_symlink)
    with Index(vault) as idx:
        assert idx.refresh(full=True).cards_added == N
        in_place = _content(idx.db)
    assert not link.is_symlink() and link.is_file() and _builds(local) == []
    assert fresh_content == in_place
    assert len(fresh_content["cards"]) == N and fresh_content["vocab"] and fresh_content["indexes"]


def test_later_writes_go_to_the_new_file_and_a_rebuild_removes_the_earlier_one(vault):
    many_cards(vault, N)
    local = vault / ".memvault"
    hits = search.run_search(vault, "kalomi7 vexter7", search.options_from({})).hits
    assert hits and all(h.title.startswith("note ") for h in hits)
    first = os.readlink(local / "search.sqlite")
    many_cards(vault, 3, start=N)  # a one-card refresh writes the new file through the symlink
    with Index(vault) as idx:
        assert idx.refresh().cards_added == 3
        assert idx.card_count() == N + 3
    assert os.readlink(local / "search.sqlite") == first and _builds(local) == [first]
    with Index(vault) as idx:  # reindex: forget everything, build again
        idx.clear()
        assert idx.refresh(full=True).cards_added == N + 3
    second = os.readlink(local / "search.sqlite")
    assert second != first and _builds(local) == [second]
    with Index(vault) as idx:
        assert idx.card_count() == N + 3
    os.unlink(local / second)  # the file deleted by hand, the link left dangling: built again
    assert search.run_search(vault, "kalomi7 vexter7", search.options_from({})).hits
    third = os.readlink(local / "search.sqlite")
    assert (local / third).is_file() and _builds(local) == [third]
    with Index(vault) as idx:
        assert idx.card_count() == N + 3


def test_an_index_of_the_older_layout_is_replaced_and_its_wal_files_removed(vault, monkeypatch):
    many_cards(vault, N)
    local = vault / ".memvault"
    monkeypatch.setattr(index_cards, "BULK", 10**9)  # one by one, in place: a plain search.sqlite
    with Index(vault) as idx:
        idx.refresh(full=True)
        old = _content(idx.db)
    assert (local / "search.sqlite").is_file() and not (local / "search.sqlite").is_symlink()
    monkeypatch.setattr(index_cards, "BULK", 300)
    reader = sqlite3.connect(local / "search.sqlite")  # a reader of the plain file, open across the swap
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM cards").fetchone() == (N,)
    with Index(vault) as idx:
        idx.clear()
        idx.refresh(full=True)
        assert _content(idx.db)["cards"] == old["cards"]
    assert (local / "search.sqlite").is_symlink()
    assert not (local / "search.sqlite-wal").exists() and not (local / "search.sqlite-shm").exists()
    assert reader.execute("SELECT count(*) FROM cards").fetchone() == (N,)  # its snapshot, unharmed
    reader.execute("COMMIT")
    reader.close()


READER = """import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN")
n = db.execute("SELECT count(*) FROM cards").fetchone()[0]
print(n, flush=True)
sys.stdin.readline()  # the other process rebuilds the index and swaps the file meanwhile
again = db.execute("SELECT count(*) FROM cards").fetchone()[0]
hits = db.execute("SELECT count(*) FROM cfts WHERE cfts MATCH 'kalomi7'").fetchone()[0]
db.execute("COMMIT")
print(again, hits, flush=True)
"""


def test_a_reader_in_another_process_reads_on_while_the_index_is_rebuilt_and_swapped(vault):
    local, first = _built(vault)
    reader = subprocess.Popen([sys.executable, "-c", READER, str(local / "search.sqlite")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == str(N)
        many_cards(vault, 5, start=N)
        with Index(vault) as idx:  # reindex in this process while the reader holds its snapshot
            idx.clear()
            idx.refresh(full=True)
        assert os.readlink(local / "search.sqlite") != first
        reader.stdin.write("go\n")
        reader.stdin.flush()
        again, hits = reader.stdout.readline().split()
        assert reader.wait(timeout=60) == 0
    finally:
        reader.kill()
    assert int(again) == N and int(hits) > 0  # the old file, read to its end
    with Index(vault) as idx:
        assert idx.card_count() == N + 5


BUILD = """import sys
from memvault.search.index import Index, cards
cards.BULK = 300
Index(sys.argv[1]).refresh(full=True)
"""


def test_a_build_killed_mid_way_leaves_the_index_usable_and_the_next_search_builds_it(vault):
    many_cards(vault, 3000)
    local = vault / ".memvault"
    for _attempt in range(20):
        child = subprocess.Popen([sys.executable, "-c", BUILD, str(vault)])
        caught = False
        while child.poll() is None:
            if local.is_dir() and _builds(local):
                os.kill(child.pid, signal.SIGSTOP)
                # caught between the new file's creation and the swap: the real test; else try again
                caught = not (local / "search.sqlite").is_symlink()
                break
            time.sleep(0.001)
        os.kill(child.pid, signal.SIGKILL) if child.poll() is None else None
        child.wait()
        if caught:
            break
        for name in os.listdir(local):
            if name.startswith("search"):
                os.unlink(local / name)
    assert caught, "the build was never caught before its swap"
    orphans = _builds(local)
    assert orphans  # the half-built file the killed process left
    with Index(vault) as idx:  # what the killed build left in place: a sound, empty index
        assert idx.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert idx.db.execute("SELECT count(*) FROM cards").fetchone() == (0,)
    hits = search.run_search(vault, "kalomi7 vexter7", search.options_from({})).hits  # builds it whole
    assert hits
    target = os.readlink(local / "search.sqlite")
    assert _builds(local) == [target] and target not in orphans
    with Index(vault) as idx:
        assert idx.card_count() == 3000


def test_a_second_process_waits_for_the_build_in_progress_and_uses_it(vault):
    many_cards(vault, 3000)
    local = vault / ".memvault"
    first = subprocess.Popen([sys.executable, "-c", BUILD, str(vault)])
    try:
        deadline = time.monotonic() + 60
        while not (local.is_dir() and _builds(local)) and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        second = subprocess.run([sys.executable, "-c", BUILD + "print(Index(sys.argv[1]).card_count())\n",
                                 str(vault)], capture_output=True, text=True, timeout=120)
        assert first.wait(timeout=120) == 0
    finally:
        first.kill()
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["3000"]
    target = os.readlink(local / "search.sqlite")
    assert _builds(local) == [target]


def test_doctor_fix_removes_the_index_and_the_file_it_links_to(vault):
    from memvault.vault.store import Vault
    from memvault.views.doctor import check_vault

    local, target = _built(vault)
    report = check_vault(Vault.open(vault, {}), fix=True)
    assert any("search.sqlite: removed" in f for f in report.fixed)
    assert not (local / "search.sqlite").is_symlink() and not (local / target).exists()
    assert search.run_search(vault, "kalomi7", search.options_from({})).hits  # built again


REINDEX = """import os, sys
from memvault.search.index import cards
cards.BULK = 300
from memvault.vault.store import Vault
from memvault.views.reindex import reindex
print(reindex(Vault.open(sys.argv[1], os.environ)).cards, flush=True)
"""
SEARCH = """import sys
from memvault.search import service
print(len(service.run_search(sys.argv[1], "kalomi7 vexter7", service.options_from({})).hits), flush=True)
"""


def test_a_search_during_a_reindex_reads_the_index_as_it_was_without_waiting(vault):
    """reindex builds the new file while the old one stays in place: a search started while the rebuild is
    stopped mid-way (SIGSTOP, so that the window cannot close by itself) answers from the old index at once,
    where it used to find an emptied index and wait for the build's lock."""
    local, first = _built(vault)
    many_cards(vault, 2500, start=N)
    with Index(vault) as idx:  # the new cards indexed one refresh ahead, so the old file is complete
        assert idx.refresh().cards_added == 2500
    for _attempt in range(20):
        child = subprocess.Popen([sys.executable, "-c", REINDEX, str(vault)], stdout=subprocess.PIPE, text=True)
        caught = False
        while child.poll() is None:
            if any(n.endswith(".sqlite") and n != first for n in _builds(local)):  # the rebuild is under way
                os.kill(child.pid, signal.SIGSTOP)
                link = local / "search.sqlite"
                # before the swap (else try again); an index emptied for the rebuild is never caught
                caught = link.is_symlink() and os.readlink(link) == first
                break
            time.sleep(0.001)
        if caught:
            break
        os.kill(child.pid, signal.SIGCONT) if child.poll() is None else None
        assert child.wait(timeout=120) == 0
        first = os.readlink(local / "search.sqlite")
    try:
        assert caught, "the old index was never in place while the rebuild ran"
        found = subprocess.run([sys.executable, "-c", SEARCH, str(vault)], capture_output=True, text=True,
                               timeout=60)
        assert found.returncode == 0, found.stderr
        assert int(found.stdout) > 0
        assert os.readlink(local / "search.sqlite") == first  # still the old index: nobody waited for the lock
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGCONT)
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0 and out.split() == [str(N + 2500)]
    second = os.readlink(local / "search.sqlite")
    assert second != first and _builds(local) == [second]
    with Index(vault) as idx:
        assert idx.card_count() == N + 2500
