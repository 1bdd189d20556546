"""`memvault setup AGENT`: the MCP entry and hooks that bring memory to an agent by itself, written into the
agent's own settings files in the shapes the agents document, idempotently, keeping every other setting.

- claude-code: MCP entry `mcpServers.memvault` in `~/.claude.json` (project: `.mcp.json`); hooks SessionStart,
  Stop, PreCompact in `~/.claude/settings.json` (project: `.claude/settings.json`).
- codex: `[mcp_servers.memvault]` in `~/.codex/config.toml` (project: `.codex/config.toml`); the same hooks in
  `~/.codex/hooks.json` (project: `.codex/hooks.json`).
- cursor: `mcpServers.memvault` in `~/.cursor/mcp.json` (project: `.cursor/mcp.json`); no hooks (its logs are
  no capture format).
- gemini: `mcpServers.memvault` and hooks SessionStart, AfterAgent, PreCompress in `~/.gemini/settings.json`
  (project: `.gemini/settings.json`), which may hold comments (JSONC: they stay).
- antigravity: Antigravity CLI, in the folder it shares with Gemini CLI: `mcpServers.memvault` in
  `~/.gemini/config/mcp_config.json` (project: `.agents/mcp_config.json`); no hooks.

A SessionStart hook has no matcher, so it runs for every source, `compact` included where the host has it (Claude
Code, Codex): the brief comes back after compaction.

`CLAUDE_CONFIG_DIR` and `CODEX_HOME` move the user files as they move them for the agents. A user-scope file names
the python that runs memvault and the vault by absolute paths (this machine's files). A project-scope file is
committed and shared, so it names `memvault` as found on PATH (else a path relative to the project, when memvault
is installed inside it) and the vault only when it lies inside the project (relative); otherwise each person's
memvault finds their own vault (MEMVAULT_DIR, else ~/memvault). A hook entry is memvault's when its command runs
memvault's `hook` command; only those are touched.

`plan` gives each file's text before and after (nothing written: --dry-run shows it); `apply` writes them with
the backups of memvault.hosts.backups; `plan_undo` removes memvault's entries and, where nothing else changed
since, gives back the backup's very bytes, and the folders setup made go again when they are empty.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.errors import UsageError
from memvault.hosts import backups as hostfiles, jsonedit, tomledit
from memvault.vault.files import remove_empty_dirs

# (the host's event, memvault's hook event, the host's timeout in its unit: seconds, Gemini milliseconds)
CLAUDE_EVENTS = (("SessionStart", "session-start", 30), ("Stop", "stop", 120), ("PreCompact", "pre-compact", 120))
GEMINI_EVENTS = (("SessionStart", "session-start", 30_000), ("AfterAgent", "after-agent", 120_000),
                 ("PreCompress", "pre-compact", 120_000))
MCP_KEY = ("mcpServers", "memvault")
TOML_TABLE = ("mcp_servers", "memvault")


@dataclass(frozen=True)
class Agent:
    name: str
    mcp: tuple[str, str, str]  # (kind: json | toml, user file, project file); user paths relative to its home
    hooks: tuple[str, str] | None  # (user file, project file) of a Claude-shaped hooks document
    home: tuple[str, str]  # (environment variable that moves it, default folder under HOME)
    capture: str | None  # the capture format of its logs
    mcp_extra: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[tuple[str, str, int], ...] = ()
    root: str = ""  # a shell expression for the project's folder in a hook command ("": hooks run there)
    needs: tuple[str, str] = ("", "")  # what the host still needs after setup: (user scope, project scope)


AGENTS = {
    "claude-code": Agent(
        "claude-code", ("json", ".claude.json", ".mcp.json"), ("settings.json", ".claude/settings.json"),
        ("CLAUDE_CONFIG_DIR", ".claude"), "claude-code", {"type": "stdio"}, CLAUDE_EVENTS, '"$CLAUDE_PROJECT_DIR"',
        ("restart Claude Code (or run /hooks and /mcp) to load them",
         "each person approves a project's server once: start `claude` in the project and accept memvault "
         "(`claude mcp list` shows it as pending until then); the hooks run once the folder is trusted")),
    "codex": Agent(
        "codex", ("toml", "config.toml", ".codex/config.toml"), ("hooks.json", ".codex/hooks.json"),
        ("CODEX_HOME", ".codex"), "codex", {}, CLAUDE_EVENTS, '"$(git rev-parse --show-toplevel)"',
        ("Codex asks you to review and trust new hooks once (/hooks); versions before hooks were on by default "
         "need `[features] hooks = true` in config.toml",
         "Codex ignores a project's .codex/ folder until the project is trusted: start `codex` in it and trust it; "
         "then review the hooks once (/hooks), since `codex exec` silently skips hooks not yet trusted")),
    "cursor": Agent("cursor", ("json", "mcp.json", ".cursor/mcp.json"), None, ("", ".cursor"), None,
                    needs=("MCP only: Cursor's chat logs are not a capture format yet",) * 2),
    "gemini": Agent(
        "gemini", ("json", "settings.json", ".gemini/settings.json"), ("settings.json", ".gemini/settings.json"),
        ("", ".gemini"), "gemini", {}, GEMINI_EVENTS, '"$GEMINI_PROJECT_DIR"',
        ("restart Gemini CLI (/mcp and /hooks list them); it starts MCP servers and hooks, yours too, only in "
         "trusted folders: trust each project folder when Gemini asks; Antigravity CLI shares ~/.gemini: "
         "`memvault setup antigravity` gives it the MCP entry too",
         "Gemini CLI reads a project's .gemini/ only in a trusted folder: trust the folder when Gemini asks")),
    "antigravity": Agent(
        "antigravity", ("json", "config/mcp_config.json", ".agents/mcp_config.json"), None, ("", ".gemini"), None,
        needs=("MCP only (Antigravity CLI has no hooks memvault writes): restart it; `agy mcp list` shows the "
               "server",) * 2),
}


@dataclass(frozen=True)
class Launch:
    """How a host's files start memvault: `argv` for an MCP entry (no shell), `shell` for a hook's command line
    (both up to the subcommand), and what the person should know about it."""
    argv: tuple[str, ...]
    shell: str
    notes: tuple[str, ...] = ()


def launch(a: Agent, scope: str, env: Mapping[str, str], project_dir: Path, vault: Path, python: str) -> Launch:
    """The command the scope's files name (see the module's note)."""
    if scope != "project":
        argv = (python, "-m", "memvault", "--vault", str(vault))
        return Launch(argv, shlex.join(argv))
    notes = []
    local = Path(python).parent / "memvault"
    if shutil.which("memvault", path=env.get("PATH")):
        argv, shell = ["memvault"], "memvault"
    elif _inside(local, project_dir) and local.exists():
        rel = os.path.relpath(local, project_dir)
        argv, shell = [rel], _at_root(a, rel)
    else:
        argv, shell = ["memvault"], "memvault"
        notes.append("`memvault` is not on PATH here, and the project files name it so: put it on PATH "
                     f"(e.g. pipx install memvault, or add {local.parent} to PATH) before the agent starts")
    if _inside(vault, project_dir):
        rel = os.path.relpath(vault, project_dir)
        argv += ["--vault", rel]
        shell += " --vault " + _at_root(a, rel)
    else:
        found = env.get("MEMVAULT_DIR") or str(Path(env.get("HOME") or Path.home()) / "memvault")
        if Path(found).expanduser().resolve() != vault:
            notes.append(f"the project files name no vault (yours, {vault}, is outside the project): each "
                         "person's memvault finds their own (MEMVAULT_DIR, else ~/memvault); set "
                         f"MEMVAULT_DIR={shlex.quote(str(vault))} where the agent starts")
    return Launch(tuple(argv), shell, tuple(notes))


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _at_root(a: Agent, rel: str) -> str:
    """A project-relative path in a hook's command line, from the project's folder where the host names it."""
    return f"{a.root}/{shlex.quote(rel)}" if a.root else shlex.quote(rel)


def advice(a: Agent, scope: str, plan_launch: Launch | None, env: Mapping[str, str] | None = None,
           project_dir: Path | None = None) -> list[str]:
    """What the person still has to do after setup: for the host, for the command the files name, and when the
    other scope names memvault too (Claude Code reports two different commands as conflicting scopes)."""
    out = [a.needs[1 if scope == "project" else 0], *(plan_launch.notes if plan_launch else ())]
    if env is not None and project_dir is not None:
        other = "user" if scope == "project" else "project"
        path = files(a, other, env, project_dir)[0]
        if _has_entry(a, path):
            out.append(f"{path} ({other} scope) names memvault too: two different commands for one server may be "
                       f"reported as conflicting; keep one (`memvault setup {a.name} --scope {other} --undo`)")
    return out


def _has_entry(a: Agent, path: Path) -> bool:
    try:
        text = hostfiles.read(path)
        if text is None:
            return False
        if a.mcp[0] == "toml":
            return tomledit.get_table(tomledit.parse(text), TOML_TABLE) is not None
        return jsonedit.get(text, list(MCP_KEY)) is not None
    except ValueError:
        return False


@dataclass
class FileChange:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is removed
    what: list[str]

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "changed": self.changed, "what": self.what,
                "action": "none" if not self.changed else "delete" if self.after is None else
                "create" if self.before is None else "update"}


def agent(name: str) -> Agent:
    if name not in AGENTS:
        raise UsageError(f"unknown agent {name!r}: choose one of {', '.join(AGENTS)}")
    return AGENTS[name]


def files(a: Agent, scope: str, env: Mapping[str, str], project_dir: Path) -> tuple[Path, Path | None]:
    """(the file of the MCP entry, the hooks file or None) for the user's or the project's scope."""
    if scope == "project":
        return project_dir / a.mcp[2], (project_dir / a.hooks[1]) if a.hooks else None
    var, default = a.home
    user_home = Path(env.get("HOME") or Path.home())
    home = Path(env[var]).expanduser() if var and env.get(var) else user_home / default
    mcp = home / a.mcp[1]
    if a.name == "claude-code" and not (var and env.get(var)):
        mcp = user_home / ".claude.json"  # beside ~/.claude, not in it (with CLAUDE_CONFIG_DIR: inside that)
    return mcp, (home / a.hooks[0]) if a.hooks else None


def hook_command(lead: Launch, event: str, agent_name: str) -> str:
    return f"{lead.shell} hook {event} --agent {agent_name}"


def is_ours(command: Any) -> bool:
    """A hook command that runs memvault's `hook` command (any python, any vault)."""
    if not isinstance(command, str) or "memvault" not in command:
        return False
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    runs = any(a == "memvault" and i > 0 and argv[i - 1] == "-m" for i, a in enumerate(argv)) or (
        bool(argv) and Path(argv[0]).name.startswith("memvault"))
    return runs and "hook" in argv


def _group(command: str, timeout: int) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}


def _parse(path: Path, kind: str, text: str | None) -> Any:
    if text is None:
        return {}
    try:
        return jsonedit.check(text) if kind == "json" else tomledit.parse(text)
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}; fix the file first (memvault changed nothing)") from None


def _strip_hooks(text: str) -> str:
    """Text without memvault's hook commands in any event."""
    hooks = jsonedit.get(text, ["hooks"])
    for event in list(hooks) if isinstance(hooks, dict) else []:
        text = _strip_event(text, event)
    return text


def _strip_event(text: str, event: str) -> str:
    """Text without memvault's hook commands of one event: a group left with none of its hooks goes."""
    groups = jsonedit.get(text, ["hooks", event])
    for gi in reversed(range(len(groups))) if isinstance(groups, list) else ():
        inner = groups[gi].get("hooks") if isinstance(groups[gi], dict) else None
        if not isinstance(inner, list):
            continue
        mine = [hi for hi, h in enumerate(inner) if isinstance(h, dict) and is_ours(h.get("command"))]
        if mine and len(mine) == len(inner):
            text = jsonedit.remove(text, ["hooks", event, gi])
        else:
            for hi in reversed(mine):
                text = jsonedit.remove(text, ["hooks", event, gi, "hooks", hi])
    return text


def _prune(text: str, keys: list[list[str]], keep: Any) -> str:
    """Remove the containers at `keys` that are empty now, unless the original document (`keep`) had them."""
    for path in keys:
        value = jsonedit.get(text, path)
        if value in ({}, []) and jsonedit.get(json.dumps(keep), path) is None:
            text = jsonedit.remove(text, path)
    return text


def _ours_removed(data: Any, kind: str) -> Any:
    """Parsed settings without anything of memvault's, for comparing a file with its backup."""
    if kind == "toml":
        return tomledit.without(data, TOML_TABLE)
    text = json.dumps(data)
    text = _strip_hooks(jsonedit.remove(text, list(MCP_KEY)))
    for event in list((jsonedit.get(text, ["hooks"]) or {})):
        text = _prune(text, [["hooks", event]], {})
    return json.loads(_prune(text, [["hooks"], ["mcpServers"]], {}))


def plan(a: Agent, scope: str, env: Mapping[str, str], project_dir: Path, vault: Path, python: str,
         lead: Launch | None = None) -> list[FileChange]:
    mcp_file, hooks_file = files(a, scope, env, project_dir)
    lead = lead or launch(a, scope, env, project_dir, vault, python)
    command, args = lead.argv[0], [*lead.argv[1:], "mcp"]
    out: dict[Path, FileChange] = {}

    def edit(path: Path, kind: str, fn: Callable[[str], str], what: str) -> None:
        change = out.get(path)
        if change is None:
            before = hostfiles.read(path)
            _parse(path, kind, before)
            change = out[path] = FileChange(path, before, before, [])
        base = change.after if change.after is not None else ("{}\n" if kind == "json" else "")
        try:
            new = fn(base)
        except ValueError as exc:
            raise UsageError(f"{path}: {exc}") from None
        if new != base:
            change.after = new
            change.what.append(what)

    if a.mcp[0] == "toml":
        edit(mcp_file, "toml", lambda t: tomledit.set_table(t, TOML_TABLE, {"command": command, "args": args}),
             "[mcp_servers.memvault]")
    else:
        entry = {**a.mcp_extra, "command": command, "args": args}
        edit(mcp_file, "json", lambda t: t if jsonedit.get(t, list(MCP_KEY)) == entry
             else jsonedit.set_value(t, list(MCP_KEY), entry), "mcpServers.memvault")
    if hooks_file is not None and a.capture:
        for event, name, timeout in a.events:
            want = _group(hook_command(lead, name, a.name), timeout)

            def one(t: str, event: str = event, want: dict = want) -> str:
                groups = jsonedit.get(t, ["hooks", event]) or []
                ours = [g for g in groups if isinstance(g, dict) and any(
                    isinstance(h, dict) and is_ours(h.get("command")) for h in g.get("hooks") or [])]
                if ours == [want]:
                    return t  # already set up: not one byte changes
                t = _strip_event(t, event)
                return jsonedit.append(t, ["hooks", event], want)

            edit(hooks_file, "json", one, f"hooks.{event}")
    return list(out.values())


def plan_undo(a: Agent, scope: str, env: Mapping[str, str], project_dir: Path) -> list[FileChange]:
    backups = hostfiles.Backups(env)
    mcp_file, hooks_file = files(a, scope, env, project_dir)
    kinds = {mcp_file: a.mcp[0]}
    if hooks_file is not None:
        kinds.setdefault(hooks_file, "json")
    out = []
    for path, kind in kinds.items():
        before = hostfiles.read(path)
        if before is None:
            continue
        current = _parse(path, kind, before)
        saved = backups.get(path)
        original = _parse(path, kind, saved.text) if saved and saved.text is not None else None
        try:
            if kind == "toml":
                after = tomledit.remove_table(before, TOML_TABLE)
            else:
                after = _strip_hooks(jsonedit.remove(before, list(MCP_KEY)))
                keep = original if original is not None else {}
                for event in list((jsonedit.get(after, ["hooks"]) or {})):
                    after = _prune(after, [["hooks", event]], keep)
                after = _prune(after, [["hooks"], ["mcpServers"]], keep)
        except ValueError as exc:
            raise UsageError(f"{path}: {exc}") from None
        what = ["memvault's entries"]
        if saved is not None and _ours_removed(current, kind) == _ours_removed(original if original is not None
                                                                              else {}, kind):
            # Nothing but memvault's entries changed since the backup: give back its very bytes (or no file).
            after = saved.text if saved.existed else None
            what = ["restored as it was before setup" if saved.existed else "removed (setup created it)"]
        out.append(FileChange(path, before, after, what))
    return out


def apply(changes: list[FileChange], env: Mapping[str, str], undo: bool = False) -> list[dict[str, Any]]:
    """Write the changes (backups first); returns what happened per file, with the backup's place."""
    backups = hostfiles.Backups(env)
    done = []
    made: list[str] = []
    for c in changes:
        item = c.to_json()
        if c.changed and not undo:
            where = backups.keep(c.path, c.before)
            item["backup"] = str(where) if where else None
        if c.changed:
            if c.after is None:
                hostfiles.delete(c.path)
            else:
                hostfiles.write(c.path, c.after)
        if undo:
            made += backups.forget(c.path)  # memvault's entries are gone: its backup has done its work
        done.append(item)
    for folder in remove_empty_dirs(made):  # once every file is undone: two files may share a folder
        done.append({"path": folder, "changed": True, "what": ["folder setup made"], "action": "delete"})
    return done
