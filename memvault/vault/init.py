"""init: a new vault from vault-template/, optionally under git."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memvault.errors import MemvaultError, UsageError
from memvault.vault.store import CONFIG_NAME

_PACKAGE = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class InitResult:
    root: Path
    git: bool


def template_dir() -> Path:
    """The template ships inside the package (memvault/template links to vault-template/ in a checkout)."""
    for candidate in (_PACKAGE / "template", _PACKAGE.parent / "vault-template"):
        if (candidate / CONFIG_NAME).is_file():
            return candidate
    raise MemvaultError("the vault template is missing from this installation; reinstall memvault")


def init_vault(target: Path, *, git: bool = False) -> InitResult:
    target = target.expanduser()
    if (target / CONFIG_NAME).exists():
        raise UsageError(f"{target} is already a vault ({CONFIG_NAME} exists)")
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder")
    if target.is_dir() and any(p.name != ".git" for p in target.iterdir()):
        raise UsageError(f"{target} is not empty; choose an empty or new folder")
    shutil.copytree(template_dir(), target, dirs_exist_ok=True)
    root = target.resolve()
    if git:
        _git_init(root)
    return InitResult(root=root, git=git)


def _git_init(root: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)

    try:
        if not (root / ".git").exists() and run("init", "-q").returncode != 0:
            raise MemvaultError(f"git init failed in {root}")
    except FileNotFoundError:
        raise MemvaultError("--git needs git on PATH") from None
    identity: list[str] = []
    if run("config", "user.email").returncode != 0:
        # Trigger: no git identity on this machine (a fresh server). Why: commit would fail. Outcome: commit as
        # "memvault" for this one commit only; the user's config is not touched.
        identity = ["-c", "user.name=memvault", "-c", "user.email=memvault@localhost"]
    run("add", "-A")
    done = run(*identity, "commit", "-q", "-m", "New memvault vault")
    if done.returncode != 0:
        raise MemvaultError(f"git commit failed in {root}: {done.stderr.strip()[:200]}")
