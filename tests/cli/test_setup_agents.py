"""`memvault setup AGENT`: settings files in each agent's documented shape, set up twice (the second run changes
no byte), undone (the bytes come back), with the user's other settings kept; the entries it writes really run
(the hook commands through sh -c with the agents' JSON payloads, the MCP entry as a server), with spaces in the
vault's path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "formats"

# Files as people have them: other servers and hooks, their own indentation, comments in TOML, non-ASCII.
CLAUDE_SETTINGS = """{
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "Stop": [
            {
                "hooks": [{"type": "command", "command": "notify-send 'Claude fertig ✓'"}]
            }
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check.sh"}]}
        ]
    }
}
"""
CLAUDE_JSON = ('{"numStartups":12,"theme":"dark","mcpServers":{"github":{"type":"stdio","command":"npx",'
               '"args":["-y","@modelcontextprotocol/server-github"],"env":{}}},"projects":{"/home/me/x":'
               '{"allowedTools":[],"mcpServers":{}}}}')
CODEX_CONFIG = """# Codex settings
model = "gpt-5.2-codex"
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-docs"]
startup_timeout_sec = 20

[mcp_servers.docs.env]
DOCS_TOKEN_ENV = "DOCS_TOKEN"   # the name, not the token

[profiles.fast]
model = "gpt-5-mini"
"""
CODEX_HOOKS = """{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup|resume",
        "hooks": [
          {
            "type": "command",
            "command": "python3 ~/.codex/hooks/banner.py",
            "timeout": 5
          }
        ]
      }
    ]
  }
}
"""
CURSOR_MCP = '{\n\t"mcpServers": {\n\t\t"linear": {\n\t\t\t"url": "https://mcp.linear.app/sse"\n\t\t}\n\t}\n}\n'
# Gemini CLI reads JSONC: comments stay where they are, and a URL's // in a string is no comment.
GEMINI_SETTINGS = """{
  // my Gemini settings
  "theme": "GitHub", /* dark at night */
  "mcpServers": {
    "docs": {"httpUrl": "https://example.com//mcp"} // the team's server
  }
}
"""
ANTIGRAVITY_MCP = '{\n  "mcpServers": {\n    "github": {"command": "npx", "args": ["-y", "gh-mcp"]}\n  }\n}\n'

FILES = {  # agent -> {path relative to HOME: text}
    "claude-code": {".claude/settings.json": CLAUDE_SETTINGS, ".claude.json": CLAUDE_JSON},
    "codex": {".codex/config.toml": CODEX_CONFIG, ".codex/hooks.json": CODEX_HOOKS},
    "cursor": {".cursor/mcp.json": CURSOR_MCP},
    "gemini": {".gemini/settings.json": GEMINI_SETTINGS},
    "antigravity": {".gemini/config/mcp_config.json": ANTIGRAVITY_MCP},
}
EVENTS = {"claude-code": (("Stop", "stop"), ("PreCompact", "pre-compact"), ("SessionStart", "session-start")),
          "gemini": (("AfterAgent", "after-agent"), ("PreCompress", "pre-compact"), ("SessionStart", "session-start"))}
EVENTS["codex"] = EVENTS["claude-code"]


@pytest.fixture
def spaced(tmp_path, run) -> Path:
    """The test's vault, reached through a path with spaces (a symlink would not do: setup resolves it)."""
    target = tmp_path / "my memory" / "vault dir"
    target.parent.mkdir(parents=True)
    shutil.copytree(run.vault, target)
    return target


def _write(home: Path, files: dict[str, str]) -> dict[str, bytes]:
    for rel, text in files.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text, encoding="utf-8")
    return {rel: (home / rel).read_bytes() for rel in files}


def _snapshot(home: Path, rels) -> dict[str, bytes | None]:
    return {rel: (home / rel).read_bytes() if (home / rel).exists() else None for rel in rels}


def _mcp_entry(home: Path, agent: str) -> dict:
    if agent == "codex":
        return tomllib.loads((home / ".codex/config.toml").read_text())["mcp_servers"]["memvault"]
    rel = {"claude-code": ".claude.json", "cursor": ".cursor/mcp.json", "gemini": ".gemini/settings.json",
           "antigravity": ".gemini/config/mcp_config.json"}[agent]
    return _jsonc((home / rel).read_text())["mcpServers"]["memvault"]


def _jsonc(text: str) -> dict:
    from memvault.hosts.jsonedit import check

    return check(text)


def _hooks(home: Path, agent: str) -> dict:
    rel = {"claude-code": ".claude/settings.json", "codex": ".codex/hooks.json",
           "gemini": ".gemini/settings.json"}[agent]
    return _jsonc((home / rel).read_text())["hooks"]


def _setup(run, vault: Path, *args: str, code: int = 0):
    from typer.testing import CliRunner

    from memvault.cli.app import app

    res = CliRunner().invoke(app, ["--vault", str(vault), "setup", *args], catch_exceptions=False)
    assert res.exit_code == code, res.stdout + res.stderr
    return res


@pytest.mark.parametrize("agent", list(FILES))
def test_setup_twice_then_undo_gives_back_the_bytes(run, spaced, agent):
    home = Path(os.environ["HOME"])
    original = _write(home, FILES[agent])
    first = _setup(run, spaced, agent)
    assert "updated" in first.stdout and "backup" in first.stdout
    after_first = _snapshot(home, original)
    assert after_first != original
    # The user's settings are all still there, as parsed data, and the entry is memvault's.
    entry = _mcp_entry(home, agent)
    assert entry["command"] == sys.executable
    assert entry["args"] == ["-m", "memvault", "--vault", str(spaced.resolve()), "mcp"]
    for rel, raw in original.items():
        now = (home / rel).read_text()
        if rel.endswith(".toml"):
            old, new = tomllib.loads(raw.decode()), tomllib.loads(now)
            new["mcp_servers"].pop("memvault")
            assert new == old
            assert raw.decode() in now  # every byte of the file before is still there, in order
        else:
            old, new = _jsonc(raw.decode()), _jsonc(now)
            new.get("mcpServers", {}).pop("memvault", None)
            for event, groups in list(new.get("hooks", {}).items()):
                new["hooks"][event] = [g for g in groups if "memvault" not in json.dumps(g)]
                if not new["hooks"][event] and event not in old.get("hooks", {}):
                    del new["hooks"][event]
            if new.get("hooks") == {} and "hooks" not in old:
                del new["hooks"]
            assert new == old, rel
            if agent == "gemini":  # every comment is still there
                assert all(c in now for c in ("// my Gemini settings", "/* dark at night */", "// the team's"))
    if agent in EVENTS:
        hooks = _hooks(home, agent)
        for event, name in EVENTS[agent]:
            mine = [h for g in hooks[event] for h in g["hooks"] if "memvault" in h["command"]]
            assert len(mine) == 1 and f" hook {name} --agent {agent}" in mine[0]["command"], (event, mine)
            # Gemini counts a hook's timeout in milliseconds, the others in seconds; each above the hook's own
            # deadline (memvault.views.hookrun.DEADLINES), so the host never has to kill it.
            assert mine[0]["timeout"] == (30 if name == "session-start" else 120) * (1000 if agent == "gemini" else 1)
        # SessionStart has no matcher: it runs for every source, `compact` included (the brief comes back).
        assert all("matcher" not in g for g in hooks["SessionStart"] if "memvault" in json.dumps(g))
        if agent != "gemini":
            assert any("banner.py" in json.dumps(g) or "notify-send" in json.dumps(g)
                       for groups in hooks.values() for g in groups)  # the user's hooks stay
    # Twice: not one byte changes.
    second = _setup(run, spaced, agent)
    assert "unchanged" in second.stdout and "updated" not in second.stdout
    assert _snapshot(home, original) == after_first
    # Undone: the very bytes come back, and the backups are gone.
    undo = _setup(run, spaced, agent, "--undo")
    assert "restored" in undo.stdout
    assert _snapshot(home, original) == original
    state = home / ".local/state/memvault/setup"
    assert json.loads((state / "setup.json").read_text()) == {} and len(list(state.iterdir())) == 1


@pytest.mark.parametrize("agent", list(FILES))
def test_files_that_did_not_exist_are_created_and_removed_again(run, spaced, agent):
    home = Path(os.environ["HOME"])
    rels = list(FILES[agent])
    _setup(run, spaced, agent)
    assert all((home / rel).is_file() for rel in rels)
    assert _mcp_entry(home, agent)["args"][-1] == "mcp"
    _setup(run, spaced, agent)
    _setup(run, spaced, agent, "--undo")
    assert not any((home / rel).exists() for rel in rels)


def test_dry_run_writes_nothing_and_shows_a_diff(run, spaced):
    home = Path(os.environ["HOME"])
    original = _write(home, FILES["codex"])
    res = _setup(run, spaced, "codex", "--dry-run")
    assert "+[mcp_servers.memvault]" in res.stdout and '+      "Stop": [' not in res.stdout
    assert "hook stop --agent codex" in res.stdout
    assert _snapshot(home, original) == original and not (home / ".local/state").exists()


def test_later_edits_by_the_person_survive_undo(run, spaced):
    home = Path(os.environ["HOME"])
    _write(home, FILES["claude-code"])
    _setup(run, spaced, "claude-code")
    path = home / ".claude/settings.json"
    path.write_text(path.read_text().replace('"model": "opus"', '"model": "sonnet"'), encoding="utf-8")
    _setup(run, spaced, "claude-code", "--undo")
    data = json.loads(path.read_text())
    assert data["model"] == "sonnet" and "memvault" not in path.read_text()
    assert data["hooks"]["Stop"] == json.loads(CLAUDE_SETTINGS)["hooks"]["Stop"]
    assert set(data["hooks"]) == {"Stop", "PreToolUse"}


def test_an_old_entry_is_replaced_not_doubled(run, spaced, tmp_path):
    home = Path(os.environ["HOME"])
    _write(home, FILES["codex"])
    other = tmp_path / "old vault"
    shutil.copytree(spaced, other)
    _setup(run, other, "codex")
    _setup(run, spaced, "codex")
    assert _mcp_entry(home, "codex")["args"][3] == str(spaced.resolve())
    hooks = _hooks(home, "codex")
    assert all(sum("memvault" in json.dumps(g) for g in groups) <= 1 for groups in hooks.values())
    assert str(spaced.resolve()) in json.dumps(hooks) and str(other.resolve()) not in json.dumps(hooks)
    _setup(run, spaced, "codex", "--undo")
    assert (home / ".codex/config.toml").read_text() == CODEX_CONFIG


def test_a_broken_file_is_refused_and_left_alone(run, spaced):
    home = Path(os.environ["HOME"])
    _write(home, {".claude/settings.json": '{\n  "model": "opus",\n  "hooks": {,}\n}\n'})
    res = _setup(run, spaced, "claude-code", code=2)
    assert "settings.json: line 3" in res.stderr and "changed nothing" in res.stderr
    assert (home / ".claude/settings.json").read_text().startswith('{\n  "model": "opus",\n  "hooks": {,}')
    _write(home, {".codex/config.toml": 'model = "x"\nmcp_servers = { memvault = { command = "y" } }\n'})
    res = _setup(run, spaced, "codex", code=2)
    assert "config.toml" in res.stderr and "by hand" in res.stderr


def _memvault_on_path(tmp_path: Path, monkeypatch) -> Path:
    """A `memvault` command on PATH (what pipx or a system install gives), running this checkout."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "memvault"
    script.write_text(f"#!/bin/sh\nexec {shlex_quote(sys.executable)} -m memvault \"$@\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return bin_dir


def shlex_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def test_project_scope_and_moved_homes(run, spaced, tmp_path, monkeypatch):
    repo = tmp_path / "shop repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.chdir(repo / "src")
    _memvault_on_path(tmp_path, monkeypatch)
    res = _setup(run, spaced, "claude-code", "--scope", "project")
    # Portable: the committed files name `memvault` from PATH and no path of this machine.
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["memvault"]
    assert entry == {"type": "stdio", "command": "memvault", "args": ["mcp"]}
    settings = (repo / ".claude/settings.json").read_text()
    assert "memvault hook stop --agent claude-code" in settings and str(tmp_path) not in settings
    # What the host still needs, and where the vault is found (it lies outside the project).
    assert "approve" in res.stderr and "pending" in res.stderr and "MEMVAULT_DIR=" in res.stderr
    _setup(run, spaced, "claude-code", "--scope", "project", "--undo")
    # Undone: the files and the folder setup made are gone; the repository stays.
    assert not (repo / ".mcp.json").exists() and not (repo / ".claude").exists() and (repo / ".git").is_dir()
    codex_home = tmp_path / "codex home"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    _setup(run, spaced, "codex")
    assert (codex_home / "config.toml").is_file() and (codex_home / "hooks.json").is_file()
    assert _mcp_entry_at(codex_home / "config.toml")["command"] == sys.executable  # user scope: absolute
    res = _setup(run, spaced, "codex", "--scope", "project")
    assert "trust" in res.stderr and "codex exec" in res.stderr
    # The user scope names memvault too (a different command): said, since hosts report it as a conflict.
    assert "(user scope) names memvault too" in res.stderr and "--scope user --undo" in res.stderr
    _setup(run, spaced, "codex", "--scope", "project", "--undo")
    assert not (repo / ".codex").exists()


def _mcp_entry_at(path: Path) -> dict:
    return tomllib.loads(path.read_text())["mcp_servers"]["memvault"]


def test_project_files_run_on_another_machine(run, spaced, tmp_path, monkeypatch):
    """A vault inside the project is named relative to it; the hook runs from the project's folder as the host
    gives it ($CLAUDE_PROJECT_DIR), with `memvault` from PATH, and a missing `memvault` is said out loud."""
    repo = tmp_path / "team repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copytree(spaced, repo / "memory")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    res = _setup(run, repo / "memory", "claude-code", "--scope", "project", "--dry-run")
    assert "not on PATH" in res.stderr or "not on PATH" in res.stdout
    _memvault_on_path(tmp_path, monkeypatch)
    res = _setup(run, repo / "memory", "claude-code", "--scope", "project")
    assert "MEMVAULT_DIR" not in res.stderr and "not on PATH" not in res.stderr
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["memvault"]["args"] == [
        "--vault", "memory", "mcp"]
    hooks = json.loads((repo / ".claude/settings.json").read_text())["hooks"]
    stop = hooks["Stop"][0]["hooks"][0]["command"]
    assert stop == 'memvault --vault "$CLAUDE_PROJECT_DIR"/memory hook stop --agent claude-code'
    # "Another machine": the repository moved, the hook run from elsewhere with the host's variable.
    moved = tmp_path / "elsewhere" / "checkout"
    moved.parent.mkdir()
    shutil.move(str(repo), str(moved))
    transcript = tmp_path / "t.jsonl"
    shutil.copy(DATA / "claude-code-en.jsonl", transcript)
    done = _run_hook(stop, {"transcript_path": str(transcript), "cwd": str(moved)}, Path(os.environ["HOME"]),
                     CLAUDE_PROJECT_DIR=str(moved), PATH=os.environ["PATH"])
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert list((moved / "memory" / "episodes").rglob("*.jsonl"))


def test_launch_names_a_memvault_installed_inside_the_project(tmp_path):
    from memvault.hosts import agents

    project = tmp_path / "p"
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "memvault").write_text("#!/bin/sh\n")
    vault = tmp_path / "v"
    lead = agents.launch(agents.AGENTS["codex"], "project", {"PATH": "/nonexistent", "HOME": str(tmp_path)},
                         project, vault, str(project / ".venv" / "bin" / "python"))
    assert lead.argv == (".venv/bin/memvault",)
    assert lead.shell == '"$(git rev-parse --show-toplevel)"/.venv/bin/memvault'
    assert any("MEMVAULT_DIR" in n for n in lead.notes)
    home_vault = agents.launch(agents.AGENTS["gemini"], "project", {"PATH": "/nonexistent", "HOME": str(tmp_path)},
                               project, tmp_path / "memvault", str(project / ".venv" / "bin" / "python"))
    assert home_vault.notes == () and home_vault.shell == '"$GEMINI_PROJECT_DIR"/.venv/bin/memvault'


def _run_hook(command: str, payload: dict, home: Path, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    full.update({"HOME": str(home), **env})
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          env=full, cwd=str(home), timeout=120)


@pytest.mark.parametrize("agent,log", [("claude-code", "claude-code-en.jsonl"), ("codex", "codex-zh.jsonl")])
def test_the_written_hooks_and_server_really_run(run, spaced, agent, log, tmp_path):
    home = Path(os.environ["HOME"])
    _setup(run, spaced, agent)
    hooks = _hooks(home, agent)
    command = {e: next(h["command"] for g in hooks[e] for h in g["hooks"] if "memvault" in h["command"])
               for e in ("Stop", "PreCompact", "SessionStart")}
    transcript = tmp_path / "session log.jsonl"
    shutil.copy(DATA / log, transcript)
    payload = {"session_id": "s1", "transcript_path": str(transcript), "cwd": "/somewhere",
               "hook_event_name": "Stop"}
    off = _run_hook(command["Stop"], payload, home, MEMVAULT_CAPTURE="off")
    assert off.returncode == 0 and off.stdout == ""
    assert not list((spaced / "episodes").rglob("*.jsonl"))
    stop = _run_hook(command["Stop"], payload, home)
    assert stop.returncode == 0 and stop.stdout == "" and stop.stderr == ""
    stored = [json.loads(line) for f in (spaced / "episodes").rglob("*.jsonl") for line in f.read_text().splitlines()]
    assert stored and {ep["source"]["kind"] for ep in stored} == {agent}
    again = _run_hook(command["PreCompact"], {**payload, "hook_event_name": "PreCompact"}, home)
    assert again.returncode == 0
    assert len([1 for f in (spaced / "episodes").rglob("*.jsonl") for _ in f.read_text().splitlines()]) == len(stored)
    project = stored[0]["project"]
    subprocess.run([sys.executable, "-m", "memvault", "--vault", str(spaced), "remember", "Run the tests with -x",
                    "--kind", "rule", "--project", project], check=True, capture_output=True, env={**os.environ})
    start = _run_hook(command["SessionStart"], {"cwd": f"/home/someone/{project}", "source": "startup"}, home)
    assert start.returncode == 0, start.stderr
    out = json.loads(start.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart" and "Run the tests with -x" in out["additionalContext"]
    assert f"Memory brief for project {project}" in out["additionalContext"]
    nothing = _run_hook(command["SessionStart"], {"cwd": "/nowhere/unknown"}, home)
    assert nothing.returncode == 0  # no project cards: the personal ones, or nothing at all
    broken = _run_hook(command["Stop"], {"transcript_path": 5}, home)
    assert broken.returncode == 0 and broken.stdout == ""
    # The MCP entry starts a server that the official SDK client talks to.
    entry = _mcp_entry(home, agent)
    assert "Run the tests with -x" in _sdk_context(entry["command"], entry["args"], project)


def _sdk_context(command: str, args: list[str], project: str) -> str:
    import anyio

    async def main():
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    res = await session.call_tool("context", {"project": project})
                    return res.structured_content["pack"]

    return anyio.run(main)


def test_a_hook_never_fails_the_agent(run, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    for event, payload in (("session-start", "not json"), ("stop", '{"transcript_path": "/nope"}'),
                           ("bogus", "{}")):
        done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(tmp_path / "missing"), "hook",
                               event], input=payload, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0 and done.stdout == "", (event, done.stderr)
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize("agent,files", [
    ("codex", {".codex/config.toml": 'model = "o3"', ".codex/hooks.json": "{}"}),
    ("codex", {".codex/config.toml": "\n\n# only a comment\n", ".codex/hooks.json": '{"hooks": {}}\n'}),
    ("claude-code", {".claude/settings.json": '{"hooks": {"Stop": []}, "mcpServers": {}}',
                     ".claude.json": "{ }\n"}),
    ("claude-code", {".claude/settings.json": '{\r\n  "model": "opus"\r\n}\r\n', ".claude.json": "{}"}),
])
def test_undo_gives_back_the_bytes_of_odd_shapes(run, spaced, agent, files):
    home = Path(os.environ["HOME"])
    original = _write(home, files)
    _setup(run, spaced, agent)
    assert _mcp_entry(home, agent)["command"] == sys.executable
    once = _snapshot(home, original)
    _setup(run, spaced, agent)
    assert _snapshot(home, original) == once
    _setup(run, spaced, agent, "--undo")
    assert _snapshot(home, original) == original
