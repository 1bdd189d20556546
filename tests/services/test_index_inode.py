"""In a big vault a month folder whose mtime moved is compared by directory entry (name, inode), not by a stat of
every card: a card saved by rename (an editor, git) is re-read, an in-place write is caught by the stat of every
hit and by a full refresh, as the index's docstring says."""

from __future__ import annotations

import os

from memvault.search import service
from memvault.search.index import Index
from memvault.vault import codec

from search_helpers import card, write


def _save_by_rename(path, text):
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def test_big_vault_folder_compares_inodes_and_still_sees_every_save(vault):
    write(vault, *[card(f"c-20250301-a{i:03d}", f"Note {i} about ferries", "body") for i in range(30)])
    folder = vault / "cards" / "2025-03"
    with Index(vault, stat_all_below=0) as idx:  # a "big" vault: no stat of every card on a refresh
        idx.refresh()
        inos = dict(idx.db.execute("SELECT path, ino FROM cards"))
        assert all(inos[f"cards/2025-03/{p.name}"] == p.stat().st_ino for p in folder.glob("*.md"))
        # a save by rename: a new inode, the folder's mtime moves: re-read
        _save_by_rename(folder / "c-20250301-a001.md", codec.card_to_text(card("c-20250301-a001", "Note 1 about gondolas", "body")))
        report = idx.refresh()
        assert report.cards_updated == 1
        assert [h.id for h in service.search_index(idx, "gondolas", service.options_from({})).hits] == ["c-20250301-a001"]
        # an in-place write (same inode) while another card arrives in the folder: the new card is indexed, the
        # edited one is not re-read on this refresh (no stat) ...
        (folder / "c-20250301-a002.md").write_text(
            codec.card_to_text(card("c-20250301-a002", "Note 2 about pelicans", "body")), encoding="utf-8")
        write(vault, card("c-20250302-b001", "A new note about ferries", "body"))
        report = idx.refresh()
        assert report.cards_added == 1 and report.cards_updated == 0
        assert not service.search_index(idx, "pelicans", service.options_from({})).hits
        # ... but it is the moment the card is a hit: run_search stats every hit and searches again
        opts = service.options_from({}, stat_all_below=0, limit=50)
    hits = service.run_search(vault, "ferries", opts).hits
    assert len(hits) == 29 and "c-20250301-a002" not in [h.id for h in hits]  # re-read: no ferries in it now
    assert [h.id for h in service.run_search(vault, "pelicans", opts).hits] == ["c-20250301-a002"]


def test_a_full_refresh_stats_every_card(vault):
    write(vault, *[card(f"c-20250401-a{i:03d}", f"Note {i} about canals", "body") for i in range(10)])
    path = vault / "cards" / "2025-04" / "c-20250401-a003.md"
    with Index(vault, stat_all_below=0) as idx:
        idx.refresh()
        path.write_text(codec.card_to_text(card("c-20250401-a003", "Note 3 about herons", "body")), encoding="utf-8")
        os.utime(path.parent, ns=(path.parent.stat().st_atime_ns, path.parent.stat().st_mtime_ns + 10**9))
        assert idx.refresh().cards_updated == 0  # the folder moved, the card's inode did not: not re-read
        assert idx.refresh(full=True).cards_updated == 1  # what `memvault reindex` runs


def test_every_month_folder_seen_is_remembered_with_its_mtime(vault):
    write(vault, *[card(f"c-2025{m:02d}01-a{i:03d}", f"Note {i}", "body") for m in (1, 2, 3) for i in range(3)])
    for below in (0, 10**6):  # a big vault (inodes trusted) and a small one (every card statted)
        with Index(vault, stat_all_below=below) as idx:
            idx.refresh()
            write(vault, card("c-20250101-z001", "one more", "body"), card("c-20250301-z001", "and one", "body"))
            idx.refresh()
            dirs = dict(idx.db.execute("SELECT path, mtime_ns FROM dirs"))
            assert dirs == {f"cards/{p.name}": p.stat().st_mtime_ns for p in (vault / "cards").iterdir()}
        (vault / "cards" / "2025-01" / "c-20250101-z001.md").unlink()
        (vault / "cards" / "2025-03" / "c-20250301-z001.md").unlink()
