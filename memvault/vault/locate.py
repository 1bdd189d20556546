"""Where the vault is: --vault > MEMVAULT_DIR > nearest memvault.yaml walking up > ~/memvault.

Standard library only, so the search fast path can find the vault without importing yaml (~30 ms).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memvault.errors import VaultMissing

CONFIG_NAME = "memvault.yaml"


def locate_vault(explicit: str | os.PathLike | None, env: Mapping[str, str], cwd: Path | None = None) -> Path:
    """The vault's root folder, or VaultMissing (exit 3) saying how to create one."""
    if explicit:
        return _require_vault(Path(explicit).expanduser(), "--vault")
    if env.get("MEMVAULT_DIR"):
        return _require_vault(Path(env["MEMVAULT_DIR"]).expanduser(), "MEMVAULT_DIR")
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder
    return _require_vault(Path(env.get("HOME") or Path.home()) / "memvault", "the default ~/memvault")


def _require_vault(path: Path, how: str) -> Path:
    if (path / CONFIG_NAME).is_file():
        return path.resolve()
    raise VaultMissing(
        f"no vault at {path} (from {how}): create one with `memvault init {path}` "
        "or point --vault / MEMVAULT_DIR at an existing vault"
    )
