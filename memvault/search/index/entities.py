"""Entities in the index: entity pages (name, aliases, prose), the token keys a query names an entity by, and
finding an entity by any of its names."""

from __future__ import annotations

import os
from collections.abc import Iterable

TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from typing import Any

from memvault.search import tokenize
from memvault.vault.edge import outside
from memvault.search.index.reads import json_list
from memvault.search.index.report import RefreshReport


class EntitiesMixin:
    """Part of Index (core.py): expects self.db, self.root, self.mode."""

    def _refresh_entities(self, report: RefreshReport, full: bool = False) -> None:
        folder = os.path.join(self.root, "entities")
        try:
            mtime = 0 if os.path.islink(folder) and outside(self.root, folder) else os.stat(folder).st_mtime_ns
        except FileNotFoundError:
            mtime = 0
        # Trigger: a large vault whose entities folder did not move since the last look. Why: statting every page
        # cost ~100 ms a search at 5,000 pages. Outcome: skip, as the card month folders do; an edit in place is
        # caught below `search.stat_all_below` pages, by `reindex`, and by the next page memvault writes.
        stamp = self.meta("entities_dir")
        if (not full and stamp == str(mtime)
                and int(self.meta("n_entities", "0") or 0) >= self.stat_all_below):
            return
        known = {s: (m, z) for s, m, z in self.db.execute("SELECT slug, mtime_ns, size FROM entities")}
        seen = set()
        if mtime:
            with os.scandir(folder) as it:
                for entry in it:
                    if not entry.name.endswith(".md") or entry.name.startswith(".") or not entry.is_file() or (
                            entry.is_symlink() and outside(self.root, entry.path)):  # out of the vault
                        continue
                    slug = entry.name[:-3]
                    seen.add(slug)
                    st = entry.stat()
                    if known.get(slug) == (st.st_mtime_ns, st.st_size):
                        continue
                    rel = f"entities/{entry.name}"
                    from memvault.search.index.parse import parse_entity, parse_entity_fast  # a page changed
                    try:
                        with open(entry.path, encoding="utf-8") as fh:
                            text = fh.read()
                        data = parse_entity_fast(text, slug) or parse_entity(text, rel, slug)
                    except Exception as exc:  # noqa: BLE001 - a damaged page is skipped, never fatal
                        report.problems.append(f"{rel}: {getattr(exc, 'reason', None) or 'cannot be read'}")
                        continue
                    self.db.execute(
                        "INSERT OR REPLACE INTO entities(slug, name, aliases, kind, prose, mtime_ns, size)"
                        " VALUES (?,?,?,?,?,?,?)",
                        (slug, data["name"], _dumps(data["aliases"]), data["kind"],
                         data["prose"], st.st_mtime_ns, st.st_size))
                    # Cards name an entity by its slug or by its page's name (雾港 lives in wugang.md).
                    for target in dict.fromkeys([slug, str(data["name"])]):
                        self._add_keys(target, [slug, data["name"], *data["aliases"]])
                    report.entities += 1
        for slug in known.keys() - seen:
            self.db.execute("DELETE FROM entities WHERE slug = ?", (slug,))
            report.entities += 1
        if stamp != str(mtime) or self.meta("n_entities") != str(len(seen)):
            self.set_meta("entities_dir", str(mtime))
            self.set_meta("n_entities", str(len(seen)))

    def _add_keys(self, slug: str, names: Iterable[str]) -> None:
        """Names and aliases of an entity as token keys, so a query naming it finds it without a scan."""
        names = list(names)
        seen = self.__dict__.setdefault("_keys_seen", set())
        if (slug, *names) in seen:
            return
        seen.add((slug, *names))
        rows = []
        for name in names:
            toks = tokenize.tokens(str(name), self.mode)
            if toks:
                rows.append((" ".join(dict.fromkeys(toks)), slug, toks[0]))
        self.db.executemany("INSERT OR IGNORE INTO entity_keys(key, slug, first) VALUES (?,?,?)", rows)

    # -- reads
    def entity_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM entities").fetchone()[0]

    def entity_page(self, slug: str) -> tuple | None:
        """(slug, name, aliases as JSON, kind, prose) of the page called `slug` (by slug or name; of two, the one
        indexed first), or None. Two index lookups (entities_name): a scan of the table cost ~50 page reads at
        5,000 entities, in every search that names one."""
        return self.db.execute("SELECT slug, name, aliases, kind, prose FROM entities WHERE slug = ? OR name = ?"
                               " ORDER BY rowid LIMIT 1", (slug, slug)).fetchone()

    def entity_keys(self, toks: list[str]) -> list[tuple[str, str]]:
        """(key, slug) of every entity name made only of the tokens `toks`, and of every longer name (three
        tokens or more) whose first token is one of them; the caller checks the rest of a longer name.

        Names of one or two tokens are looked up whole, by key: at 1M cards 50,000 names began with the token
        "ent" ("ent 42", "ent 4242", …), and reading every name that starts with a query token cost 300 ms."""
        toks = list(dict.fromkeys(toks))
        if not toks:
            return []
        if len(toks) > 60:  # a pasted page: its pairs would pass SQLite's limit of bound values
            return self.db.execute(f"SELECT key, slug FROM entity_keys WHERE first IN ({','.join('?' * len(toks))})",
                                   toks).fetchall()
        keys = [*toks, *(f"{a} {b}" for a in toks for b in toks)]
        rows = self.db.execute(f"SELECT key, slug FROM entity_keys WHERE key IN ({','.join('?' * len(keys))})",
                               keys).fetchall()
        return rows + self.db.execute(
            f"SELECT key, slug FROM entity_keys WHERE first IN ({','.join('?' * len(toks))}) AND key LIKE '% % %'",
            toks).fetchall()

    def entity_keys_starting(self, letter: str) -> list[tuple[str, str]]:
        """(key, slug) of every one-token entity name starting with `letter`."""
        return self.db.execute(
            "SELECT key, slug FROM entity_keys WHERE first >= ? AND first < ? AND key NOT LIKE '% %'",
            (letter, chr(ord(letter) + 1))).fetchall()

    def entity_degree(self, slug: str) -> int:
        """How many cards name the entity (counted on ce_degree, the narrowest index that holds the entity: ~20
        pages for an entity 5,000 cards of 100k name, against ~80 on ce_entity)."""
        return self.db.execute("SELECT count(*) FROM card_entities WHERE entity = ?", (slug,)).fetchone()[0]


# ---------------------------------------------------------------- entities by any name


def resolve_entity(idx: Any, ident: str) -> str | None:
    """Slug of the entity called `ident` (slug, page name, alias, or a name cards use without a page)."""
    row = idx.db.execute("SELECT slug FROM entities WHERE slug = ? OR name = ? ORDER BY rowid LIMIT 1",
                         (ident, ident)).fetchone()
    if row:
        return row[0]
    for slug, aliases in idx.db.execute("SELECT slug, aliases FROM entities"):
        if ident.casefold() in (a.casefold() for a in json_list(aliases)):
            return slug
    row = idx.db.execute("SELECT entity FROM card_entities WHERE entity = ? LIMIT 1", (ident,)).fetchone()
    return row[0] if row else None


def entity_names(idx: Any, ident: str) -> tuple[str, list[str]] | None:
    """(slug, every name cards may use for it: slug and page name), or None when nothing is called `ident`."""
    slug = resolve_entity(idx, ident)
    if slug is None:
        return None
    names = {slug}
    row = idx.db.execute("SELECT name FROM entities WHERE slug = ?", (slug,)).fetchone()
    if row:
        names.add(row[0])
    return slug, sorted(names)


def _dumps(aliases: list[str]) -> str:
    import json  # a page changed: not on a search's usual path

    return json.dumps(aliases, ensure_ascii=False)
