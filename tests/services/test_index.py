import dataclasses
import os
import shutil
import subprocess


from memvault.search import service as search
from memvault.errors import NoMatch
from memvault.search.index import Index, parse_card_fast
from memvault.vault import codec

from search_helpers import card, write


def ids(root, query, **kw):
    try:
        return [h.id for h in search.run_search(root, query, search.options_from({}, **kw)).hits]
    except NoMatch:
        return []


def test_fast_parser_agrees_with_codec():
    c = card("c-20250101-abcd", "Use 'quotes': and colons", "正文 body", entities=("postgres", "林晚"),
             tags=("x",), source={"kind": "distill", "run": "r-1", "episodes": ["ep-1", "ep-2"]},
             superseded_by=("c-20250202-abcd",), status="superseded")
    text = codec.card_to_text(c)
    fast = parse_card_fast(text)
    slow = codec.parse_card(text, "x.md")
    if fast is not None:  # quoted titles may fall back; when the fast path answers it must agree
        assert fast["title"] == slow.title and fast["entities"] == list(slow.entities)
    plain = codec.card_to_text(card("c-20250101-abce", "Plain title", "b", entities=("a",),
                                    source={"kind": "distill", "episodes": ["ep-9"]}))
    meta = parse_card_fast(plain)
    assert meta["episodes"] == ["ep-9"] and meta["entities"] == ["a"] and meta["body"] == "b"
    assert parse_card_fast("---\nid: x\nkind: fact\ntitle: |\n  block\n---\n") is None


def test_hand_edit_delete_and_add_are_seen(vault):
    write(vault, card("c-20250101-0001", "Cache with redis", "Redis for sessions."),
          card("c-20250102-0002", "Queue with celery", "Celery workers."))
    assert ids(vault, "redis") == ["c-20250101-0001"]
    # edit by hand, in place (same folder mtime)
    path = next((vault / "cards").glob("*/c-20250101-0001.md"))
    text = path.read_text(encoding="utf-8").replace("Redis for sessions.", "Memcached for sessions.")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    assert ids(vault, "memcached") == ["c-20250101-0001"]
    # delete
    (vault / "cards" / "2025-01" / "c-20250102-0002.md").unlink()
    assert ids(vault, "celery") == []
    # add
    write(vault, card("c-20250301-0003", "Celery came back", "Celery again."))
    assert ids(vault, "celery") == ["c-20250301-0003"]


def test_in_place_edit_of_a_hit_is_caught_in_a_large_vault(vault):
    write(vault, card("c-20250101-0001", "Cache with redis", "Redis for sessions."))
    assert ids(vault, "redis", stat_all_below=0) == ["c-20250101-0001"]
    path = next((vault / "cards").glob("*/c-20250101-0001.md"))
    folder_mtime = os.stat(path.parent).st_mtime_ns
    with open(path, "w", encoding="utf-8") as fh:  # retracted by hand, in place
        fh.write(codec.card_to_text(
            card("c-20250101-0001", "Cache with redis", "Redis for sessions.", status="retracted")))
    os.utime(path.parent, ns=(folder_mtime, folder_mtime))
    assert ids(vault, "redis", stat_all_below=0) == []


def test_cards_arriving_by_git_pull(vault, tmp_path):
    git = lambda *a, cwd=vault: subprocess.run(["git", *a], cwd=cwd, check=True, capture_output=True)
    git("init", "-q", "-b", "main")
    (vault / ".gitignore").write_text(".memvault/\n")
    write(vault, card("c-20250101-0001", "Cache with redis", "Redis."))
    git("add", "-A")
    git("commit", "-qm", "one")
    assert ids(vault, "redis") == ["c-20250101-0001"]
    other = tmp_path / "other"
    git("clone", "-q", str(vault), str(other), cwd=tmp_path)
    write(other, card("c-20250102-0002", "Search with meilisearch", "Meili."))
    (other / "cards" / "2025-01" / "c-20250101-0001.md").unlink()
    git("add", "-A", cwd=other)
    git("commit", "-qm", "two", cwd=other)
    git("pull", "-q", str(other), "main")
    assert ids(vault, "meilisearch") == ["c-20250102-0002"]
    assert ids(vault, "redis") == []


def test_deleting_or_damaging_the_index_is_safe(vault):
    write(vault, card("c-20250101-0001", "Cache with redis", "Redis."))
    assert ids(vault, "redis") == ["c-20250101-0001"]
    shutil.rmtree(vault / ".memvault")
    assert ids(vault, "redis") == ["c-20250101-0001"]
    (vault / ".memvault" / "search.sqlite").write_bytes(b"not a database at all" * 100)
    for suffix in ("-wal", "-shm"):
        (vault / ".memvault" / f"search.sqlite{suffix}").unlink(missing_ok=True)
    assert ids(vault, "redis") == ["c-20250101-0001"]


def test_broken_card_is_skipped_and_reported(vault):
    write(vault, card("c-20250101-0001", "Cache with redis", "Redis."))
    bad = vault / "cards" / "2025-01" / "c-20250101-0009.md"
    bad.write_text("---\nid: [broken\n---\nredis secret text\n", encoding="utf-8")
    with Index(vault) as idx:
        report = idx.refresh()
    assert ids(vault, "redis") == ["c-20250101-0001"]
    assert any("c-20250101-0009.md" in p for p in report.problems)
    assert not any("secret" in p for p in report.problems)


def test_episode_day_files_are_indexed_incrementally(vault):
    import json

    day = vault / "episodes" / "2025" / "03" / "2025-03-01.jsonl"
    day.parent.mkdir(parents=True)

    def line(i, text):
        return json.dumps({"v": 1, "id": f"ep-2025030{i}T000000Z-00000{i}", "at": "2025-03-01T00:00:00Z",
                           "project": "p", "session": "s", "turn": i, "user": text, "assistant": "ok",
                           "source": {"ref": f"m{i}"}, "hash": f"h{i}"}) + "\n"

    day.write_text(line(1, "tuning the zfs arc size"), encoding="utf-8")
    with Index(vault) as idx:
        assert idx.refresh(episodes=True).episodes_added == 1
        with open(day, "a", encoding="utf-8") as fh:
            fh.write(line(2, "zfs scrub schedule"))
        assert idx.refresh(episodes=True).episodes_added == 1  # only the new line was read
        assert idx.refresh(episodes=True).episodes_added == 0
    assert len(ids(vault, "zfs", episodes=True)) == 2


def test_entity_pages_are_read_again_only_when_their_folder_moves_in_a_large_vault(vault):
    from search_helpers import entity_page

    from memvault.vault.store import Vault
    from memvault.views.reindex import reindex

    write(vault, card("c-20250101-0001", "Cache layer", entities=("kv",)))
    entity_page(vault, "kv", "kv", ["键值库"])
    with Index(vault, stat_all_below=1) as idx:  # "large": at least one page
        idx.refresh()
        assert idx.entity_pages() == [("kv", "kv", ["键值库"])]
    page = vault / "entities" / "kv.md"
    folder_stat = os.stat(page.parent)
    page.write_text(page.read_text(encoding="utf-8").replace("键值库", "缓存库"), encoding="utf-8")
    os.utime(page.parent, ns=(folder_stat.st_atime_ns, folder_stat.st_mtime_ns))  # an edit in place
    with Index(vault, stat_all_below=1) as idx:
        idx.refresh()
        assert idx.entity_pages() == [("kv", "kv", ["键值库"])]  # skipped: the folder did not move
    with Index(vault, stat_all_below=1000) as idx:
        idx.refresh()
        assert idx.entity_pages() == [("kv", "kv", ["缓存库"])]  # a small vault stats every page
    entity_page(vault, "lru", "LRU", [])  # a new page moves the folder
    with Index(vault, stat_all_below=1) as idx:
        idx.refresh()
        assert [p[0] for p in idx.entity_pages()] == ["kv", "lru"]
    before = page.read_bytes()
    result = reindex(Vault.open(vault, os.environ))
    assert result.cards == 1 and result.entities == 2
    assert page.read_bytes() != before and "[[c-20250101-0001]]" in page.read_text(encoding="utf-8")
    assert reindex(Vault.open(vault, os.environ)).pages == "written (0 changed)"


def test_bulk_refresh_that_updates_and_adds_cards_in_one_go(vault):
    """A refresh of BULK or more changed files where some are updates and some new (a first `consolidate` fold:
    thousands of cards superseded, hundreds of folded cards added) failed with "UNIQUE constraint failed:
    cards.rowid": an update's row took the rowid the held-back new rows were numbered with."""
    from memvault.search.index.cards import BULK

    half = BULK // 2 + 50
    olds = [card(f"c-20250101-{i:06x}", f"old card {i} quokka", "first text") for i in range(half)]
    for c in olds:
        (vault / "cards" / "2025-01").mkdir(parents=True, exist_ok=True)
        (vault / "cards" / "2025-01" / f"{c.id}.md").write_text(codec.card_to_text(c), encoding="utf-8")
    assert len(ids(vault, "quokka", limit=5)) == 5  # the index holds them
    # Every old card changes (interleaved in path order with the new ones) and as many new cards come.
    for c in olds:
        (vault / "cards" / "2025-01" / f"{c.id}.md").write_text(
            codec.card_to_text(card(c.id, c.title, "second text wombat")), encoding="utf-8")
    for i in range(half):
        c = card(f"c-20250101-{i:06x}a", f"new card {i} numbat", "new text")
        (vault / "cards" / "2025-01" / f"{c.id}.md").write_text(codec.card_to_text(c), encoding="utf-8")
    assert ids(vault, "wombat", limit=5)  # the refresh runs here (it raised before the fix)
    with Index(vault, "bigram") as idx:
        assert idx.card_count() == 2 * half
        rows = idx.summary_rows([olds[0].id, olds[-1].id, f"c-20250101-{half - 1:06x}a"])
        assert sorted(r[3] for r in rows) == ["new text", "second text wombat", "second text wombat"]


def test_stats_counts_and_timeline_order_read_their_indexes(vault):
    """stats' counts and timeline's newest-first order come from narrow indexes (SCHEMA 12), not a scan and a sort
    of every card's row (bench/startup.py); the figures are those a scan gives: no project and an empty one both
    count as "-", each project summed over its statuses; timeline newest world date first, then created, then id."""
    older = dataclasses.replace(card("c-20250101-0001", "Cache with redis", "Redis.", project="shop"),
                                valid_from="2024-06-01")
    write(vault, older,
          card("c-20250102-0002", "Queue with celery", "Celery.", project="shop", status="superseded"),
          card("c-20250103-0003", "Backups to B2", "restic.", project=""),
          card("c-20250103-0004", "Backups nightly", "cron."),
          card("c-20250104-0005", "Old plan", "gone.", project="shop", status="retracted"))
    with Index(vault) as idx:
        idx.refresh()
        assert idx.status_counts() == {"active": 3, "superseded": 1, "retracted": 1}
        assert idx.project_counts() == {"-": 2, "shop": 3}
        rows = idx.timeline_rows(None, None, None, None, False)
        assert [r[0] for r in rows] == ["c-20250103-0004", "c-20250103-0003", "c-20250102-0002", "c-20250101-0001"]
        assert [r[0] for r in idx.timeline_rows(None, "shop", None, 1, True)] == ["c-20250104-0005"]
        plans = {sql: " ".join(str(step[-1]) for step in idx.db.execute("EXPLAIN QUERY PLAN " + sql))
                 for sql in ("SELECT status, count(*) FROM cards GROUP BY status",
                             "SELECT project, count(*) FROM cards GROUP BY status, project",
                             "SELECT id FROM cards WHERE status != 'retracted' ORDER BY coalesce(valid_from,"
                             " substr(created, 1, 10)) DESC, created DESC, id DESC LIMIT 5")}
    assert all("COVERING INDEX cards_status" in plan for plan in list(plans.values())[:2]), plans
    assert "INDEX cards_world" in list(plans.values())[2] and "TEMP B-TREE" not in list(plans.values())[2], plans
