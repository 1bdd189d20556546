"""doctor: parse every file of the vault and report damage as `path:line: reason`. Never raises on bad data."""

from __future__ import annotations

from dataclasses import dataclass, field

from memvault.errors import VaultFormatError
from memvault import pages
from memvault.vault import Vault, atomic_write, iter_lines


@dataclass
class DoctorReport:
    files: int = 0
    problems: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"files": self.files, "problems": self.problems, "fixed": self.fixed, "ok": not self.problems}


def check_vault(vault: Vault, *, fix: bool = False) -> DoctorReport:
    """Check every file. With `fix`, rewrite what is derived (entity page blocks, the local index) first."""
    report = DoctorReport()
    if fix:
        report.fixed = _fix_derived(vault)
    errors: list[VaultFormatError] = []
    files = vault.episode_files()
    report.files += len(files)
    for path in files:
        if not _ends_with_newline(path):
            errors.append(VaultFormatError(vault.rel(path), None, "last line is torn (no newline at the end); "
                                           "the next capture repairs it"))
    for _ in vault.iter_records(files=files, problems=errors):
        pass
    card_files = vault.card_files()
    report.files += len(card_files)
    seen: dict[str, str] = {}
    cards = []
    for path in card_files:
        try:
            card = vault.read_card(path)
        except VaultFormatError as exc:
            errors.append(exc)
            continue
        cards.append(card)
        if path.stem != card.id:
            errors.append(VaultFormatError(vault.rel(path), None, f"file name does not match card id {card.id}"))
        if card.id in seen:
            errors.append(VaultFormatError(vault.rel(path), None, f"duplicate card id (also {seen[card.id]})"))
        seen[card.id] = vault.rel(path)
    by_slug = pages.cards_by_entity(cards)  # the cards parsed above, not a second read of every file
    for path in vault.entity_files():
        report.files += 1
        try:
            vault.read_entity(path)
        except VaultFormatError as exc:
            errors.append(exc)
            continue
        if pages.page_update(vault, path.stem, by_slug.get(path.stem, []), None)[1] is not None:
            errors.append(VaultFormatError(vault.rel(path), None, "generated block is out of date (after a git "
                                           "merge or a hand edit): run `memvault doctor --fix` or `memvault reindex`"))
    for path in [*vault.episode_files(), *card_files, *vault.entity_files(), *vault.journal_files()]:
        for lineno, raw in iter_lines(path):
            if raw is not None and raw.startswith((b"<<<<<<< ", b">>>>>>> ")):
                errors.append(VaultFormatError(vault.rel(path), lineno, "git conflict marker: finish the merge"))
                break
    journal_files = vault.journal_files()
    report.files += len(journal_files)
    vault.journal(problems=errors)
    for path in sorted((vault.root / "audit").glob("*.log")):
        report.files += 1
        for lineno, raw in iter_lines(path):
            if raw is not None and raw.strip() and not raw.lstrip().startswith(b"{"):
                errors.append(VaultFormatError(vault.rel(path), lineno, "audit line is not a JSON object"))
    report.problems = [str(e.message) for e in errors]
    return report


def _fix_derived(vault: Vault) -> list[str]:
    """Regenerate entity page blocks and drop the local search index (rebuilt on the next search)."""
    fixed = []
    by_slug = pages.cards_by_entity(vault.cards(problems=[]))
    for path in vault.entity_files():
        try:
            target, text = pages.page_update(vault, path.stem, by_slug.get(path.stem, []), None)
        except ValueError:
            continue
        if text is not None:
            atomic_write(target, text)
            fixed.append(f"{vault.rel(target)}: generated block rewritten")
    index = vault.local / "search.sqlite"
    for suffix in ("", "-wal", "-shm"):
        stale = index.with_name(index.name + suffix)
        if stale.exists():
            stale.unlink()
            if not suffix:
                fixed.append(".memvault/search.sqlite: removed, rebuilt on the next search")
    return fixed


def _ends_with_newline(path) -> bool:
    size = path.stat().st_size
    if size == 0:
        return True
    with open(path, "rb") as fh:
        fh.seek(size - 1)
        return fh.read(1) == b"\n"
