"""The derived search index: `.memvault/search.sqlite` (SQLite FTS5 over pre-tokenised text).

Owns: every SQL statement of memvault (DDL, the refresh writes, and the named reads that ranking and the views
call; they get plain rows and records back, never a cursor or SQL text). Modules:
schema (file, version, DDL, opening), parse (the fast front-matter reader), prepare (one card file to a
record, in bulk-build workers), bulk (a build of many cards: workers and the writer), report (RefreshReport),
core (Index: lifecycle and the refresh transaction),
cards / entities / episodes (keeping each part of the index fresh), reads (what ranking reads),
browse (what the views read), lists (the optional tantivy candidate list), vectors (the dense layer's keys).

Exception to "only vault/ opens files": this package opens its own SQLite file under `.memvault/` and reads
card, entity and episode files to index them. It writes nothing outside `.memvault/`.
Must not import: search.service and the ranking modules (they import the index), capture, distill, views, cli,
vault.store; and no yaml at module level, so that `memvault search` starts fast (PERF-NOTES: every import
counts): cards in an unusual layout fall back to vault.codec.parse_card, imported only then.

Freshness: every open stats the card month folders and the entities folder (a few hundred µs even at 100k
cards). A folder whose mtime moved is listed and its files compared by (mtime, size), then by content hash, so
cards added, deleted or renamed by memvault, an editor or `git pull` are seen before the query runs; in a vault
of `search.stat_all_below` cards or more, a file whose directory entry still names the inode indexed is not
statted (a save by rename or a git checkout makes a new inode; 12k stats were most of a one-card update at 1M
cards). An edit in place that leaves the folder mtime alone is caught by a full stat of every card file when the vault is small
(`search.stat_all_below`), by the stat of every hit before it is returned, and by `memvault reindex`.
Deleting the index is always safe: the next search rebuilds it.
"""

from __future__ import annotations

from memvault.search.index.cards import BULK
from memvault.search.index.core import Index
from memvault.search.index.entities import entity_names, resolve_entity
from memvault.search.index.reads import CardFilter, fts_all, fts_match
from memvault.search.index.report import RefreshReport
from memvault.search.index.schema import CARD_FIELDS, EPISODE_FIELDS, FILE, SCHEMA
from memvault.vault.locate import locate_vault

# The vault's location, found without importing yaml (vault.store does) on the search fast path.
find_root = locate_vault

_LAZY = {"parse_card_fast": "parse", "card_record": "prepare"}


def __getattr__(name: str):
    """parse_card_fast and card_record load their modules on first use: a search that finds nothing changed
    never parses a card."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"memvault.search.index.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["BULK", "CARD_FIELDS", "EPISODE_FIELDS", "FILE", "SCHEMA", "CardFilter", "Index", "RefreshReport",
           "card_record", "entity_names", "find_root", "fts_all", "fts_match", "parse_card_fast",
           "resolve_entity"]
