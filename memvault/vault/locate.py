"""Where the vault is: --vault > MEMVAULT_DIR > nearest memvault.yaml walking up > ~/memvault.

Standard library only, so the search fast path can find the vault without importing yaml (~30 ms).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from memvault.errors import VaultMissing

TYPE_CHECKING = False  # typing's own constant: pathlib only for annotations (a search imports no pathlib)
if TYPE_CHECKING:
    from pathlib import Path

CONFIG_NAME = "memvault.yaml"


def locate_vault(explicit: str | os.PathLike | None, env: Mapping[str, str], cwd: Path | None = None) -> Path:
    """The vault's root folder, or VaultMissing (exit 3) saying how to create one."""
    from pathlib import Path

    return Path(locate_root(explicit, env, cwd))


def locate_root(explicit: str | os.PathLike | None, env: Mapping[str, str],
                cwd: str | os.PathLike | None = None) -> str:
    """locate_vault as a string path (resolved, absolute): the search's fast path does without pathlib."""
    if explicit:
        return _require_vault(os.path.expanduser(os.fspath(explicit)), "--vault")
    if env.get("MEMVAULT_DIR"):
        return _require_vault(os.path.expanduser(env["MEMVAULT_DIR"]), "MEMVAULT_DIR")
    folder = os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd())
    while True:
        if os.path.isfile(os.path.join(folder, CONFIG_NAME)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return _require_vault(os.path.join(env.get("HOME") or os.path.expanduser("~"), "memvault"),
                          "the default ~/memvault")


def _require_vault(path: str, how: str) -> str:
    if os.path.isfile(os.path.join(path, CONFIG_NAME)):
        return os.path.realpath(path)
    from pathlib import Path  # the message names the folder as it always has (Path's spelling of it)

    shown = Path(path)
    raise VaultMissing(
        f"no vault at {shown} (from {how}): create one with `memvault init {shown}` "
        "or point --vault / MEMVAULT_DIR at an existing vault"
    )
