"""The entry point serves plain searches without Typer (memvault.cli.fast); its output and exit codes must be
exactly those of the Typer command for every command line it accepts, and it must hand over the rest."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memvault.cli.app import app
from memvault.cli.fast import parse

CARDS = [
    ("Use Postgres for the orders database", "decision", "postgres", "shop"),
    ("Orders are archived after 90 days", "rule", "postgres", "shop"),
    ("主角林晚住在雾港", "fact", "林晚", "novel"),
    ("Deploy with docker compose on Hetzner", "decision", "docker", "homelab"),
]


@pytest.fixture
def filled(run):
    for title, kind, entity, project in CARDS:
        run("remember", title, "--kind", kind, "-e", entity, "--project", project, "--body", f"{title}.")
    run("capture", input='{"role":"user","content":"should the orders table use postgres?","session":"p"}\n'
                         '{"role":"assistant","content":"yes, postgres with SKIP LOCKED","session":"p"}\n')
    return run


@pytest.mark.parametrize("args", [
    ["search", "postgres"],
    ["search", "postgres", "--json"],
    ["search", "orders", "database", "-n", "1"],
    ["search", "--project", "shop", "postgres", "--json"],
    ["search", "-e", "postgres", "SKIP", "--json"],
    ["search", "postgres", "SKIP", "--json"],  # the raw turn comes back beside the cards by default
    ["search", "--cards-only", "postgres", "SKIP", "--json"],
    ["search", "set", "up", "the", "orders", "archive", "queue", "--json"],  # one word of six: weak hits
    ["search", "林晚", "住在哪里"],
    ["search", "--kind=rule", "orders"],
    ["search", "kubernetes", "autoscaling"],  # no match: exit 1
])
def test_fast_path_matches_typer(filled, vault, args):
    assert parse(["--vault", str(vault), *args]) is not None  # really the fast path
    typer_result = filled.cli.invoke(app, ["--vault", str(vault), *args])
    fast = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), *args], capture_output=True,
                          text=True)
    assert fast.returncode == typer_result.exit_code
    assert fast.stdout == typer_result.stdout


@pytest.mark.parametrize("argv", [
    ["search", "--help"], ["--debug", "search", "x"], ["search", "--bogus", "x"], ["search"], ["stats"],
    ["search", "--limit", "many", "x"],
])
def test_everything_else_goes_to_typer(argv):
    assert parse(argv) is None


def test_a_search_that_ends_without_tear_down_still_writes_everything(run, vault, tmp_path):
    """memvault.__main__.leave ends a search's process with os._exit: all it printed must be in the file it was
    redirected to (a block-buffered stdout, ~90 KB of JSON), and the exit code must be the search's."""
    for i in range(120):
        run("remember", f"Backup rotation step {i} for the harbour archive", "--kind", "fact", "--body",
            "rotate the harbour backups " * 20)
    out = tmp_path / "hits.json"
    with open(out, "w", encoding="utf-8") as fh:
        done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "search", "harbour", "backup",
                               "--json", "-n", "120", "--snippet-chars", "600"], stdout=fh, stderr=subprocess.PIPE,
                              env={k: v for k, v in __import__("os").environ.items() if k != "PYTHONUNBUFFERED"})
    assert done.returncode == 0, done.stderr
    data = __import__("json").loads(out.read_text(encoding="utf-8"))
    assert data["count"] == 120 and len(data["hits"]) == 120 and out.stat().st_size > 60_000
    none = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "search", "kubernetes"],
                          capture_output=True, text=True)
    assert none.returncode == 1 and none.stdout == ""
