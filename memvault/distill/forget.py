"""forget: retract a card (status retracted, trace kept) or purge it (its text removed everywhere we wrote it).

Purge is the one operation that rewrites truth files, because a person asked for it: the card file goes, the
entity pages are regenerated, before-images of the card in the journal are blanked, derived search indexes in
.memvault/ are deleted (they rebuild), and with `--with-episodes` the episodes it came from are removed from
their day files and a `revoke` line with reason `purge` is appended (so a clone that still has them drops them
too). Git history is not rewritten: the result says which paths still hold the text there and how to check.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shlex
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.vault import codec
from memvault.distill.fold import is_folded
from memvault.errors import EmbedError, NoMatch, UsageError
from memvault.search.dense.embed import erase
from memvault.search.index import Index
from memvault.search.index.vectors import FILE as KEYS_FILE
from memvault.model import Card, Episode, Revoke
from memvault.vault.pages import EntityTable, recover, write_change_set
from memvault.vault.files import remove_file, rewrite_lines
from memvault.vault.store import Vault, append_lines

LOCK_WHAT = "distill or another card change"


@dataclass
class ForgetResult:
    id: str
    mode: str
    changed: bool = True
    files: list[str] = field(default_factory=list)  # vault paths rewritten or removed
    episodes_purged: list[str] = field(default_factory=list)
    git_history: list[str] = field(default_factory=list)  # advice lines, empty outside git

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "mode": self.mode, "changed": self.changed, "files": self.files,
                "episodes_purged": self.episodes_purged, "git_history": self.git_history}


def forget(vault: Vault, card_id: str, *, mode: str, now: Callable[[], str], reason: str = "",
           with_episodes: bool = False) -> ForgetResult:
    if mode not in ("retract", "purge"):
        raise UsageError("choose --retract or --purge")
    if with_episodes and mode != "purge":
        raise UsageError("--with-episodes only goes with --purge")
    if not codec.SAFE_ID.match(card_id or ""):
        raise UsageError("a card id has only the characters A-Z a-z 0-9 . _ -")
    with vault.exclusive("distill", LOCK_WHAT):
        recover(vault)
        path = vault.find_card_path(card_id)
        if path is None:
            raise NoMatch(f"no card {card_id!r}")
        card = vault.read_card(path)
        # Only the cards this change can touch: the card, cards linked to it, cards on its entity pages.
        all_cards = vault.cards_mentioning([card_id, *card.entities])
        all_cards[card.id] = card
        at = now()
        change = "f-" + hashlib.sha256(f"{card_id}\x1f{mode}\x1f{at}".encode()).hexdigest()[:12]
        table = EntityTable.load(vault)
        if mode == "retract":
            return _retract(vault, card, all_cards, table, at, change, reason)
        return _purge(vault, card, all_cards, table, at, change, with_episodes)


def _retract(vault, card: Card, all_cards, table, at, change, reason) -> ForgetResult:
    result = ForgetResult(id=card.id, mode="retract")
    if card.status == "retracted":
        result.changed = False
        return result
    extra = dict(card.extra)
    extra["retracted"] = {"at": at, "reason": reason or "retracted by hand"}
    new = dataclasses.replace(card, status="retracted", extra=extra)
    record = {"v": 1, "type": "forget", "mode": "retract", "at": at, "change": change, "card": card.id,
              "reason": reason, "updated": [{"id": card.id, "before": codec.card_to_text(card, vault.rules)}]}
    write_change_set(vault, all_cards, {card.id: new}, {card.id: card}, table.names, record)
    path = vault.find_card_path(card.id)
    result.files = [vault.rel(path)] if path else []
    return result


def _purge(vault: Vault, card: Card, all_cards, table, at, change, with_episodes: bool) -> ForgetResult:
    result = ForgetResult(id=card.id, mode="purge")
    card_path = vault.find_card_path(card.id)
    pages_before = {s: _read(vault.entity_path(s)) for s in card.entities}
    episodes = list(card.episodes) if with_episodes else []
    record = {"v": 1, "type": "forget", "mode": "purge", "at": at, "change": change, "card": card.id,
              "episodes": episodes}
    citing = _uncite(all_cards, card.id)
    changed = {**_unfold(all_cards, card), **citing}
    write_change_set(vault, all_cards, changed, {card.id: card, **{cid: all_cards[cid] for cid in changed}},
                     table.names, record, removed=[card.id])
    if card_path is not None:
        result.files.append(vault.rel(card_path))
    for cid in sorted(changed):
        path = vault.find_card_path(cid)
        result.files += [vault.rel(path)] if path else []
        if cid in citing:
            result.files += _blank_journal(vault, cid)  # its earlier versions quoted the line too
    for slug, old in pages_before.items():
        if old is not None and _read(vault.entity_path(slug)) != old:
            result.files.append(vault.rel(vault.entity_path(slug)))
    result.files += _blank_journal(vault, card.id)
    purged: list[str] = []
    if episodes:
        files, purged = _purge_episodes(vault, set(episodes), at)
        result.files += files
        result.episodes_purged = purged
    result.files += _erase_vectors(vault, {"card": [card.id, *sorted(citing)], "episode": purged})
    result.files += _drop_index(vault)
    result.git_history = _git_advice(vault, [f for f in result.files if not f.startswith(".memvault/")],
                                     card_path, [card.id, *purged])
    return result


def _unfold(all_cards: dict[str, Card], card: Card) -> dict[str, Card]:
    """A folded card only repackages the cards it lists: when it is purged they are active again (as undoing
    the fold makes them), not superseded by a card that is gone."""
    if not is_folded(card):
        return {}
    out = {}
    for cid in card.supersedes:
        old = all_cards.get(cid)
        if old is None or card.id not in old.superseded_by:
            continue
        rest = tuple(x for x in old.superseded_by if x != card.id)
        status = "active" if old.status == "superseded" and not rest else old.status
        out[cid] = dataclasses.replace(old, status=status, superseded_by=rest)
    return out


def _uncite(all_cards: dict[str, Card], card_id: str) -> dict[str, Card]:
    """The cards whose body quotes the purged card on a line that cites it (a folded card's "- date title
    [id]", a synopsis line), with those lines taken out: the purge removes the text there too."""
    out = {}
    for cid, other in all_cards.items():
        if cid == card_id or card_id not in other.body:
            continue
        lines = [line for line in other.body.split("\n") if card_id not in line]
        out[cid] = dataclasses.replace(other, body="\n".join(lines).strip("\n"))
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def _blank_journal(vault: Vault, card_id: str) -> list[str]:
    """Replace every before-image of the card in the journal by a `purged` marker (ids stay: not text)."""
    def edit(_lineno: int, raw: bytes) -> bytes:
        try:
            rec = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(rec, dict) and _blank_record(rec, card_id):
            return codec.dump_json_line(rec).encode("utf-8")
        return raw

    with vault.append_lock():
        return [vault.rel(path) for path in vault.journal_files() if rewrite_lines(path, edit)]


def _blank_record(rec: dict[str, Any], card_id: str) -> bool:
    touched = False
    for key in ("updated", "superseded"):
        for item in rec.get(key) or []:
            if isinstance(item, dict) and item.get("id") == card_id and item.get("before") is not None:
                item["before"] = None
                item["purged"] = True
                touched = True
    return touched


def _drop_index(vault: Vault) -> list[str]:
    """The search index is derived: delete it and let the next search rebuild it without the card."""
    gone = []
    for pattern in ("index*", "search*"):
        for path in sorted((vault.cache or vault.local).glob(pattern)):
            if path.is_file() and remove_file(path):
                gone.append(vault.rel(path))
    return gone


def _erase_vectors(vault: Vault, keys: dict[str, list[str]]) -> list[str]:
    """An embedding can be turned back into much of its text: erase the purged items' vectors (search.dense).
    When that fails (numpy gone, a damaged file) every vector file goes: they are derived, `embed` refills."""
    if not ((vault.cache or vault.local) / KEYS_FILE).exists():
        return []
    try:
        with Index(vault.root) as idx:
            return [f".memvault/{name}" for name in erase(idx, keys)]
    except (EmbedError, sqlite3.Error, OSError):
        gone = []
        for path in sorted((vault.cache or vault.local).glob("vectors*")):
            if path.is_file() and remove_file(path):
                gone.append(vault.rel(path))
        return gone


def _purge_episodes(vault: Vault, ids: set[str], at: str) -> tuple[list[str], list[str]]:
    files: list[str] = []
    purged: list[str] = []
    with vault.append_lock():
        for path in vault.episode_files():
            def edit(lineno: int, raw: bytes, rel: str = vault.rel(path)) -> bytes | None:
                try:
                    rec = codec.parse_record_line(raw, rel, lineno)
                except Exception:  # noqa: BLE001 - a damaged line is kept as it was; doctor reports it
                    return raw
                if isinstance(rec, Episode) and rec.id in ids:
                    purged.append(rec.id)
                    return None
                return raw

            if rewrite_lines(path, edit):
                files.append(vault.rel(path))
        if ids:
            line = codec.revoke_to_line(Revoke(ids=tuple(sorted(ids)), reason="purge", at=at))
            append_lines(vault.day_file(at), [line])
            rel = vault.rel(vault.day_file(at))
            if rel not in files:
                files.append(rel)
    return files, sorted(set(purged))


def _git_advice(vault: Vault, files: list[str], card_path: Path | None, ids: list[str]) -> list[str]:
    """What git history still holds of the purged text, and how to remove it; nothing when it holds none."""
    if not (vault.root / ".git").exists() or not files:
        return []
    held = _in_history(vault, sorted(set(files)), ids)
    if not held:
        return []
    quoted = " ".join(shlex.quote(f) for f in held)
    lines = [
        "git history still holds the earlier text of: " + ", ".join(held),
        f"see it with: git -C {shlex.quote(str(vault.root))} log --all --oneline -- {quoted}",
    ]
    card_rel = vault.rel(card_path) if card_path is not None else None
    if card_rel in held:
        lines.append("remove the card file from history with: git filter-repo --sensitive-data-removal "
                     f"--invert-paths --path {shlex.quote(card_rel)}")
    if any(f != card_rel for f in held):
        lines.append("remove the text from the other files with: git filter-repo --sensitive-data-removal "
                     "--replace-text <file listing the text to replace>; then force-push and re-clone every copy")
    return lines


def _in_history(vault: Vault, files: list[str], ids: list[str]) -> list[str]:
    """The files among `files` whose git history ever held one of `ids` (the card's id, the purged turns'):
    every place the purge removed text from names them (card file, pages, journal, day files). When git cannot
    tell (not installed, a broken repository), every file, as before."""
    pattern = "|".join(re.escape(i) for i in ids if i)
    try:
        proc = subprocess.run(["git", "-C", str(vault.root), "log", "--all", "--format=", "--name-only",
                               "--pickaxe-regex", "-S", pattern, "--", *files],
                              capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError):
        return files
    if proc.returncode != 0:
        return files
    found = {line.strip() for line in proc.stdout.splitlines() if line.strip()}
    return [f for f in files if f in found]
