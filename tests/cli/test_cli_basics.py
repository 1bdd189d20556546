"""init / capture / stats / doctor / redact through the CLI, and vault resolution."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml
from typer.testing import CliRunner

from memvault.cli.app import app
from memvault.vault.config import DEFAULTS

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def test_init_creates_vault_from_template(tmp_path):
    runner = CliRunner()
    target = tmp_path / "v"
    res = runner.invoke(app, ["init", str(target)])
    assert res.exit_code == 0, res.stderr
    for name in ("memvault.yaml", ".gitignore", ".gitattributes", "FORMAT.md"):
        assert (target / name).is_file()
    assert yaml.safe_load((target / "memvault.yaml").read_text())["schema"] == 1
    again = runner.invoke(app, ["init", str(target)])
    assert again.exit_code == 2 and "already a vault" in again.stderr


def test_init_git_makes_a_first_commit(tmp_path):
    target = tmp_path / "g"
    res = CliRunner().invoke(app, ["init", str(target), "--git"])
    assert res.exit_code == 0, res.stderr
    log = subprocess.run(["git", "log", "--oneline"], cwd=target, capture_output=True, text=True, check=True)
    assert len(log.stdout.splitlines()) == 1
    tracked = subprocess.run(["git", "ls-files"], cwd=target, capture_output=True, text=True).stdout
    assert "memvault.yaml" in tracked and ".gitattributes" in tracked


def test_graph_html_stays_out_of_git(tmp_path):
    # graph.html is derived (redrawn after every write): in git it would conflict on every merge of two vaults.
    target = tmp_path / "g"
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(target), "--git"]).exit_code == 0
    assert runner.invoke(app, ["--vault", str(target), "remember", "Backups run nightly at 03:00"]).exit_code == 0
    res = runner.invoke(app, ["--vault", str(target), "graph", "--html"])
    assert res.exit_code == 0, res.stderr
    assert (target / "graph.html").is_file()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=target,
                            capture_output=True, text=True, check=True).stdout
    assert "cards/" in status and "graph.html" not in status


def test_template_lists_every_default_setting():
    template = yaml.safe_load((ROOT / "vault-template" / "memvault.yaml").read_text())
    assert template == DEFAULTS


def test_missing_vault_is_exit_3_with_a_hint(tmp_path):
    res = CliRunner().invoke(app, ["--vault", str(tmp_path / "nope"), "stats"])
    assert res.exit_code == 3
    assert "memvault init" in res.stderr


def test_vault_resolution_order(tmp_path, monkeypatch):
    runner = CliRunner()
    a, b, home = tmp_path / "a", tmp_path / "b", tmp_path / "home"
    for p in (a, b):
        assert runner.invoke(app, ["init", str(p)]).exit_code == 0
    assert runner.invoke(app, ["init", str(home / "memvault")]).exit_code == 0
    monkeypatch.setenv("HOME", str(home))
    nested = b / "cards" / "deep"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)

    def where(*args, env=None):
        res = runner.invoke(app, [*args, "stats", "--json"], env=env)
        assert res.exit_code == 0, res.stderr
        return json.loads(res.stdout)["vault"]

    assert where("--vault", str(a), env={"MEMVAULT_DIR": str(b)}) == str(a.resolve())
    assert where(env={"MEMVAULT_DIR": str(a)}) == str(a.resolve())
    assert where() == str(b.resolve())  # nearest memvault.yaml upwards
    monkeypatch.chdir(tmp_path)
    assert where() == str((home / "memvault").resolve())


def test_capture_summary_and_json(run):
    sample = (DATA / "formats" / "jsonl-en.jsonl").read_bytes()
    res = run("capture", "-v", input=sample)
    assert res.stdout.startswith("3 new, 0 already stored, 0 skipped")
    again = run.json("capture", input=sample)
    assert again["new"] == 0 and again["already_stored"] == 3 and again["skipped"] == 0


def test_capture_files_and_format_option(run):
    files = [str(DATA / "formats" / "text-zh.txt"), str(DATA / "formats" / "text-en.txt")]
    out = run.json("capture", *files, "--format", "text")
    assert out["new"] == 6 and set(out["formats"].values()) == {"text"}
    bad = run("capture", "--format", "yaml", input=b"User: hi there friend\nAssistant: hello\n", code=2)
    assert "unknown format" in bad.stderr


def test_capture_unreadable_file_is_usage_error(run, tmp_path):
    res = run("capture", str(tmp_path / "missing.jsonl"), code=2)
    assert "missing.jsonl" in res.stderr


def test_stats_counts_and_never_shows_key(run):
    run("capture", str(DATA / "formats" / "claude-code-en.jsonl"))
    secret = "sk-test-ShouldNeverAppear0123456789"
    data = run.json("stats", env={"MEMVAULT_LLM_API_KEY": secret})
    assert data["episodes"] == 4 and data["episodes_by_project"]
    assert data["llm"]["api_key"] == "env MEMVAULT_LLM_API_KEY (set)"
    human = run("stats", env={"MEMVAULT_LLM_API_KEY": secret})
    assert secret not in human.stdout + json.dumps(data)


def test_doctor_reports_path_and_line(run, vault):
    assert run.json("doctor")["ok"] is True
    run("capture", str(DATA / "formats" / "jsonl-en.jsonl"))
    (day,) = list((vault / "episodes").rglob("*.jsonl"))
    with open(day, "a", encoding="utf-8") as fh:
        fh.write('{"not": "closed"\n')
    card = vault / "cards" / "2026-11" / "c-20261101-0001.md"
    card.parent.mkdir(parents=True)
    card.write_text("---\nid: c-20261101-0001\nkind: fact\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    (vault / "cards" / "2026-11" / "a-folder.md").mkdir()  # odd things in the tree are not cards
    (vault / "entities").mkdir(exist_ok=True)
    (vault / "entities" / "folder.md").mkdir()
    res = run("doctor", code=3)
    run("search", "anything", code=1)
    run("reindex")
    lines = res.stdout.splitlines()
    assert f"{day.relative_to(vault).as_posix()}:4: invalid JSON" in "\n".join(lines)
    assert any(line.startswith("cards/2026-11/c-20261101-0001.md:") for line in lines)


def test_redact_filter_check_and_json(tmp_path):
    runner = CliRunner()
    text = "deploy with token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + " today\nnothing here\n"
    out = runner.invoke(app, ["--vault", str(tmp_path / "none"), "redact"], input=text)
    assert out.exit_code == 0 and "ghp_" not in out.stdout and "[REDACTED:" in out.stdout
    assert out.stdout.endswith("nothing here\n")
    check = runner.invoke(app, ["redact", "--check"], input=text)
    assert check.exit_code == 1 and check.stdout == ""
    clean = runner.invoke(app, ["redact", "--check"], input="just prose, 只是普通的文字\n")
    assert clean.exit_code == 0
    findings = json.loads(runner.invoke(app, ["redact", "--json"], input=text).stdout)
    assert findings["findings"][0]["line"] == 1 and "ghp_" not in json.dumps(findings)
    assert findings["findings"][0]["family"] == "provider-token"
    zh = runner.invoke(app, ["redact", "--json"], input="账号 wendy 密码 Kx7#pq%2Lm\nmysql -uroot -p" + "Qz9" * 4 + "\n")
    assert [(f["family"], f["line"]) for f in json.loads(zh.stdout)["findings"]] == [("prose", 1), ("command-line", 2)]


def test_every_command_has_help_and_is_documented():
    """Help text here; the docs side (every command and option in docs/commands.md, the README's main commands)
    is tests/cli/test_docs.py."""
    reference = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    import typer.main

    group = typer.main.get_command(app)
    names = group.list_commands(None)
    assert len(names) >= 16
    for name in names:
        command = group.get_command(None, name)
        assert command.name == name
        assert command.help and len(command.help) > 20, name
        assert command.short_help and len(command.short_help) <= 62, name
        assert f"\n## memvault {name}\n" in reference, f"docs/commands.md has no section for `memvault {name}`"


def test_piping_each_format_twice_adds_zero_lines(run, vault):
    samples = sorted((DATA / "formats").iterdir())
    kinds = set()
    for sample in samples:
        first = run.json("capture", input=sample.read_bytes())
        kinds.update(first["formats"].values())
        assert first["new"] > 0, sample.name
        lines = sum(len(f.read_bytes().splitlines()) for f in (vault / "episodes").rglob("*.jsonl"))
        second = run.json("capture", input=sample.read_bytes())
        assert second["new"] == 0, sample.name
        assert sum(len(f.read_bytes().splitlines()) for f in (vault / "episodes").rglob("*.jsonl")) == lines
    assert kinds == {"jsonl", "openai", "chatgpt", "claude-code", "codex", "sillytavern", "text", "cursor", "gemini",
                     "antigravity", "claude-ai", "opencode"}


def test_forget_says_what_it_did(run):
    card = run.json("remember", "Deploys happen on weekdays only", "--kind", "rule")["id"]
    assert run("forget", card, "--retract", "--reason", "changed our mind").stdout.startswith(f"retracted {card}:")
    assert run("forget", card, "--retract").stdout.startswith(f"{card} was already retracted")
    assert run("forget", card, "--purge").stdout.startswith(f"purged {card}:")


def test_commands_cron_runs_are_silent_on_success_into_a_pipe(run):
    """One quiet rule (issue 37): capture, distill, doctor, reindex and consolidate print nothing when stdout is
    no terminal and all went well (cron mails whatever a job prints); -v says what was done."""
    sample = (DATA / "formats" / "jsonl-en.jsonl").read_bytes()
    for args in (("capture",), ("distill",), ("doctor",), ("reindex",), ("consolidate",)):
        done = run(*args, input=sample if args == ("capture",) else None)
        assert (done.stdout, done.stderr) == ("", ""), args
    assert run("capture", "-v", input=sample).stdout.startswith("0 new, 3 already stored")
    assert "checked" in run("doctor", "-v").stderr and "0 problems" in run("doctor", "--verbose").stderr
    assert run("reindex", "-v").stdout.startswith("indexed ")
    assert run("consolidate", "-v").stdout.strip()


def test_unknown_command_gets_a_suggestion_and_distil_is_distill(run):
    res = run("serch", "x", code=2)
    assert "No such command 'serch'. Did you mean 'search'?" in res.stderr
    assert "Did you mean" not in run("zzzzz", code=2).stderr
    assert run("distil", "--help").stdout.startswith("Usage: memvault distil")
    assert "distil " not in run("--help").stdout  # an alias, not a listed command


def test_help_into_a_full_device_is_one_line_not_a_traceback(tmp_path):
    """Typer writes --help itself, outside the commands' error guard: a full disk (here /dev/full) used to print a
    rich traceback; now one line and exit 6, like every command that cannot write."""
    import sys

    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "memvault", "--help"], stdout=full, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path)
    assert done.returncode == 6, done.stderr
    assert done.stderr.strip().splitlines() == ["memvault: cannot write standard output: No space left on device"]
