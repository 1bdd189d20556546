"""What doctor reports and `doctor --fix` finishes of a stopped writer and the vault's edge (issue 38): purges
whose text is still somewhere, temp files older than the lock's holder, links out of the vault, cards above the
size search indexes. Kept apart from doctor.py, which checks the files themselves."""

from __future__ import annotations

import os
from pathlib import Path

from memvault.errors import VaultFormatError
from memvault.vault import purges, tempfiles
from memvault.vault.edge import links_outside
from memvault.vault.store import Vault

OUTSIDE_LINK = "a link out of the vault, to"


def problems(vault: Vault) -> list[VaultFormatError]:
    """What a stopped writer left (a purge whose text is still somewhere, temp files older than the lock's
    holder), and links out of the vault (a git pull can plant one)."""
    out = [VaultFormatError(p.where, None, f"purge of {p.card} is unfinished: its text is still in "
                            f"{', '.join(where)}; `memvault doctor --fix` (or the next writing command) finishes it")
           for p in purges.unfinished(vault, remember=False) for where in [purges.remains(vault, p)] if where]
    out += [VaultFormatError(vault.rel(path), None, f"{OUTSIDE_LINK} {os.readlink(path)}: memvault neither reads "
                             "nor writes through it (remove the link, or move what it points to into the vault)")
            for path in links_outside(vault.root)]
    out += [VaultFormatError(vault.rel(path), None, "temp file left by a stopped write (it may hold text a purge "
                             "removed): `memvault doctor --fix` removes it") for path in tempfiles.stale(vault)]
    return out


def big_cards(vault: Vault, card_files: list[Path], stat=os.stat) -> list[VaultFormatError]:
    """Cards above the size search indexes (search.index.prepare.CARD_LIMIT): a memory is short text."""
    from memvault.search.index.prepare import CARD_LIMIT

    out = []
    for path in card_files:
        size = stat(path).st_size
        if size > CARD_LIMIT:
            out.append(VaultFormatError(vault.rel(path), None, f"{size / 1e6:.1f} MB, above the {CARD_LIMIT >> 20} "
                                        "MiB a card may hold: search indexes only its first MiB; keep the "
                                        "text in a file of its own and a short card that names it"))
    return out


def fix(vault: Vault) -> list[str]:
    """Finish unfinished purges and remove stale temp files (under the lock, as the next writer would)."""
    with vault.exclusive("distill", "distill or another card change", settle=False):
        since = tempfiles.holder_since(vault)
        return [f"{path}: finished or removed (a stopped write's leftover)"
                for path in tempfiles.settle(vault, since, holder_died=True)]
