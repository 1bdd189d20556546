"""A vault this user cannot write (issue 21, item 3): every reading command works, its derived files (search
index, caches) going to a per-user cache ($XDG_CACHE_HOME/memvault/<hash>); every writing command exits 3 with
"cannot be written" before it changes anything. Tested under the real conditions, in real processes:
- a read-only bind mount of the vault (a private mount namespace: `unshare -m` as root, `unshare -rm` else);
- another user's vault: as root the vault is given to `nobody` and the command runs as root without the
  capabilities that bypass file permissions (setpriv --bounding-set), i.e. as a stranger to the vault who can
  still run the checkout's interpreter wherever it lives (a clone in a 0700 folder is out of `nobody`'s reach);
  as a user, the vault's write bits off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PY = sys.executable


def _env(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update({"XDG_CACHE_HOME": str(cache), "HOME": str(cache), "MEMVAULT_NOW": "2026-11-20T08:00:00Z"})
    return env


def _mv(vault: Path, *args: str) -> list[str]:
    return [PY, "-m", "memvault", "--vault", str(vault), *args]


@pytest.fixture(scope="module")
def shared_dir():
    """A folder every user can read (pytest's tmp_path is private to root), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="memvault-ro-"))
    path.chmod(0o755)
    yield path
    subprocess.run(["chmod", "-R", "u+w", str(path)], check=False)
    shutil.rmtree(path, ignore_errors=True)


def make_vault(base: Path, name: str, with_index: bool) -> Path:
    vault = base / name
    subprocess.run([PY, "-m", "memvault", "init", str(vault)], check=True, capture_output=True)
    env = _env(base / f"{name}-owner-cache")
    for log in ("claude-code-session.jsonl", "sillytavern-chat.jsonl", "notes-transcript.txt"):
        extra = ["--project", "demo"] if log.endswith(".txt") else []
        subprocess.run(_mv(vault, "capture", str(EXAMPLES / log), *extra), check=True, capture_output=True, env=env)
    subprocess.run(_mv(vault, "distill"), check=True, capture_output=True, env={**env, "MEMVAULT_NOW":
                                                                                  "2026-11-10T08:00:00Z"})
    # more turns, not distilled yet: `distill --auto` has work to do (and must refuse it)
    subprocess.run(_mv(vault, "capture", str(EXAMPLES / "chatgpt-conversations.json")), check=True,
                   capture_output=True, env=env)
    if with_index:
        subprocess.run(_mv(vault, "search", "postgres"), capture_output=True, env=env)  # owner's index in .memvault/
    else:
        shutil.rmtree(vault / ".memvault", ignore_errors=True)
    for p in [vault, *vault.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return vault


def tree(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file()}


def _unshare() -> list[str] | None:
    base = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    probe = subprocess.run([*base, "true"], capture_output=True)
    return base if probe.returncode == 0 else None


def read_only_mount(vault: Path, args: list[str]) -> list[str] | None:
    """The command in a private mount namespace where the vault is bind-mounted read-only."""
    base = _unshare()
    if base is None:
        return None
    script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    return [*base, "sh", "-c", script, "sh", str(vault), *_mv(vault, *args)]


def other_user(vault: Path, args: list[str]) -> list[str]:
    if os.geteuid() == 0:
        if vault.stat().st_uid != 65534:
            subprocess.run(["chown", "-R", "65534:65534", str(vault)], check=True)
        return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner,-chown", *_mv(vault, *args)]
    subprocess.run(["chmod", "-R", "a-w", str(vault)], check=True)
    return _mv(vault, *args)


READING = [["stats", "--json"], ["search", "postgres", "--json"], ["search", "tidepool", "--episodes", "--json"],
           ["timeline", "--json"], ["context", "which queue", "--json"], ["context", "tidepool", "--project", "tidepool", "--json"],
           ["conflicts", "--json"], ["doctor", "--json"], ["graph", "--json", "{card}"], ["show", "--json", "{card}"],
           ["export", "-o", "-"]]
WRITING = [["capture", str(EXAMPLES / "notes-transcript.txt"), "--project", "x"], ["distill"], ["distill", "--auto"],
           ["remember", "Use SQLite for the cache"], ["forget", "{card}", "--retract"], ["reindex"],
           ["consolidate"], ["doctor", "--fix"], ["graph", "--html"]]


def _check(vault: Path, cache: Path, wrap) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    cache.chmod(0o777)
    env = _env(cache)
    before = tree(vault)
    card = json.loads(subprocess.run(wrap(vault, ["search", "postgres", "--json"]), capture_output=True, text=True,
                                     env=env).stdout)["hits"][0]["id"]
    for args in READING:
        args = [a.replace("{card}", card) for a in args]
        cmd = wrap(vault, args)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, (args, proc.returncode, proc.stderr[-800:])
        assert "internal error" not in proc.stderr
        if "--json" in args:
            json.loads(proc.stdout)
    stats = json.loads(subprocess.run(wrap(vault, ["stats", "--json"]), capture_output=True, text=True,
                                      env=env).stdout)
    assert stats["cards"] > 0 and stats["pending_episodes"] > 0
    hits = json.loads(subprocess.run(wrap(vault, ["search", "postgres", "--json"]), capture_output=True, text=True,
                                     env=env).stdout)["hits"]
    assert card in [h["id"] for h in hits]
    assert list((cache / "memvault").glob("*/search.sqlite")), "the derived index went to the user cache"
    # no cache folder can be written either: the index is built in memory for the one command
    nowhere = {**env, "XDG_CACHE_HOME": str(vault / "no-cache"), "HOME": str(vault / "no-home")}
    for args in (["stats", "--json"], ["search", "postgres", "--json"], ["context", "which queue", "--json"]):
        proc = subprocess.run(wrap(vault, args), capture_output=True, text=True, env=nowhere, timeout=300)
        assert proc.returncode == 0, (args, proc.stderr[-800:])
    found = json.loads(subprocess.run(wrap(vault, ["search", "postgres", "--json"]), capture_output=True,
                                      text=True, env=nowhere).stdout)["hits"]
    assert [h["id"] for h in found] == [h["id"] for h in hits]
    for args in WRITING:
        args = [a.replace("{card}", card) for a in args]
        proc = subprocess.run(wrap(vault, args), capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 3, (args, proc.returncode, proc.stderr[-800:])
        assert "cannot be written" in proc.stderr and "internal error" not in proc.stderr, (args, proc.stderr)
    assert tree(vault) == before


@pytest.mark.parametrize("with_index", [False, True], ids=["fresh", "owner-indexed"])
def test_a_read_only_mount_reads_and_refuses_writes(shared_dir, with_index):
    vault = make_vault(shared_dir, f"mount-{with_index}", with_index)
    if read_only_mount(vault, ["stats"]) is None:
        pytest.skip("no mount namespace here (unshare -m refused); the other-user test covers the condition")
    _check(vault, shared_dir / f"mount-cache-{with_index}", read_only_mount)


@pytest.mark.parametrize("with_index", [False, True], ids=["fresh", "owner-indexed"])
def test_another_users_vault_reads_and_refuses_writes(shared_dir, with_index):
    vault = make_vault(shared_dir, f"other-{with_index}", with_index)
    _check(vault, shared_dir / f"other-cache-{with_index}", other_user)
