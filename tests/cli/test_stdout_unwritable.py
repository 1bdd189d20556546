"""Standard output that cannot be written: `> /dev/full` (no space) gets one line naming standard output and exit
6, as a full disk does; a reader that went away (EPIPE: `| head`) ends the command quietly, exit 0. Real processes
with their stdout opened on /dev/full or on a pipe whose reader is closed; a vault holding Chinese cards and turns.

Before: the error of the write named no file, so `memvault stats > /dev/full` said `no space left on
<vault>/.memvault: free some space …`, a folder memvault had not even written to."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import DATA
from memvault.model import Card
from memvault.vault import codec

ONE_LINE = ["memvault: cannot write standard output: No space left on device"]


@pytest.fixture
def filled(run, vault):
    """Chinese and English cards (two of them in conflict) and Chinese turns; the card ids by name."""
    ids = {
        "rule": run.json("remember", "部署只在工作日进行", "--kind", "rule", "--project", "shop",
                         "-e", "部署")["id"],
        "fact": run.json("remember", "数据库备份每晚存到 NAS", "--project", "shop",
                         "-e", "部署,数据库")["id"],
    }
    # Two state cards that cannot both be true, side by side as a git merge leaves them.
    for n, value in enumerate(("第一人称", "第三人称")):
        card = Card(id=f"c-20261101-bbb00{n}", kind="state", title=f"小说视角：{value}", project="shop",
                    subject="小说", field="视角", value=value, created="2026-11-01T08:00:00Z",
                    valid_from="2026-11-01", source={"kind": "remember"})
        (vault / "cards" / "2026-11").mkdir(parents=True, exist_ok=True)
        (vault / "cards" / "2026-11" / f"{card.id}.md").write_text(codec.card_to_text(card), encoding="utf-8")
    run("capture", "--project", "shop", input=(DATA / "formats" / "claude-code-zh.jsonl").read_bytes())
    return ids


def memvault(vault, args, stdout) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), *args], stdout=stdout,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def commands(ids) -> list[tuple[str, ...]]:
    return [("stats",), ("stats", "--json"), ("timeline",), ("timeline", "--json"), ("show", ids["fact"]),
            ("show", ids["fact"], "--json"), ("search", "数据库"), ("search", "数据库", "--json"),
            ("search", "--episodes", "数据库"), ("context", "--project", "shop"),
            ("context", "--project", "shop", "--json"), ("context", "部署", "--project", "shop"),
            ("graph", ids["fact"]), ("graph", ids["fact"], "--json"), ("conflicts",), ("conflicts", "--json"),
            ("doctor", "--json"), ("--help",), ("stats", "--help")]


def test_each_reading_command_into_a_full_device_says_standard_output_in_one_line(vault, filled):
    for args in commands(filled):
        shown = memvault(vault, args, subprocess.PIPE)
        assert shown.returncode == 0 and shown.stdout.strip(), (args, shown.stderr)  # it has something to write
        with open("/dev/full", "w") as full:
            done = memvault(vault, args, full)
        assert (done.returncode, done.stderr.splitlines()) == (6, ONE_LINE), args


def test_each_reading_command_into_a_closed_pipe_ends_quietly(vault, filled):
    for args in commands(filled)[:-2]:  # (click ends --help on a closed pipe with exit 1, quietly too)
        reader, writer = os.pipe()
        os.close(reader)
        try:
            done = memvault(vault, args, writer)
        finally:
            os.close(writer)
        assert (done.returncode, done.stderr) == (0, ""), args



def test_a_closed_stdout_is_no_traceback(vault, filled):
    """`memvault stats >&-`: Python starts without sys.stdout; the end of a reading command flushed it anyway
    (AttributeError: a traceback, exit 1) and search wrote to it (an internal error, exit 70). The output goes
    nowhere, as click.echo makes it for every other command."""
    for args in (("stats",), ("timeline",), ("search", "数据库")):
        done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), *args],
                              stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
        assert (done.returncode, done.stderr) == (0, ""), args


def test_mcp_over_stdio_into_a_full_device_says_standard_output(vault):
    """The MCP server (the Typer-free path of memvault.cli.fast) said `internal error: OSError`."""
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "测试", "version": "1"}}}
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "mcp"], stdout=full,
                              input=json.dumps(hello, ensure_ascii=False) + "\n", stderr=subprocess.PIPE, text=True)
    assert (done.returncode, done.stderr.splitlines()) == (6, ONE_LINE)


def test_a_search_with_only_weak_hits_and_stdout_closed_says_no_match(tmp_path):
    """With stdout closed (`>&-`), a search that finds only weak hits asks stdout whether it is a terminal: exit 1
    and the no-match line, not an internal error (exit 70)."""
    import os
    import subprocess
    import sys

    root = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "memvault", "init", str(root)], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), "remember",
                    "The backup of the postgres database runs nightly"], check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), "search",
                           "postgres zzqxunknown qqwwnothing"], stdout=None, capture_output=False,
                          stderr=subprocess.PIPE, text=True, close_fds=True,
                          preexec_fn=lambda: os.close(1))
    assert done.returncode == 1, done.stderr
    assert "internal error" not in done.stderr and "no match" in done.stderr
