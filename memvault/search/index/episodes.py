"""Episodes in the index: the day files under episodes/ (read from the old end as they grow), revoked ids,
and the episode reads that episode search needs."""

from __future__ import annotations

import os

from memvault.search import tokenize
from memvault.search.index.report import RefreshReport
from memvault.vault.edge import outside
from memvault.voices import speakers_of, voiced

# The columns of an episode row as episode search reads them (then: tokenised user and assistant text, the
# turn number, and the speakers as JSON, "{}" when the log named nobody).
_SUMS = "count(*), coalesce(sum(len_user), 0), coalesce(sum(len_assistant), 0)"
EP_COLS = ("e.rowid, e.id, e.at, e.project, e.session, e.refs, e.user, e.assistant, f.user, f.assistant, e.turn,"
           " e.speakers")


class EpisodesMixin:
    """Part of Index (core.py): expects self.db, self.root, self.mode."""

    def _refresh_episodes(self, report: RefreshReport) -> None:
        base = os.path.join(self.root, "episodes")
        files: dict[str, os.stat_result] = {}
        try:
            for year in sorted(os.listdir(base) if not _out(self.root, base) else ()):
                if not (len(year) == 4 and year.isdigit()) or _out(self.root, os.path.join(base, year)):
                    continue
                for month in sorted(os.listdir(os.path.join(base, year))):
                    folder = os.path.join(base, year, month)
                    if not (len(month) == 2 and month.isdigit()) or not os.path.isdir(folder) \
                            or _out(self.root, folder):
                        continue
                    for name in os.listdir(folder):
                        path = os.path.join(folder, name)
                        if name.endswith(".jsonl") and (st := os.stat(path)).st_mode & 0o170000 == 0o100000 \
                                and not _out(self.root, path):
                            files[f"episodes/{year}/{month}/{name}"] = st  # regular files only
        except FileNotFoundError:
            pass
        known = {p: (s, m, c) for p, s, m, c in self.db.execute("SELECT path, size, mtime_ns, clean FROM efiles")}
        for rel in known.keys() - files.keys():
            self._drop_episode_file(rel)
            self.db.execute("DELETE FROM efiles WHERE path = ?", (rel,))
        for rel, st in sorted(files.items()):
            old = known.get(rel)
            if old and old[0] == st.st_size and old[1] == st.st_mtime_ns:
                continue
            # Day files only grow: read from the old end when the file grew after a clean last line.
            start = old[0] if old and st.st_size > old[0] and old[2] else 0
            if not start:
                self._drop_episode_file(rel)
            with open(os.path.join(self.root, rel), "rb") as fh:
                fh.seek(start)
                data = fh.read()
            clean = data.endswith(b"\n") or (not data and bool(start))
            lines = data.split(b"\n")
            if not clean:
                # A torn tail (capture was mid-write): index up to the last full line only.
                tail = lines.pop()
                size = st.st_size - len(tail)
                clean = True
            else:
                size = st.st_size
            for raw in lines:
                if raw.strip():
                    self._index_episode_line(raw, rel, report)
            self.db.execute("INSERT OR REPLACE INTO efiles(path, size, mtime_ns, clean) VALUES (?,?,?,?)",
                            (rel, size, st.st_mtime_ns if size == st.st_size else 0, int(clean)))

    def _index_episode_line(self, raw: bytes, rel: str, report: RefreshReport) -> None:
        import json  # new turns to index: a search of an unchanged vault does not import json

        try:
            rec = json.loads(raw)
        except ValueError:
            return  # doctor reports bad lines; search indexes the good ones
        if not isinstance(rec, dict):
            return
        if rec.get("type") == "revoke":
            ids = rec.get("ids") or []
            self.db.executemany("INSERT OR IGNORE INTO revoked(id, file) VALUES (?, ?)",
                                [(str(i), rel) for i in ids if isinstance(i, str)])
            return
        if rec.get("type", "episode") != "episode" or not isinstance(rec.get("id"), str):
            return
        if self.db.execute("SELECT 1 FROM episodes WHERE id = ?", (rec["id"],)).fetchone():
            return  # a union merge doubled the line
        user, assistant = str(rec.get("user") or ""), str(rec.get("assistant") or "")
        source = rec.get("source") or {}
        refs = source.get("refs") or ([source.get("ref")] if source.get("ref") else [])
        speakers = speakers_of(rec.get("speakers"))
        st = tokenize.EPISODE_STEMMER
        # A speaker's name is searchable with what they said ("what did Kael promise").
        tu = tokenize.tokens(voiced(user, speakers.get("user")), self.mode, stemmer=st)
        ta = tokenize.tokens(voiced(assistant, speakers.get("assistant")), self.mode, stemmer=st)
        self._bump_episodes(1, len(tu), len(ta))
        cur = self.db.execute(
            "INSERT INTO episodes(id, file, at, project, session, turn, refs, user, assistant, len_user,"
            " len_assistant, speakers) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (rec["id"], rel, str(rec.get("at") or ""), str(rec.get("project") or ""),
             str(rec.get("session") or ""), int(rec.get("turn") or 0), json.dumps([str(r) for r in refs]),
             user, assistant, len(tu), len(ta), json.dumps(speakers, ensure_ascii=False, sort_keys=True)))
        self.db.execute("INSERT INTO efts(rowid, user, assistant) VALUES (?,?,?)",
                        (cur.lastrowid, " ".join(tu), " ".join(ta)))
        report.episodes_added += 1

    def _drop_episode_file(self, rel: str) -> None:
        rows = self.db.execute("SELECT rowid FROM episodes WHERE file = ?", (rel,)).fetchall()
        n, su, sa = self.db.execute(f"SELECT {_SUMS} FROM episodes WHERE file = ?", (rel,)).fetchone()
        self._bump_episodes(-n, -su, -sa)
        self.db.executemany("DELETE FROM efts WHERE rowid = ?", rows)
        self.db.execute("DELETE FROM episodes WHERE file = ?", (rel,))
        self.db.execute("DELETE FROM revoked WHERE file = ?", (rel,))

    def episode_stats(self) -> tuple[int, dict[str, float]]:
        """(live and revoked turns, mean length of each side), from the running totals (a search asks four
        times; a scan of every row cost 29-40 ms a search at 60k turns)."""
        n, su, sa = self._episode_totals()
        return n, {"user": su / n if n else 0.0, "assistant": sa / n if n else 0.0}

    def _episode_totals(self) -> list[int]:
        """[turns, sum of user lengths, sum of assistant lengths]: meta `episode_totals`, kept in step by the one
        place that adds a turn and the one that drops them (written once per refresh, _save_episode_totals); an
        index without it (older, or new) counts them once."""
        found = self.__dict__.get("_episode_totals_cache")
        if found is None:
            kept = (self.meta("episode_totals", "") or "").split()
            found = [int(x) for x in kept] if len(kept) == 3 else \
                list(self.db.execute(f"SELECT {_SUMS} FROM episodes").fetchone())
            self._episode_totals_cache = found
        return found

    def _bump_episodes(self, n: int, su: int, sa: int) -> None:
        totals = self._episode_totals()
        totals[0] += n
        totals[1] += su
        totals[2] += sa
        self._episode_dirty = True

    def _save_episode_totals(self) -> None:
        """In the refresh's transaction: the totals when they moved, or when the index has none yet (counted once,
        then kept)."""
        if self.__dict__.pop("_episode_dirty", False) or self.meta("episode_totals") is None:
            self.set_meta("episode_totals", " ".join(str(x) for x in self._episode_totals()))

    def episode_matches(self, match: str, project: str | None, limit: int) -> list[tuple]:
        """Rows (EP_COLS) of live episodes matching the FTS5 expression `match`, best bm25 first."""
        where = " AND e.project = ?" if project else ""
        args = [project] if project else []
        return self.db.execute(
            f"SELECT {EP_COLS}"
            f" FROM efts f JOIN episodes e ON e.rowid = f.rowid WHERE efts MATCH ?{where}"
            f" AND e.id NOT IN (SELECT id FROM revoked) ORDER BY bm25(efts) LIMIT {limit}",
            (match, *args)).fetchall()

    def episode_at(self, project: str, session: str, turn: int) -> tuple | None:
        """The row (EP_COLS) of the live episode at this turn of this session, or None."""
        return self.db.execute(
            f"SELECT {EP_COLS} FROM efts f JOIN episodes e ON e.rowid = f.rowid WHERE e.project = ? AND"
            f" e.session = ? AND e.turn = ? AND e.id NOT IN (SELECT id FROM revoked)",
            (project, session, turn)).fetchone()

    def session_count(self) -> int:
        """How many (project, session) pairs hold episodes."""
        return self.db.execute(
            "SELECT count(*) FROM (SELECT DISTINCT project, session FROM episodes)").fetchone()[0]

    def sessions_matching(self, match: str) -> int:
        """How many (project, session) pairs hold an episode matching the FTS5 expression `match`."""
        (k,) = self.db.execute(
            "SELECT count(*) FROM (SELECT DISTINCT e.project, e.session FROM efts f JOIN episodes e"
            " ON e.rowid = f.rowid WHERE efts MATCH ?)", (match,)).fetchone()
        return k


def _out(root: str, path: str) -> bool:
    """A link whose target lies outside the vault (memvault.vault.edge): its turns are not read."""
    return os.path.islink(path) and outside(root, path)
