"""doctor: parse every file of the vault and report damage as `path:line: reason`. Never raises on bad data."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass, field

from pathlib import Path

from memvault.vault import codec
from memvault.vault import pages
from memvault.views import leftovers, secretscan
from memvault.views.parsed import conflict_lines, read_cards
from memvault.views.sound import Sound, Stats, cards_key
from memvault.errors import VaultFormatError
from memvault.vault.locate import CONFIG_NAME
from memvault.vault.edge import files_inside, outside
from memvault.vault.files import ends_with_newline, is_locked, read_cache, write_cache
from memvault.vault.store import Vault, atomic_write, iter_lines, read_config


# doctor lists at most this many conflicting pairs and stops looking there: on a vault of many near-duplicate titles
# the pairs grow with the square of the cards (a generated 100k vault holds tens of millions), and doctor is a
# health check that cron runs; `memvault conflicts` lists them all.
LISTED = 200


@dataclass
class DoctorReport:
    files: int = 0
    problems: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # settings problems that are not damage
    # `path: conflicts with c-…`: two active cards that cannot both be true. Not damage (every file is sound, a
    # git merge of two machines' cards makes them in normal use, and only a person can choose the winner with
    # `memvault resolve`), so they do not set exit 3, which cron treats as "the vault is broken".
    conflicts: list[str] = field(default_factory=list)
    conflict_lines: list[str] = field(default_factory=list)  # the same, once for each card of a pair (not JSON)
    more_conflicts: bool = False  # more than LISTED pairs: `memvault conflicts` lists them all

    def to_json(self) -> dict:
        return {"files": self.files, "problems": self.problems, "fixed": self.fixed, "warnings": self.warnings,
                "conflicts": self.conflicts, "more_conflicts": self.more_conflicts, "ok": not self.problems}


def check_vault(vault: Vault, *, fix: bool = False) -> DoctorReport:
    """Check every file, secrets in clear and memvault.yaml's settings included. With `fix`, first redact
    secrets in place, then rewrite what is derived (entity page blocks, the local index)."""
    report = DoctorReport()
    if fix:
        report.fixed = _fix_interrupted(vault) + leftovers.fix(vault) + _fix_secrets(vault) + _fix_derived(vault)
    errors: list[VaultFormatError] = []
    settings = _settings_problems(vault, fixed=fix)
    errors += [VaultFormatError(CONFIG_NAME, p.line, p.message) for p in settings if p.error]
    report.warnings = [str(p) for p in settings if not p.error]
    report.warnings += _vector_problems(vault)
    excused = _interrupted(vault, report)
    errors += leftovers.problems(vault)
    stat = Stats()
    sound = Sound(vault, (codec.__file__, pages.__file__, __file__), stat)  # files found sound before (sound.py)
    files = vault.episode_files()
    report.files += len(files)
    episodes = sound.todo(files)
    for path in episodes:
        if not ends_with_newline(path):
            errors.append(VaultFormatError(vault.rel(path), None, "last line is torn (no newline at the end); "
                                           "the next capture repairs it"))
    for _ in vault.iter_records(files=episodes, problems=errors):
        pass
    card_files = vault.card_files()
    report.files += len(card_files)
    errors += leftovers.big_cards(vault, card_files, stat)
    seen: dict[str, str] = {}
    cards = []
    sigs: dict[str, tuple | None] = {}
    parsed, digest = read_cards(vault, card_files, errors, sigs, stat)  # unchanged files from .memvault/ (parsed.py)
    for path, card in parsed:
        cards.append(card)
        if path.stem != card.id:
            errors.append(VaultFormatError(vault.rel(path), None, f"file name does not match card id {card.id}"))
        if card.id in seen:
            errors.append(VaultFormatError(vault.rel(path), None, f"duplicate card id (also {seen[card.id]})"))
        seen[card.id] = vault.rel(path)
    from memvault.views.conflicts import threshold

    report.conflict_lines, report.more_conflicts = conflict_lines(vault, digest, threshold(vault), LISTED,
                                                                  lambda: _conflicts(vault, cards))
    report.conflicts = report.conflict_lines[::2]  # --json: one per pair (lines() names a pair's two cards in turn)
    by_slug = pages.cards_by_entity(cards)  # the cards parsed above, not a second read of every file
    entity_files, warned = vault.entity_files(), set()
    report.files += len(entity_files)
    made_of = {vault.rel(p): cards_key(by_slug.get(p.stem, []), sigs) for p in entity_files}
    entity_todo = sound.todo(entity_files, made_of)
    for path in entity_todo:
        try:
            vault.read_entity(path)
        except VaultFormatError as exc:
            errors.append(exc)
            continue
        fresh = pages.page_update(vault, path.stem, by_slug.get(path.stem, []), None)[1]
        if fresh is not None and _same_links(path, fresh):
            # Trigger: the block lists the right cards in the flat layout of before issue 32's profile (Now /
            # History). Why: an upgrade is no damage, and exit 3 would page cron. Outcome: a warning.
            warned.add(vault.rel(path))
            report.warnings.append(f"{vault.rel(path)}: generated block in the previous layout: `memvault reindex` "
                                   "rewrites it as a profile")
        elif fresh is not None:
            errors.append(VaultFormatError(vault.rel(path), None, "generated block is out of date (after a git "
                                           "merge or a hand edit): run `memvault doctor --fix` or `memvault reindex`"))
    for path in [*episodes, *sound.todo(card_files), *entity_todo, *vault.journal_files()]:
        for lineno, raw in iter_lines(path):
            if raw is not None and raw.startswith((b"<<<<<<< ", b">>>>>>> ")):
                errors.append(VaultFormatError(vault.rel(path), lineno, "git conflict marker: finish the merge"))
                break
    journal_files = vault.journal_files()
    report.files += len(journal_files)
    _unread_warning(vault, vault.journal(problems=errors), report)
    for path in files_inside(vault.root, "audit", ("*.log",)):
        report.files += 1
        for lineno, raw in iter_lines(path):
            if raw is not None and raw.strip() and not raw.lstrip().startswith(b"{"):
                errors.append(VaultFormatError(vault.rel(path), lineno, "audit line is not a JSON object"))
    report.files += 1  # memvault.yaml
    errors += _scan_secrets(vault, _secret_files(vault, files, card_files, entity_files), stat)
    sound.save({e.path for e in errors} | warned)
    report.problems = [str(e.message) for e in errors if e.path not in excused]
    return report


def _conflicts(vault: Vault, cards: list) -> tuple[list[str], bool]:
    """The lines of the first LISTED conflicting pairs, and whether there are more."""
    from memvault.views.conflicts import scan

    report = scan(vault, cards=cards, limit=LISTED + 1)
    more = len(report.conflicts) > LISTED
    report.conflicts = report.conflicts[:LISTED]
    return report.lines(), more


def _same_links(path: Path, fresh: str) -> bool:
    """The page's card lines are the fresh block's, in another order or layout."""
    def links(text: str) -> list[str]:
        return sorted(line for line in text.splitlines() if line.startswith("- [["))

    try:
        return links(path.read_text(encoding="utf-8")) == links(fresh)
    except (OSError, UnicodeDecodeError):
        return False


def _unread_warning(vault: Vault, journal: list[dict], report: DoctorReport) -> None:
    """Not damage, but memory silently missing: turns in a language the offline engine does not read."""
    from memvault.views.stats import nothing_counts

    unread = nothing_counts(journal)["unread_language"]
    if unread:
        report.warnings.append(f"{unread} episodes are in a language the offline engine does not read and gave no "
                               "card: set llm.base_url in memvault.yaml, then run `memvault distill --upgrade`")


def _interrupted(vault: Vault, report: DoctorReport) -> set[str]:
    """A card change that is running now, or one that Ctrl-C or a crash interrupted (its write-intent is there,
    its journal line is not): a note, not damage. The files it was writing may look out of date until it
    finishes or the next distill rolls it back; their problems are left out. Returns those files."""
    found = pages.interrupted(vault)
    if found is None:
        return set()
    key, files = found
    if is_locked(vault.local / "distill.lock"):
        report.warnings.append(f"a distill or another card change is running now ({_change(key)}): the "
                               f"{len(files)} files it is writing are checked once it has finished")
    elif key.startswith("b-"):
        report.warnings.append(f"batch {key} was interrupted (Ctrl-C or a crash) while writing {len(files)} "
                               "files: not damage; the next `memvault distill` (or `memvault doctor --fix`) "
                               "rolls it back and distils its turns again")
    else:  # consolidate, forget, remember, resolve, import, reflect: no turns to distil again
        report.warnings.append(f"{_change(key)} was interrupted (Ctrl-C or a crash) while writing {len(files)} "
                               "files: not damage; the next card change (`memvault distill`, `consolidate`, "
                               "`remember`, … or `memvault doctor --fix`) rolls it back: run the command that "
                               "made it again to redo it")
    return set(files)


def _change(key: str) -> str:
    """A change set's name in a message: distill's batches are `b-…`; the other commands' changes are not."""
    return f"batch {key}" if key.startswith("b-") else f"change {key}"


def _fix_interrupted(vault: Vault) -> list[str]:
    """Roll back a change set Ctrl-C or a crash interrupted, as the next distill would (under its lock)."""
    if pages.interrupted(vault) is None:
        return []
    with vault.exclusive("distill", "distill or another card change", settle=False):
        key = pages.recover(vault)
    if not key:
        return []
    if key.startswith("b-"):
        return [f"batch {key}: interrupted, rolled back (its turns are distilled again next time)"]
    return [f"change {key}: interrupted, rolled back (run the command that made it again to redo it)"]


def _settings_problems(vault: Vault, fixed: bool):
    """memvault.yaml's problems; read again after --fix, which may have rewritten the file."""
    if not fixed:
        return vault.config.problems
    try:
        return read_config(vault.root, {}).problems
    except VaultFormatError as exc:
        from memvault.vault.settings_file import SettingsProblem

        return (SettingsProblem(exc.line, exc.reason, error=True),)


SCAN_CACHE = "secrets.cache"


def _scan_secrets(vault: Vault, files: list[tuple[Path, str]], stat=os.stat) -> list[VaultFormatError]:
    """Secrets in clear in any vault file, as `path:line: secret in clear (rule …)`.

    Files found clean are remembered in .memvault/secrets.cache by size and mtime, under a key of the rules
    (redact.py's bytes and the deny list): a second doctor reads only what changed. Scanning 10k cards and
    10k episodes (14 MB) costs ~1 s; a file that changes between stat and read is simply scanned again next time.
    """
    key = _rules_key(vault)
    cache_dir = vault.cache
    cache_path = cache_dir / SCAN_CACHE if cache_dir else None
    clean = read_cache(cache_path, key)
    fresh: dict[str, tuple[int, int]] = {}
    todo = []
    for path, style in files:
        try:
            st = stat(path)
        except FileNotFoundError:
            continue
        rel, sig = vault.rel(path), (st.st_size, st.st_mtime_ns)
        if clean.get(rel) == sig:
            fresh[rel] = sig
        else:
            todo.append((path, rel, sig, style))
    errors, dirty = [], set()
    for rel, lineno, finding in _secrets_in(todo, vault.rules):
        dirty.add(rel)
        errors.append(VaultFormatError(rel, lineno, f"secret in clear (rule {finding.rule}): "
                                       "run `memvault doctor --fix` to redact it"))
    fresh.update((rel, sig) for _path, rel, sig, _style in todo if rel not in dirty)
    write_cache(cache_path, key, fresh, clean)
    return errors


def _secrets_in(files, rules):
    """(rel, line, finding) for every secret in `files` ((path, rel, sig, style) each): one batched pass over
    the raw texts finds the few files worth a closer look; JSON lines are then judged line by line."""
    texts = (((rel, style, text), text) for path, rel, _sig, style in files for text in [_read(path)])
    for (rel, style, text), found in secretscan.scan_files(texts, rules):
        if style == "json":
            for lineno, line_found in secretscan.json_line_findings(text, rules):
                for finding in line_found:
                    yield rel, lineno, finding
        else:
            for finding in found:
                yield rel, finding.line, finding


def _rules_key(vault: Vault) -> str:
    from memvault.redact import engine as redact

    deny = json.dumps(list(vault.config.section("redact").get("deny") or []), ensure_ascii=False)
    return hashlib.sha256(Path(redact.__file__).read_bytes() + deny.encode("utf-8")).hexdigest()


def _secret_files(vault: Vault, episodes: list[Path] | None = None, cards: list[Path] | None = None,
                  entities: list[Path] | None = None) -> list[tuple[Path, str]]:
    """Every file of the vault a secret could sit in, with how to rewrite it (the listings when already made)."""
    episodes = vault.episode_files() if episodes is None else episodes
    files = [(p, "json") for p in [*episodes, *vault.journal_files(), *files_inside(vault.root, "audit", ("*.log",))]]
    files += [(p, "card") for p in (vault.card_files() if cards is None else cards)]
    files += [(p, "entity") for p in (vault.entity_files() if entities is None else entities)]
    files.append((vault.root / CONFIG_NAME, "yaml"))
    return files


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")  # invalid UTF-8 is reported elsewhere
    except FileNotFoundError:
        return ""


def _fix_secrets(vault: Vault) -> list[str]:
    """Redact secrets in place, one atomic rewrite per file (temp file, fsync, os.replace).

    Trigger: a rule matches text already on disk (a hand edit, a file from an older version, a deny rule added
    later). Why: the vault is meant for git and sync; a secret must not stay. Outcome: the matched text becomes
    `[REDACTED:<rule>]`; other JSON lines and other YAML text keep their bytes, a flagged JSON line is dumped
    again, cards and entity pages are re-serialised through the codec (which redacts). Episode files are the one exception to append-only besides
    `forget --purge` (FORMAT.md). Runs under the distill lock and the append lock so no writer interleaves.
    """
    fixed = []
    with vault.exclusive("distill", "distill or another card change", settle=False), vault.append_lock():
        files = {vault.rel(path): (path, style) for path, style in _secret_files(vault)}
        items = [(path, rel, None, style) for rel, (path, style) in files.items()]
        counts: dict[str, int] = {}
        for rel, _line, _finding in _secrets_in(items, vault.rules):
            counts[rel] = counts.get(rel, 0) + 1
        for rel, n in counts.items():
            path, style = files[rel]
            text = _read(path)
            new = _redacted(vault, path, style, text)
            if new != text:
                atomic_write(path, new)
                fixed.append(f"{rel}: {n} secret(s) redacted")
    return fixed


def _redacted(vault: Vault, path: Path, style: str, text: str) -> str:
    rel = vault.rel(path)
    if style == "json":
        return secretscan.redact_json_lines(text, vault.rules, codec.dump_json_line)
    try:
        if style == "card":
            return codec.card_to_text(codec.parse_card(text, rel), vault.rules)
        if style == "entity":
            ent = codec.parse_entity(text, rel, path.stem)
            begin, end = text.find(codec.BLOCK_BEGIN), text.find(codec.BLOCK_END)
            block = text[begin + len(codec.BLOCK_BEGIN):end] if 0 <= begin < end else ""
            return codec.entity_to_text(ent, block, vault.rules)
    except VaultFormatError:
        pass  # damaged front matter: fall back to the text edit below
    return secretscan.redact_yaml_text(text, vault.rules)


def _vector_problems(vault: Vault) -> list[str]:
    """An `embeddings:` setting out of range (search and embed refuse it, exit 2), or a damaged key list of the
    embeddings layer (derived: `memvault embed` deletes it and starts over): warnings, not damage."""
    from memvault.errors import EmbedError, UsageError
    from memvault.search.dense.embed import attach
    from memvault.search.dense.settings import from_section
    from memvault.search.index import Index

    try:
        from_section(vault.config.section("embeddings"))
    except UsageError as exc:
        return [exc.message]
    if not vault.cache or not (vault.cache / "vectors.sqlite").exists():
        return []

    try:
        with Index(vault.root) as idx:
            attach(idx, check=True)
    except EmbedError as exc:
        return [exc.message]
    except sqlite3.Error:
        return []  # busy: another memvault is writing it
    return []


def _fix_derived(vault: Vault) -> list[str]:
    """Regenerate entity page blocks and drop the local search index (rebuilt on the next search)."""
    fixed = []
    # Under the card-change lock, as every writer of the vault's folders: a temp file this leaves when stopped
    # is then known to be garbage by the next holder (memvault.vault.tempfiles).
    with vault.exclusive("distill", "distill or another card change", settle=False):
        by_slug = pages.cards_by_entity(vault.cards(problems=[]))
        for path in vault.entity_files():
            try:
                target, text = pages.page_update(vault, path.stem, by_slug.get(path.stem, []), None)
            except ValueError:
                continue
            if text is not None and not outside(vault.root, target):
                atomic_write(target, text)
                fixed.append(f"{vault.rel(target)}: generated block rewritten")
    from memvault.search.index.schema import FILE, remove_files

    index = (vault.cache or vault.local) / FILE
    if index.exists() or index.is_symlink():
        remove_files(index)  # (and the file a build from nothing made, which search.sqlite links to)
        fixed.append(".memvault/search.sqlite: removed, rebuilt on the next search")
    return fixed
