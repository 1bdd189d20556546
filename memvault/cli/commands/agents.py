"""Commands that connect agents to the vault: setup (write an agent's MCP entry and hooks) and hook (what those
hooks run: capture at stop and before compaction, the project's brief at session start).

(`memvault.cli.commands.setup` is the older module of init/capture/redact: setting a vault up, not an agent.)
"""

from __future__ import annotations

import difflib
import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from memvault.cli.common import err, guard, now_fn, open_vault, print_json, sub_app
from memvault.errors import MemvaultError, NoMatch, UsageError

app = sub_app()

NOTES = {
    "claude-code": "restart Claude Code (or run /hooks and /mcp) to load them",
    "codex": "Codex asks you to review and trust new hooks once (/hooks); versions before hooks were on by "
             "default need `[features] hooks = true` in config.toml",
    "cursor": "MCP only: Cursor's chat logs are not a capture format yet",
    "gemini": "MCP only: Gemini CLI's chat logs are not a capture format yet",
}
OFF = {"off", "0", "false", "no"}
MAX_PAYLOAD = 1 << 20


@app.command()
@guard
def setup(
    agent: Annotated[str, typer.Argument(help="claude-code, codex, cursor or gemini.")],
    undo: Annotated[bool, typer.Option("--undo", help="Remove memvault's entries again (the files as they were "
                                       "before, where nothing else changed since).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the changes as a diff; write nothing.")] = False,
    scope: Annotated[str, typer.Option("--scope", help="user (your settings, every project) or project (this "
                                       "project's files, e.g. .mcp.json).")] = "user",
    as_json: Annotated[bool, typer.Option("--json", help="Print what changed as JSON.")] = False,
) -> None:
    """Connect an agent to the vault in one command: its MCP entry (memvault mcp), and hooks that capture the
    session when the agent stops and before it compacts, and give it the project's memory brief when a session
    starts. Idempotent; keeps every other setting byte for byte; backs each file up first.

    Example: memvault setup claude-code --dry-run
    """
    from memvault.choices import check_choice
    from memvault.hosts import agents

    check_choice("scope", scope, ("user", "project"))
    a = agents.agent(agent)
    project_dir = _project_dir(Path.cwd())
    if undo:
        changes = agents.plan_undo(a, scope, os.environ, project_dir)
    else:
        vault = open_vault()
        changes = agents.plan(a, scope, os.environ, project_dir, vault.root.resolve(), sys.executable)
    if dry_run:
        for c in changes:
            if c.changed:
                sys.stdout.writelines(difflib.unified_diff(
                    (c.before or "").splitlines(keepends=True), (c.after or "").splitlines(keepends=True),
                    fromfile=str(c.path) if c.before is not None else "/dev/null",
                    tofile=str(c.path) if c.after is not None else "/dev/null"))
        if as_json:
            print_json({"agent": a.name, "dry_run": True, "files": [c.to_json() for c in changes]})
        elif not any(c.changed for c in changes):
            typer.echo(f"{a.name}: nothing to change", err=True)
        return
    done = agents.apply(changes, os.environ, undo=undo)
    if as_json:
        print_json({"agent": a.name, "undo": undo, "files": done})
        return
    for item in done:
        if not item["changed"]:
            typer.echo(f"unchanged {item['path']}" + ("" if undo else " (already set up)"))
            continue
        verb = {"create": "created", "update": "updated", "delete": "removed"}[item["action"]]
        extra = f"; backup {item['backup']}" if item.get("backup") else ""
        typer.echo(f"{verb} {item['path']} ({', '.join(item['what'])}){extra}")
    if not changes:
        typer.echo(f"{a.name}: no settings file of memvault's to undo")
    elif not undo:
        typer.echo(f"{a.name}: {NOTES[a.name]}", err=True)


def _project_dir(cwd: Path) -> Path:
    for p in (cwd, *cwd.parents):
        if (p / ".git").exists():
            return p
    return cwd


@app.command()
def hook(
    event: Annotated[str, typer.Argument(help="session-start, stop or pre-compact.")],
    agent: Annotated[str, typer.Option("--agent", help="The agent whose hook runs this: claude-code or "
                                       "codex.")] = "claude-code",
) -> None:
    """Run by an agent's hook (memvault setup writes them), with the hook's JSON on stdin. stop and
    pre-compact capture the session's log (transcript_path); session-start prints the project's memory brief
    for the agent to read. Never fails the agent: a problem is one line on stderr, and the exit code is 0.
    MEMVAULT_CAPTURE=off turns capture off for the agent's session.

    Example: echo '{"cwd": "/home/me/shop"}' | memvault hook session-start
    """
    try:
        _hook(event, agent)
    except MemvaultError as exc:
        err(f"hook {event}: {exc.message}")
    except Exception as exc:  # noqa: BLE001 - an agent's hook must never fail the agent, nor print its text
        err(f"hook {event}: internal error: {type(exc).__name__}")


def _hook(event: str, agent: str) -> None:
    if event not in ("session-start", "stop", "pre-compact"):
        raise UsageError("the events are session-start, stop and pre-compact")
    payload = _payload()
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
    if event == "session-start":
        from memvault.views.brief import build_brief, project_for

        vault = open_vault()
        try:
            brief = build_brief(vault, project_for(vault, cwd))
        except NoMatch:
            return  # nothing remembered for this project yet: the session starts without a brief
        print_json({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": brief.pack}})
        return
    if os.environ.get("MEMVAULT_CAPTURE", "").strip().lower() in OFF:
        return
    from memvault.hosts.agents import AGENTS

    fmt = AGENTS[agent].capture if agent in AGENTS else None
    transcript = payload.get("transcript_path")
    if fmt is None or not isinstance(transcript, str) or not Path(transcript).is_file():
        return
    from memvault.capture.hygiene import path_excluded
    from memvault.capture.service import capture

    vault = open_vault()
    paths = (vault.config.capture.get("exclude") or {}).get("paths") or []
    if path_excluded(cwd, [str(p) for p in paths]):
        return
    with open(transcript, "rb") as fh:
        capture(vault, [(transcript, fh)], fmt=fmt, now=now_fn())


def _payload() -> dict:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    raw = sys.stdin.buffer.read(MAX_PAYLOAD)
    try:
        data = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
