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
from memvault.errors import EmbedError, NoMatch, UsageError, VaultFormatError
from memvault.search.dense.embed import erase
from memvault.search.index import Index
from memvault.search.index.vectors import FILE as KEYS_FILE
from memvault.model import Card, union
from memvault.vault import purges
from memvault.vault.faults import crash_point
from memvault.vault.pages import EntityTable, recover, write_change_set
from memvault.vault.files import remove_file
from memvault.vault.store import Vault

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
            again = _finish_again(vault, card_id) if mode == "purge" else None
            if again is None:
                raise NoMatch(f"no card {card_id!r}")
            return again
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
    """Remove the card and what quotes it (one change set whose journal line is the purge's intent), then finish
    the purge step by step (memvault.vault.purges: a crash between the steps is finished by the next command)."""
    result = ForgetResult(id=card.id, mode="purge")
    card_path = vault.find_card_path(card.id)
    pages_before = {s: _read(vault.entity_path(s)) for s in card.entities}
    episodes = list(card.episodes) if with_episodes else []
    citing = _uncite(vault, all_cards, card.id)
    record = {"v": 1, "type": "forget", "mode": "purge", "at": at, "change": change, "card": card.id,
              "cited": sorted(citing), "episodes": episodes}
    changed = {**_unfold(all_cards, card), **citing}
    write_change_set(vault, all_cards, changed, {card.id: card, **{cid: all_cards[cid] for cid in changed}},
                     table.names, record, removed=[card.id], hook=lambda name: crash_point(f"forget:{name}"),
                     drop_empty_pages=True)
    if card_path is not None:
        result.files.append(vault.rel(card_path))
    for cid in sorted(changed):
        path = vault.find_card_path(cid)
        result.files += [vault.rel(path)] if path else []
    for slug, old in pages_before.items():
        if old is not None and _read(vault.entity_path(slug)) != old:
            result.files.append(vault.rel(vault.entity_path(slug)))
    return _finish(vault, purges.Purge(change=change, card=card.id, at=at, cited=sorted(citing),
                                       episodes=episodes), result, card_path)


def _finish(vault: Vault, purge: purges.Purge, result: ForgetResult, card_path: Path | None) -> ForgetResult:
    """The steps after the commit point (blank the journal, the turns, vectors, index) and the git advice."""
    purged: list[str] = []

    def erase_vectors(p: purges.Purge, ids: list[str]) -> list[str]:
        purged.extend(ids)
        return _erase_vectors(vault, {"card": p.ids, "episode": ids})

    result.files = list(dict.fromkeys(result.files + purges.finish(vault, purge, erase_vectors)))
    result.episodes_purged = purged
    result.git_history = _git_advice(vault, [f for f in result.files if not f.startswith(".memvault/")],
                                     card_path, [purge.card, *purged])
    return result


def _finish_again(vault: Vault, card_id: str) -> ForgetResult | None:
    """A rerun of `forget --purge` for a card that is gone: finish its purge if a crash stopped it (or say that
    it was purged); None when the journal knows no purge of that card."""
    mine = [p for p in purges.journal_purges(vault) if p.card == card_id]
    if not mine:
        return None
    result = ForgetResult(id=card_id, mode="purge", changed=False)
    for purge in mine:
        _finish(vault, purge, result, None)
        result.changed = result.changed or bool(result.files)
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


def _uncite(vault: Vault, all_cards: dict[str, Card], card_id: str) -> dict[str, Card]:
    """The cards whose body quotes the purged card on a line that cites it (a folded card's "- date title
    [id]", a synopsis line), with those lines taken out: the purge removes the text there too. A folded card
    also named the purged card's entities and tags (a slug may be the text itself): it keeps those of the
    cards it still lists."""
    out = {}
    for cid, other in all_cards.items():
        if cid == card_id or card_id not in other.body:
            continue
        lines = [line for line in other.body.split("\n") if card_id not in line]
        new = dataclasses.replace(other, body="\n".join(lines).strip("\n"))
        if is_folded(other) and card_id in other.supersedes:
            entities, tags = other.entities[:1], ()
            for mid in other.supersedes:
                member = all_cards.get(mid) or _card_or_none(vault, mid)
                if mid != card_id and member is not None:
                    entities = union(entities, member.entities)
                    tags = union(tags, member.tags)
            kept = tuple(t for t in other.tags if t == "folded")  # fold.TAG, last as the fold puts it
            new = dataclasses.replace(new, entities=entities, tags=union(tags, kept))
        out[cid] = new
    return out


def _card_or_none(vault: Vault, card_id: str) -> Card | None:
    path = vault.find_card_path(card_id)
    try:
        return vault.read_card(path) if path is not None else None
    except VaultFormatError:
        return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None



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
