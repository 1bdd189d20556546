"""Issue 8, items 8 and 9: an option with a fixed set of values rejects an unknown one as a usage error (exit 2)
that names the valid values, and --vault/-V is accepted after the command as well as before it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memvault.cli.argv import hoist_vault
from memvault.cli.app import app
from memvault.cli.fast import parse

ROOT = Path(__file__).resolve().parents[2]
CHAT = ('{"role":"user","content":"should the orders table use postgres?","session":"s1"}\n'
        '{"role":"assistant","content":"yes, postgres with SKIP LOCKED","session":"s1"}\n')


def _script() -> str:
    """The installed `memvault` console script of this environment (the entry point users run)."""
    found = Path(sys.executable).with_name("memvault")
    assert found.exists(), "install the package (pip install -e .) to get the memvault script"
    return str(found)


# ---------------------------------------------------------------- item 8: fixed sets of values


def test_search_unknown_kind_is_usage_error_listing_kinds(run):
    run("remember", "Use Postgres for orders", "--kind", "decision", "-e", "postgres")
    res = run("search", "postgres", "--kind", "bogus", code=2)
    assert "bogus" in res.stderr and "decision" in res.stderr and "synopsis" in res.stderr
    assert res.stdout == ""
    assert run.json("search", "postgres", "--kind", "decision")["hits"]  # a valid kind still searches


def test_search_kinds_come_from_the_vault_settings(run, vault):
    run("remember", "Use Postgres for orders", "--kind", "decision", "-e", "postgres")
    cfg = vault / "memvault.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # warm the settings cache first
    run("search", "postgres", "--kind", "decision")
    text = cfg.read_text(encoding="utf-8").replace("  reflection: {pinned: false}",
                                                    "  reflection: {pinned: false}\n  recipe: {pinned: false}")
    assert "recipe" in text
    cfg.write_text(text, encoding="utf-8")
    res = run("search", "postgres", "--kind", "recipe", code=1)  # a configured kind: a plain "no match"
    assert "no match" in res.stderr
    res = run("search", "postgres", "--kind", "recipes", code=2)
    assert "recipe" in res.stderr


def test_fast_path_rejects_unknown_kind_like_typer(run, vault):
    run("remember", "Use Postgres for orders", "--kind", "decision", "-e", "postgres")
    args = ["--vault", str(vault), "search", "postgres", "-k", "bogus"]
    assert parse(args) is not None  # really the fast path
    typer_result = CliRunner().invoke(app, args)
    fast = subprocess.run([sys.executable, "-m", "memvault", *args], capture_output=True, text=True)
    assert typer_result.exit_code == fast.returncode == 2
    assert fast.stderr == typer_result.stderr
    assert "choose one of" in fast.stderr and "decision" in fast.stderr


def test_capture_unknown_format_is_usage_error_before_reading(run, vault):
    res = run("capture", "--format", "bogus", input=CHAT, code=2)
    assert "bogus" in res.stderr and "claude-code" in res.stderr and "sillytavern" in res.stderr
    assert not list((vault / "episodes").rglob("*.jsonl"))


def test_remember_unknown_kind_is_usage_error_listing_kinds(run, vault):
    res = run("remember", "Deploys only on weekdays", "--kind", "rules", code=2)
    assert "rule" in res.stderr and "preference" in res.stderr
    assert not list((vault / "cards").rglob("*.md"))


def test_forget_with_episodes_needs_purge(run):
    cid = run.json("remember", "Deploys only on weekdays", "--kind", "rule")["id"]
    res = run("forget", cid, "--retract", "--with-episodes", code=2)
    assert "--with-episodes" in res.stderr
    assert run.json("show", cid)["status"] == "active"  # nothing was retracted
    run("forget", cid, code=2)  # neither mode


def test_timeline_since_must_be_a_date(run):
    run("remember", "Use Postgres for orders", "--kind", "decision")
    for bad in ("yesterday", "2026-13-45", "2026-1-2", "2026-W01-1"):
        res = run("timeline", "--since", bad, code=2)
        assert "YYYY-MM-DD" in res.stderr
    assert run.json("timeline", "--since", "2000-01-01")["entries"]


# ---------------------------------------------------------------- item 9: --vault after the command


def _no_value(_name: str) -> set[str]:
    return set()


@pytest.mark.parametrize(("argv", "expected"), [
    (["capture", "--vault", "V", "-p", "x"], ["--vault", "V", "capture", "-p", "x"]),
    (["capture", "-V", "V"], ["-V", "V", "capture"]),
    (["stats", "--vault=V", "--json"], ["--vault=V", "stats", "--json"]),
    (["stats", "-VV"], ["-VV", "stats"]),
    (["--debug", "search", "x", "-V", "V"], ["--debug", "-V", "V", "search", "x"]),
    (["-V", "A", "stats", "-V", "B"], ["-V", "A", "-V", "B", "stats"]),  # the last one wins, as in click
    (["search", "--", "-V", "x"], ["search", "--", "-V", "x"]),  # after --, every word is an argument
    (["--vault", "A", "search", "x"], ["--vault", "A", "search", "x"]),
    (["nosuchcommand", "-V", "x"], ["nosuchcommand", "-V", "x"]),
    (["search", "x", "-V"], ["search", "x", "-V"]),  # no value: stays, and Typer reports it
    ([], []),
])
def test_hoist_vault_moves_only_vault_options(argv, expected):
    known = {"capture", "stats", "search"}
    assert hoist_vault(argv, lambda name: set() if name in known else None) == expected


def test_hoist_never_takes_an_option_value():
    argv = ["remember", "t", "--body", "-V", "--vault", "V"]
    assert hoist_vault(argv, lambda name: {"--body", "-b"}) == ["--vault", "V", "remember", "t", "--body", "-V"]


def test_every_command_accepts_vault_after_its_name(vault, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no vault found upwards: only the option can name it
    runner = CliRunner()

    def ok(*argv, input=None):
        res = runner.invoke(app, list(argv), input=input)
        assert res.exit_code == 0, (argv, res.stderr)
        return res

    assert "1 new" in ok("capture", "--vault", str(vault), "-v", input=CHAT).stdout
    cid = json.loads(ok("remember", "Use Postgres for orders", "-e", "postgres", "-V", str(vault),
                        "--json").stdout)["id"]
    assert json.loads(ok("stats", f"--vault={vault}", "--json").stdout)["episodes"] == 1
    assert json.loads(ok("search", "postgres", "-V", str(vault), "--json").stdout)["hits"]
    assert json.loads(ok("show", cid, "--json", "-V", str(vault)).stdout)["id"] == cid
    ok("timeline", "-V", str(vault))
    ok("graph", cid, "-V", str(vault))
    ok("context", "postgres", "-V", str(vault))
    ok("reindex", "-V", str(vault))
    ok("doctor", "-V", str(vault))
    ok("export", "-o", str(tmp_path / "b.json"), "-V", str(vault))
    ok("import", str(tmp_path / "b.json"), "-V", str(vault))
    ok("redact", "-V", str(vault), input="hello\n")
    ok("forget", cid, "--retract", "-V", str(vault))
    other = tmp_path / "other"
    shutil.copytree(ROOT / "vault-template", other)
    # After the command, the nearer option wins over one before it.
    assert json.loads(ok("--vault", str(other), "stats", "-V", str(vault), "--json").stdout)["episodes"] == 1


def test_installed_script_accepts_vault_after_the_command(vault, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["HOME"] = str(tmp_path)

    def script(*argv, input=None):
        return subprocess.run([_script(), *argv], input=input, capture_output=True, text=True, cwd=tmp_path,
                              env=env)

    done = script("capture", "--vault", str(vault), "--project", "shop", "-v", input=CHAT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1 new")
    done = script("capture", "-V", str(vault), "--json", input=CHAT)
    assert done.returncode == 0 and json.loads(done.stdout)["already_stored"] == 1
    # The Typer-free fast path of `search` takes it after the command too, and says the same as Typer.
    for argv in (["search", "postgres", "-V", str(vault), "--episodes", "--json"],
                 ["search", "--vault", str(vault), "-e", "postgres"],
                 ["search", f"--vault={vault}", "kubernetes"]):
        assert parse(argv) is not None
        fast = script(*argv)
        typer_result = CliRunner().invoke(app, argv)
        assert fast.returncode == typer_result.exit_code, fast.stderr
        assert fast.stdout == typer_result.stdout
    assert json.loads(script("search", "-e", "postgres", "-V", str(vault), "--json").stdout)["hits"]
    # A QUERY that is literally -V goes after --; alone, -V wants its value.
    missing = script("search", "postgres", "-V")
    assert missing.returncode == 2 and "-V" in missing.stderr and "No such command" not in missing.stderr
    literal = script("search", "-V", str(vault), "-e", "--", "-V")
    assert literal.returncode in (0, 1) and "No such option" not in literal.stderr
    # Help still shows the option, on the whole tool and on each command.
    assert "--vault" in script("--help").stdout
    assert "--vault" in script("capture", "--help").stdout
