"""The bulk build (worker processes, a bounded window of prepared cards) indexes exactly what one-by-one does."""

from __future__ import annotations

import shutil

from memvault.search import service as search
from memvault.search.index import Index
from memvault.search.index import cards as index_cards
from memvault.vault import codec

from search_helpers import card


def _many(root, n):
    for i in range(n):
        month = f"2025-{i % 12 + 1:02d}"
        c = card(f"c-2025{i % 12 + 1:02d}01-{i:04x}", f"note {i} about kalomi{i % 50}",
                 f"body words vexter{i % 97} 数据{i % 13}库", created=f"{month}-01T10:00:00Z",
                 entities=(f"ent-{i % 40}",))
        folder = root / "cards" / month
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{c.id}.md").write_text(codec.card_to_text(c), encoding="utf-8")
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
