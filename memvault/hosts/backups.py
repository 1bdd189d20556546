"""Agents' settings files that `memvault setup` writes (outside the vault): reading, atomic writes, and the backups
that make `setup --undo` give back the bytes a file had before memvault first touched it.

Backups live in one folder (`$XDG_STATE_HOME/memvault/setup`, else `~/.local/state/memvault/setup`), not beside
the files (a project's `.mcp.json` sits in a git repository): `setup.json` there maps each file memvault changed to
whether it existed, the name of its backup and the folders that setup created for it (which `--undo` removes
again when they are empty). The first change of a file makes the backup; later ones keep it,
so it always holds the file as it was before memvault. Files are written atomically, with the mode they had.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from memvault.vault.files import atomic_write, remove_file


def state_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base).expanduser() / "memvault" / "setup"


def read(path: Path) -> str | None:
    """The file's text, None when it does not exist. Not UTF-8 is a ValueError naming the file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None


@dataclass(frozen=True)
class Backup:
    existed: bool
    text: str | None  # the file before memvault first changed it (None: it did not exist, or the backup is gone)
    made_dirs: tuple[str, ...] = ()  # folders that did not exist before setup wrote the file


class Backups:
    def __init__(self, env: Mapping[str, str]):
        self.dir = state_dir(env)
        self.index_path = self.dir / "setup.json"

    def _index(self) -> dict[str, Any]:
        try:
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _name(self, path: Path) -> str:
        return hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:16] + "-" + path.name

    def get(self, path: Path) -> Backup | None:
        entry = self._index().get(str(path))
        if not isinstance(entry, dict):
            return None
        text = None
        if entry.get("backup"):
            text = read(self.dir / str(entry["backup"]))
        dirs = entry.get("made_dirs")
        return Backup(bool(entry.get("existed")), text,
                      tuple(str(d) for d in dirs) if isinstance(dirs, list) else ())

    def where(self, path: Path) -> Path | None:
        entry = self._index().get(str(path))
        return self.dir / entry["backup"] if isinstance(entry, dict) and entry.get("backup") else None

    def keep(self, path: Path, before: str | None) -> Path | None:
        """Record the file as it is before memvault's first change (nothing when already recorded)."""
        index = self._index()
        if str(path) in index:
            return self.where(path)
        name = self._name(path) if before is not None else None
        if name is not None:
            atomic_write(self.dir / name, before)
        index[str(path)] = {"existed": before is not None, "backup": name, "made_dirs": missing_dirs(path)}
        atomic_write(self.index_path, json.dumps(index, indent=2, ensure_ascii=False) + "\n")
        return self.dir / name if name else None

    def forget(self, path: Path) -> list[str]:
        """Drop the file's backup. Returns the folders setup made for it (the caller removes those left empty once
        every file is undone: two files may share a folder)."""
        index = self._index()
        entry = index.pop(str(path), None)
        made = []
        if isinstance(entry, dict) and isinstance(entry.get("made_dirs"), list):
            made = [str(d) for d in entry["made_dirs"]]
        if isinstance(entry, dict) and entry.get("backup"):
            remove_file(self.dir / entry["backup"])
        if entry is not None:
            atomic_write(self.index_path, json.dumps(index, indent=2, ensure_ascii=False) + "\n")
        return made


def missing_dirs(path: Path) -> list[str]:
    """The folders above `path` that do not exist yet (writing the file will make them), nearest first."""
    out = []
    for parent in path.parents:
        if parent.exists():
            break
        out.append(str(parent))
    return out


def write(path: Path, text: str) -> None:
    """Write the whole file atomically, keeping the mode an existing file had (a settings file may be 0600)."""
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    atomic_write(path, text)
    if mode is not None:
        os.chmod(path, mode)


def delete(path: Path) -> None:
    remove_file(path)
