"""import-rules: the rules and preferences an agent's instruction and memory files state become cards.

Each statement of a file (memvault.distill.rulefile) is one card of kind `rule` or `preference`, source
`{kind: rules, ref: FILE:LINE, hash: …}`, `confidence: user_stated`. The file is the truth, and the cards follow
it, in one change set through the same writer as `remember` (pages.write_change_set and one journal line):

- a statement already carded from that file (same words) changes nothing, even if its line moved;
- an edited statement (its old words gone, new words at the same line, else the closest new words) writes a
  card that supersedes the old one;
- a statement removed from the file retracts its card (kept as a trace with the reason), since an agent no
  longer follows it; the same words back in the file make that card active again.

Statements are redacted before anything is derived from them (ids, hashes, titles).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.choices import check_project
from memvault.distill import cards as cardlib
from memvault.distill.remember import LOCK_WHAT, TakenIds, redacted, yaml_needle
from memvault.distill.rulefile import Statement, read_statements
from memvault.errors import UsageError
from memvault.model import RULES_SOURCE as SOURCE_KIND, Card
from memvault.vault import codec
from memvault.vault.pages import EntityTable, recover, write_change_set
from memvault.vault.store import Vault

REMOVED = "removed from "  # the reason of a retraction this command made
SIMILAR = 60  # rapidfuzz ratio from which a new statement is the edit of a removed one (else new + retracted)
_GLOBAL_DIRS = {".claude", ".gemini", ".codex", ".cursor", ".config"}


@dataclass
class FileResult:
    file: str  # the label cards name: ~/… under the home folder, else the absolute path
    statements: int = 0
    new: list[str] = field(default_factory=list)
    unchanged: int = 0
    superseded: list[tuple[str, str]] = field(default_factory=list)  # (old id, new id)
    retracted: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)  # cards of removed statements that are back

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "statements": self.statements, "new": self.new, "unchanged": self.unchanged,
                "superseded": [{"old": o, "new": n} for o, n in self.superseded], "retracted": self.retracted,
                "restored": self.restored}


@dataclass
class ImportRulesResult:
    files: list[FileResult]
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return any(f.new or f.superseded or f.retracted or f.restored for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {"files": [f.to_json() for f in self.files], "changed": self.changed, "dry_run": self.dry_run}


def import_rules(vault: Vault, paths: Sequence[Path], *, now: Callable[[], str], project: str | None = None,
                 dry_run: bool = False) -> ImportRulesResult:
    """Read every file first (a missing or unreadable one is a UsageError naming it, before anything is
    written), then bring the cards of each file in line with what it states now."""
    check_project(project)
    read: list[tuple[str, str | None, list[Statement]]] = []
    for path in paths:
        if _label(path) in [label for label, _p, _s in read]:
            continue  # the same file twice (or CLAUDE.md a link to AGENTS.md): read once
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
        text = raw.decode("utf-8", errors="replace")
        if "\x00" in text:
            raise UsageError(f"{path}: not a text file")
        statements = [dataclasses.replace(st, text=redacted(vault, st.text) or "") for st in read_statements(text)]
        statements = [dataclasses.replace(st, kind=st.kind if st.kind in vault.config.kinds else "rule")
                      for st in statements]
        read.append((_label(path), project if project is not None else _project(path), statements))
    with vault.exclusive("distill", LOCK_WHAT):
        recover(vault)
        at = now()
        existing = vault.cards_mentioning([yaml_needle(label) for label, _p, _s in read])
        taken = TakenIds(vault, existing)
        working: dict[str, Card] = {}
        before: dict[str, Card | None] = {}
        results = []
        for label, proj, statements in read:
            mine = [c for c in existing.values() if _from(c, label)]
            results.append(_plan(label, proj, statements, mine, at, taken, working, before))
        result = ImportRulesResult(results, dry_run)
        if dry_run or not working:
            return result
        change = "r-" + hashlib.sha256(f"{at}\x1f{sorted(working)}".encode()).hexdigest()[:12]
        record = {
            "v": 1, "type": "import-rules", "at": at, "change": change, "files": [f.file for f in results],
            "created": [cid for cid, old in before.items() if old is None],
            "superseded": [{"id": o, "by": [n], "before": codec.card_to_text(before[o], vault.rules)}
                           for f in results for o, n in f.superseded],
            "updated": [{"id": cid, "before": codec.card_to_text(before[cid], vault.rules)}
                        for f in results for cid in [*f.retracted, *f.restored]],
        }
        write_change_set(vault, existing, working, before, EntityTable.load(vault).names, record)
        return result


def _plan(label: str, project: str | None, statements: list[Statement], mine: list[Card], at: str, taken,
          working: dict[str, Card], before: dict[str, Card | None]) -> FileResult:
    res = FileResult(file=label, statements=len(statements))
    # Known words: an active card, or one a person retired by hand (forget, resolve, remember --supersedes),
    # which a re-import must not bring back. Cards this command retired do not count: the words of an edited
    # statement that come back are a new card; those of a removed one bring their card back (a file cut short
    # by accident, then restored, leaves the cards as they were).
    replaced = {old for c in mine for old in c.supersedes}
    removed = {c.source.get("hash"): c for c in mine if c.status == "retracted"
               and str((c.extra.get("retracted") or {}).get("reason", "")).startswith(REMOVED)}
    known = {c.source.get("hash") for c in mine
             if c.status == "active" or (c.id not in replaced and c.source.get("hash") not in removed)}
    fresh = [st for st in statements if st.digest not in known]
    res.unchanged = len(statements) - len(fresh)
    for st in [st for st in fresh if st.digest in removed]:
        fresh.remove(st)
        c = removed[st.digest]
        extra = {k: v for k, v in c.extra.items() if k != "retracted"}
        source = {**c.source, "ref": f"{label}:{st.line}", "line": st.line}
        working[c.id], before[c.id] = dataclasses.replace(c, status="active", extra=extra, source=source), c
        res.restored.append(c.id)
    said = {st.digest for st in statements}
    gone = [c for c in mine if c.status == "active" and c.source.get("hash") not in said]
    pairs = _pair(gone, fresh)
    for st in fresh:
        cid = cardlib.card_id(at, f"rules\x1f{label}\x1f{st.digest}\x1f{at}", _Ids(taken, working))
        new = _card(cid, st, label, project, at)
        old = pairs.get(id(st))
        if old is not None:
            old2, new = cardlib.supersede(old, new)
            working[old.id], before[old.id] = old2, old
            res.superseded.append((old.id, cid))
        working[cid], before[cid] = new, None
        res.new.append(cid)
    paired = {c.id for c in pairs.values()}
    for c in gone:
        if c.id in paired:
            continue
        extra = dict(c.extra)
        extra["retracted"] = {"at": at, "reason": f"{REMOVED}{label}"}
        working[c.id], before[c.id] = dataclasses.replace(c, status="retracted", extra=extra), c
        res.retracted.append(c.id)
    return res


def _pair(gone: list[Card], fresh: list[Statement]) -> dict[int, Card]:
    """Which new statement is the edit of which vanished card (by `id()` of the statement): the same line
    first, else the closest words (rapidfuzz ratio >= SIMILAR), each at most once."""
    from rapidfuzz import fuzz

    out: dict[int, Card] = {}
    left = list(gone)
    for st in fresh:
        same_line = next((c for c in left if c.source.get("line") == st.line), None)
        if same_line is not None:
            out[id(st)] = same_line
            left.remove(same_line)
    scored = sorted(((fuzz.ratio(_words(c), st.text), i, j) for i, c in enumerate(left)
                     for j, st in enumerate(fresh) if id(st) not in out), reverse=True)
    used: set[int] = set()
    for score, i, j in scored:
        if score < SIMILAR:
            break
        if i in used or id(fresh[j]) in out:
            continue
        out[id(fresh[j])] = left[i]
        used.add(i)
    return out


def _words(card: Card) -> str:
    return card.body if card.body and card.title.endswith("…") else card.title


def _card(cid: str, st: Statement, label: str, project: str | None, at: str) -> Card:
    title, body = st.text, ""
    if len(title) > cardlib.TITLE_MAX:  # the whole statement goes into the body
        title, body = title[:cardlib.TITLE_MAX - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…", st.text
    source = {"kind": SOURCE_KIND, "ref": f"{label}:{st.line}", "line": st.line, "hash": st.digest}
    if st.section:
        source["section"] = st.section
    return Card(id=cid, kind=st.kind, title=title, body=body, project=project, entities=(),
                created=at, valid_from=at[:10], confidence="user_stated", source=source, tags=("imported",))


def _from(card: Card, label: str) -> bool:
    src = card.source or {}
    ref = src.get("ref")
    return src.get("kind") == SOURCE_KIND and isinstance(ref, str) and ref.rsplit(":", 1)[0] == label


def _label(path: Path) -> str:
    """How cards name the file: the file itself (a link followed), `~/…` under the home folder."""
    full = Path(os.path.realpath(path.expanduser()))
    home = Path(os.path.realpath(Path.home()))
    try:
        return "~/" + full.relative_to(home).as_posix()
    except ValueError:
        return full.as_posix()


def _project(path: Path) -> str | None:
    """The project a file's rules belong to: none (personal, every project) for the files an agent keeps in
    the home folder (~/.claude/CLAUDE.md, ~/.gemini/GEMINI.md …); else the folder of its git repository, else
    the folder it sits in (above .cursor/rules)."""
    from memvault.choices import clean_project

    full = Path(os.path.abspath(path.expanduser()))
    try:
        inside = full.relative_to(Path.home()).parts
    except ValueError:
        inside = ()
    if inside and inside[0] in _GLOBAL_DIRS:
        return None
    for folder in full.parents:
        if (folder / ".git").exists():
            return clean_project(folder.name)
    folder = full.parent
    while folder.name in (".cursor", "rules", ".github") and folder.parent != folder:
        folder = folder.parent
    return clean_project(folder.name) or None


class _Ids:
    """Card ids in use: on disk, loaded, or given out in this import."""

    def __init__(self, taken: TakenIds, working: dict[str, Card]):
        self.taken, self.working = taken, working

    def __contains__(self, cid: object) -> bool:
        return cid in self.working or cid in self.taken
