"""Project names stay one printable label (issue 21, item 5): a control character, a line break or a path
separator in --project is a usage error (exit 2) on every command, before anything is written; a project name
read from a chat log is cleaned instead (the log is still captured)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BAD = ["two\nlines", "tab\there", "a/b", "a\\b", "bell\x07", "nel\x85x", "ls\u2028x", "..", " "]
CHAT = ('{"role":"user","content":"Which queue should the shop use for orders?","session":"s1"}\n'
        '{"role":"assistant","content":"Postgres with SKIP LOCKED, no Redis.","session":"s1"}\n')


@pytest.mark.parametrize("name", BAD)
def test_capture_refuses_a_bad_project_and_stores_nothing(run, vault, name):
    res = run("capture", "--project", name, input=CHAT, code=2)
    assert "project name" in res.stderr and res.stdout == ""
    assert not list((vault / "episodes").rglob("*.jsonl"))


@pytest.mark.parametrize("args", [["remember", "Use Postgres"], ["search", "postgres"], ["timeline"],
                                  ["context", "postgres"], ["distill"], ["conflicts"], ["consolidate"]])
def test_every_command_refuses_a_project_with_a_newline(run, vault, args):
    res = run(*args, "--project", "shop\nevil", code=2)
    assert "project name" in res.stderr and "control character" in res.stderr
    assert not list((vault / "cards").rglob("*.md"))


def test_good_names_still_work_english_and_chinese(run):
    for name in ("shop", "长夜 小说", "my-app_2.0", "Tidepool"):
        run("capture", "--project", name, input=CHAT.replace("s1", name))
        assert run.json("search", "postgres", "--episodes", "--project", name)["hits"]
    assert run("capture", "--project", "", input=CHAT).exit_code == 0  # "" means none, as before


def test_the_fast_search_path_refuses_it_too(run, vault):
    run("capture", "--project", "shop", input=CHAT)
    proc = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "search", "postgres",
                           "--project", "shop\nx"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "project name" in proc.stderr and proc.stdout == ""


def test_a_project_from_the_log_is_cleaned_not_refused(run, vault):
    lines = [{"role": "user", "content": "Which port does the NAS admin page use?", "session": "s9",
              "project": "home\nlab/nas"},
             {"role": "assistant", "content": "Port 5001 over HTTPS.", "session": "s9", "project": "home\nlab/nas"}]
    out = run.json("capture", input="".join(json.dumps(x) + "\n" for x in lines))
    assert out["new"] == 1
    [ep] = [json.loads(x) for f in (vault / "episodes").rglob("*.jsonl") for x in f.read_text().splitlines()]
    assert ep["project"] == "home-lab-nas"
    assert run.json("search", "NAS admin", "--episodes", "--project", "home-lab-nas")["hits"]
