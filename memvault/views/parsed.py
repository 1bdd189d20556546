"""Parsed cards remembered between runs of `doctor`: .memvault/doctor-cards.cache (derived, deletable); and
the conflict lines of the last run, .memvault/doctor-conflicts.cache, reused while no card file changed.

doctor parses every card's front matter; at 100k cards that alone took ~45 s. A card whose file has the same
size, mtime and inode as when it parsed cleanly is taken from the cache instead. The cache is keyed by the
card codec's own bytes (a new parser reads everything again) and holds only cards that parsed without error
(a broken card is parsed, and reported, every time). A file changed within the last two seconds is not
remembered: its mtime may not tell the next change apart. Pickle, as the cards are dataclasses: the file lives
in the user's own .memvault/ (gitignored, never merged from elsewhere), like the index.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import time
from pathlib import Path

from memvault.errors import VaultFormatError
from memvault.model import Card
from memvault.vault import codec
from memvault.vault.files import read_cache, write_cache
from memvault.vault.store import Vault, atomic_write

CACHE_NAME = "doctor-cards.cache"
CONFLICTS_NAME = "doctor-conflicts.cache"
VERSION = 1


def read_cards(vault: Vault, paths: list[Path], errors: list[VaultFormatError],
               sigs: dict[str, tuple | None] | None = None,
               stat=os.stat) -> tuple[list[tuple[Path, Card]], str | None]:
    """(path, card) for every card file of `paths` that parses (a problem of any other goes to `errors`), and
    a digest of every card file's path and stat (None when one changed too recently to be trusted, or failed).
    `sigs`, when given, gets card id -> its file's stat (None when too recent to be trusted)."""
    key = _codec_key()
    cache_path = vault.cache / CACHE_NAME if vault.cache else None
    try:
        data = pickle.loads(cache_path.read_bytes()) if cache_path else {}
        known = data["files"] if data.get("v") == VERSION and data.get("key") == key else {}
    except (OSError, ValueError, EOFError, TypeError, KeyError, AttributeError, pickle.UnpicklingError,
            ImportError, IndexError):
        known = {}  # none yet, another version's, or damaged: parse everything
    fresh: dict[str, tuple[tuple[int, int, int], Card]] = {}
    out = []
    digest = hashlib.sha256()
    trusted = True
    settled = time.time_ns() - 2_000_000_000
    for path in paths:
        rel = vault.rel(path)
        try:
            st = stat(path)
        except FileNotFoundError:
            continue
        sig = (st.st_size, st.st_mtime_ns, st.st_ino)
        digest.update(f"{rel}\0{sig}\n".encode())
        hit = known.get(rel)
        if hit is not None and hit[0] == sig:
            card = hit[1]
        else:
            try:
                card = vault.read_card(path)
            except VaultFormatError as exc:
                errors.append(exc)
                trusted = False
                continue
        if st.st_mtime_ns < settled:
            fresh[rel] = (sig, card)
        else:
            trusted = False
        if sigs is not None:
            sigs[card.id] = sig if st.st_mtime_ns < settled else None
        out.append((path, card))
    changed = fresh.keys() != known.keys() or any(fresh[r][0] != known[r][0] for r in fresh)
    if cache_path is not None and changed:
        with contextlib.suppress(OSError):
            atomic_write(cache_path, pickle.dumps({"v": VERSION, "key": key, "files": fresh}, protocol=5))
    return out, digest.hexdigest() if trusted else None


def conflict_lines(vault: Vault, digest: str | None, threshold: float, listed: int,
                   scan) -> tuple[list[str], bool]:
    """`scan()` (doctor's conflict lines and whether it stopped before the last pair), or what the last run
    found when the card files (`digest`, read_cards), the merge threshold, the number listed (`listed`) and the
    detector's code are the same. No digest (a card file too new to trust, or broken): scanned, nothing kept.
    Kept as the `found` of a marshal cache: {'lines': a list of strings, 'more': a flag}."""
    from memvault.distill import conflicts, merge, values

    code = b"".join(Path(m.__file__).read_bytes() for m in (conflicts, merge, values, codec))
    key = hashlib.sha256(f"{digest}:{threshold}:{listed}".encode() + code).hexdigest() if digest else None
    cache_path = vault.cache / CONFLICTS_NAME if vault.cache and key else None
    known = read_cache(cache_path, key, "found")  # {}: none yet, another version's, or damaged: scan
    lines, more = known.get("lines"), known.get("more")
    if isinstance(lines, list) and isinstance(more, bool):
        return lines, more
    lines, more = scan()
    write_cache(cache_path, key, {"lines": list(lines), "more": bool(more)}, known, "found")
    return lines, more


def _codec_key() -> str:
    return hashlib.sha256(Path(codec.__file__).read_bytes()).hexdigest()
