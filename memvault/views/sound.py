"""Files doctor found sound, remembered between runs by stat: .memvault/doctor-files.cache (derived, deletable).

A second doctor on a 100k-card vault read every file again for git conflict markers (2.4M lines), parsed every
episode line again and rendered every entity page's block again. A file whose size, mtime and inode are the ones
it had when doctor last found nothing wrong with it is not read again; an entity page also needs the files of
the cards it lists unchanged (its block is made from them). As with the card cache (parsed.py): the cache is keyed
by the checking code's bytes, a file changed within the last two seconds is not remembered (its mtime may not
tell the next change apart), and a file with a problem or a warning is checked, and reported, every time.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from memvault.vault.files import read_cache, write_cache
from memvault.vault.store import Vault

NAME = "doctor-files.cache"


class Stats(dict):
    """os.stat, asked once a run for each file (doctor's checks each stat'ed every card file: 400k calls at
    100k cards). A stat taken before a file is read can only make the next run read it again, never skip it."""

    def __call__(self, path) -> os.stat_result:
        key = os.fspath(path)
        st = self.get(key)
        if st is None:
            st = self[key] = os.stat(key)
        return st


class Sound:
    def __init__(self, vault: Vault, code: tuple[str, ...], stat=os.stat):
        """`code`: the files of the modules whose checks a sound file passed."""
        self.vault = vault
        self.stat = stat
        self.path = vault.cache / NAME if vault.cache else None
        self.key = hashlib.sha256(b"".join(Path(f).read_bytes() for f in code)).hexdigest()
        self.known = read_cache(self.path, self.key)  # {}: none yet, another version's, or damaged: check all
        self.checked: dict[str, tuple] = {}
        self.settled = time.time_ns() - 2_000_000_000

    def sig(self, path: Path, extra: str = "") -> tuple | None:
        """The file's (size, mtime, inode, extra), None when it is gone or too new to be trusted."""
        try:
            st = self.stat(path)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns, st.st_ino, extra) if st.st_mtime_ns < self.settled else None

    def todo(self, paths: list[Path], extra: dict[str, str | None] | None = None) -> list[Path]:
        """The paths to check: those not found sound with the same stat (and `extra`, by rel; None: not to be
        trusted) last time."""
        out = []
        for path in paths:
            rel = self.vault.rel(path)
            more = (extra or {}).get(rel, "")
            sig = self.sig(path, more) if more is not None else None
            if sig is not None and self.known.get(rel) == sig:
                self.checked[rel] = sig
            else:
                out.append(path)
                if sig is not None:
                    self.checked[rel] = sig  # sound unless a problem names it (save)
        return out

    def save(self, bad: set[str]) -> None:
        """Remember every file checked (or taken as sound) this run that no problem or warning names."""
        fresh = {rel: sig for rel, sig in self.checked.items() if rel not in bad}
        write_cache(self.path, self.key, fresh, self.known)


def cards_key(cards: list, where: dict[str, tuple | None]) -> str | None:
    """What an entity page's block is made from: its cards' files, by stat (None when one is too new to trust)."""
    sigs = [where.get(c.id) for c in cards]
    if any(s is None for s in sigs):
        return None
    return hashlib.sha256(repr(sigs).encode()).hexdigest()
