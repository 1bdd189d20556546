"""Parsed cards remembered between runs of `doctor`: .memvault/doctor-cards.cache (derived, deletable).

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
import pickle
import time
from pathlib import Path

from memvault.errors import VaultFormatError
from memvault.model import Card
from memvault.vault import codec
from memvault.vault.store import Vault, atomic_write

CACHE_NAME = "doctor-cards.cache"
VERSION = 1


def read_cards(vault: Vault, paths: list[Path], errors: list[VaultFormatError]) -> list[tuple[Path, Card]]:
    """(path, card) for every card file of `paths` that parses; a problem of any other goes to `errors`."""
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
    settled = time.time_ns() - 2_000_000_000
    for path in paths:
        rel = vault.rel(path)
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        sig = (st.st_size, st.st_mtime_ns, st.st_ino)
        hit = known.get(rel)
        if hit is not None and hit[0] == sig:
            card = hit[1]
        else:
            try:
                card = vault.read_card(path)
            except VaultFormatError as exc:
                errors.append(exc)
                continue
        if st.st_mtime_ns < settled:
            fresh[rel] = (sig, card)
        out.append((path, card))
    changed = fresh.keys() != known.keys() or any(fresh[r][0] != known[r][0] for r in fresh)
    if cache_path is not None and changed:
        with contextlib.suppress(OSError):
            atomic_write(cache_path, pickle.dumps({"v": VERSION, "key": key, "files": fresh}, protocol=5))
    return out


def _codec_key() -> str:
    return hashlib.sha256(Path(codec.__file__).read_bytes()).hexdigest()
