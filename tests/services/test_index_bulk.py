"""The bulk build (worker processes, a bounded window of prepared cards) indexes exactly what one-by-one does."""

from __future__ import annotations

import shutil

from memvault.search import service as search
from memvault.search.index import Index
from memvault.search.index import cards as index_cards
from memvault.vault import codec

from search_helpers import card, many_cards


def _many(root, n):
    many_cards(root, n)
    (root / "cards" / "2025-03" / "c-broken.md").write_bytes(b"---\ntitle: [unclosed\n---\n\xff\xfe")


def _snapshot(root):
    with Index(root) as idx:
        report = idx.refresh(full=True)
        rows = idx.db.execute("SELECT id, title, len_body FROM cards ORDER BY id").fetchall()
        ents = idx.db.execute("SELECT count(*) FROM card_entities").fetchone()[0]
        return report, rows, ents, idx.card_count()


def test_bulk_build_through_a_small_window_matches_one_by_one(vault, monkeypatch):
    _many(vault, 2600)
    monkeypatch.setattr(index_cards, "WINDOW", 64)  # the feed must wait for the writer many times
    bulk_report, bulk_rows, bulk_ents, bulk_n = _snapshot(vault)
    shutil.rmtree(vault / ".memvault")
    monkeypatch.setattr(index_cards, "BULK", 10**9)
    one_report, one_rows, one_ents, one_n = _snapshot(vault)
    assert bulk_n == one_n == 2600
    assert bulk_rows == one_rows and bulk_ents == one_ents == 2600
    assert bulk_report.cards_added == one_report.cards_added == 2600
    assert any("c-broken.md" in p for p in bulk_report.problems)
    hits = search.run_search(vault, "kalomi7 vexter7", search.options_from({})).hits
    assert hits and hits[0].title.startswith("note ")


def test_bulk_rows_from_the_workers_get_the_rowids_one_by_one_gives(vault, monkeypatch):
    """Workers number a batch's rows on the guess that every card before it was inserted; a broken card before a
    batch makes that guess wrong, and the writer renumbers: rowids, FTS rows and entity rows agree with a build
    one card at a time."""
    _many(vault, 2600)
    (vault / "cards" / "2025-01" / "c-broken-too.md").write_text("no front matter at all\n", encoding="utf-8")
    monkeypatch.setattr(index_cards, "WINDOW", 512)
    monkeypatch.setattr(index_cards, "BATCH", 37)  # many batches, several after each broken card

    def rows(root):
        with Index(root) as idx:
            idx.refresh(full=True)
            return (idx.db.execute("SELECT rowid, id, path FROM cards ORDER BY rowid").fetchall(),
                    idx.db.execute("SELECT rowid, title, body FROM cfts ORDER BY rowid").fetchall(),
                    idx.db.execute("SELECT card, entity, created FROM card_entities ORDER BY card, entity").fetchall(),
                    idx.meta("card_lens"))

    bulk = rows(vault)
    shutil.rmtree(vault / ".memvault")
    monkeypatch.setattr(index_cards, "BULK", 10**9)
    one = rows(vault)
    assert len(bulk[0]) == 2600 and bulk[0][-1][0] == 2600  # no gaps: the two broken cards took no rowid
    assert bulk == one


def test_bulk_build_merges_fts_once_and_leaves_sqlites_merge_settings(vault, monkeypatch):
    """A build from nothing inserts with FTS5's merging off and merges once at the end: the full-text index holds
    the same terms and counts as one built card by card, FTS5's own check passes, and the merge settings are back
    to SQLite's defaults, so later one-card writes merge as they always did."""
    _many(vault, 2600)

    def fts(root):
        with Index(root) as idx:
            idx.refresh(full=True)
            idx.db.execute("INSERT INTO cfts(cfts, rank) VALUES ('integrity-check', 1)")  # raises when damaged
            return (idx.db.execute("SELECT term, doc, cnt FROM cvocab ORDER BY term").fetchall(),
                    dict(idx.db.execute("SELECT k, v FROM cfts_config WHERE k != 'version'").fetchall()))

    bulk_vocab, bulk_config = fts(vault)
    assert bulk_config == {"hashsize": 1 << 20, "automerge": 4, "crisismerge": 16}
    shutil.rmtree(vault / ".memvault")
    monkeypatch.setattr(index_cards, "BULK", 10**9)
    one_vocab, _ = fts(vault)
    assert len(bulk_vocab) > 100 and bulk_vocab == one_vocab
    monkeypatch.undo()
    shutil.rmtree(vault / ".memvault")
    fts(vault)
    c = card("c-20250601-ffff", "fresh kalomi7 note", "more vexter7 words", created="2025-06-01T10:00:00Z")
    (vault / "cards" / "2025-06" / f"{c.id}.md").write_text(codec.card_to_text(c), encoding="utf-8")
    with Index(vault) as idx:
        assert idx.refresh().cards_added == 1
        idx.db.execute("INSERT INTO cfts(cfts, rank) VALUES ('integrity-check', 1)")
        assert idx.db.execute("SELECT doc FROM cvocab WHERE term = 'fresh'").fetchone() == (1,)
