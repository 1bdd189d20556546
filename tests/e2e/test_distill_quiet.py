"""Quiet means quiet (issue 21, item 7): `distill` prints its summary line only when stdout is a terminal, for
both engines; `--quiet` silences it there too; under cron (stdout not a terminal) a run that did work prints
nothing on stdout or stderr, synopsis lines of `--auto` included. `--json` always prints its summary. Real
processes; a pseudo-terminal stands in for the person watching."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from test_distill_offline import NOW, cards, make_vault

ROOT = Path(__file__).resolve().parents[2]


def _env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["MEMVAULT_NOW"] = NOW
    env.update(extra or {})
    return env


def piped(vault: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """As cron runs it: stdout and stderr are pipes (a mail, a log file)."""
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), *args], env=_env(env),
                          capture_output=True, text=True, cwd=ROOT, timeout=300, stdin=subprocess.DEVNULL)


def on_terminal(vault: Path, *args: str, env: dict | None = None) -> tuple[int, str, str]:
    """stdout on a pseudo-terminal, stderr a pipe: (exit code, what the terminal showed, stderr)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault), *args], env=_env(env),
                            stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=ROOT, text=True)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    err = proc.stderr.read()
    code = proc.wait(timeout=300)
    os.close(master)
    return code, shown.decode("utf-8", "replace").replace("\r\n", "\n"), err


def test_offline_engine_is_silent_under_cron_and_speaks_on_a_terminal(tmp_path):
    quiet = make_vault(tmp_path / "cron")
    done = piped(quiet, "distill")
    assert done.returncode == 0 and cards(quiet), done.stderr  # it did work ...
    assert done.stdout == "" and done.stderr == ""  # ... and said nothing
    seen = make_vault(tmp_path / "tty")
    code, shown, err = on_terminal(seen, "distill")
    assert code == 0 and shown.strip().startswith(f"engine offline: {len(cards(seen))} cards from 12 episodes")
    hushed = make_vault(tmp_path / "hushed")
    code, shown, err = on_terminal(hushed, "distill", "--quiet")
    assert code == 0 and cards(hushed) and shown == "" and err == ""
    as_json = make_vault(tmp_path / "json")
    out = piped(as_json, "distill", "--json", "--quiet")
    assert json.loads(out.stdout)["engine"] == "offline"


def test_llm_engine_follows_the_same_rules(tmp_path, fake_llm):
    def card(title: str) -> str:
        return json.dumps({"cards": [{"action": "create", "kind": "decision", "title": title, "body": title,
                                      "entities": ["nas"], "valid_from": None, "confidence": "user_stated",
                                      "episodes": ["e0"]}]})

    env = {"MEMVAULT_LLM_BASE_URL": fake_llm.base_url}
    quiet = make_vault(tmp_path / "cron")
    for _ in range(4):
        fake_llm.queue(card("Jellyfin runs on the mini PC"))
    done = piped(quiet, "distill", env=env)
    assert done.returncode == 0 and cards(quiet) and done.stdout == "" and done.stderr == ""
    seen = make_vault(tmp_path / "tty")
    for _ in range(4):
        fake_llm.queue(card("Jellyfin runs on the mini PC"))
    code, shown, err = on_terminal(seen, "distill", env=env)
    assert code == 0 and "12 episodes in" in shown and "cards created" in shown, (shown, err)
    hushed = make_vault(tmp_path / "hushed")
    for _ in range(4):
        fake_llm.queue(card("Jellyfin runs on the mini PC"))
    code, shown, err = on_terminal(hushed, "distill", "--quiet", env=env)
    assert code == 0 and cards(hushed) and shown == "" and err == ""


def test_auto_upkeep_lines_are_quiet_under_cron_too(tmp_path):
    vault = make_vault(tmp_path / "v")
    cfg = vault / "memvault.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("every_cards: 50 ", "every_cards: 3  "), encoding="utf-8")
    done = piped(vault, "distill", "--auto")
    assert done.returncode == 0, done.stderr
    assert any(c.kind == "synopsis" for c in cards(vault))  # a synopsis was written ...
    assert done.stdout == "" and done.stderr == ""  # ... silently
    seen = make_vault(tmp_path / "tty")
    cfg = seen / "memvault.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("every_cards: 50 ", "every_cards: 3  "), encoding="utf-8")
    code, shown, _err = on_terminal(seen, "distill", "--auto")
    assert code == 0 and "synopsis of demo: c-20261103-" in shown and "engine offline:" in shown
