"""Commands that connect agents to the vault: setup (write an agent's MCP entry and hooks) and hook (what those
hooks run: capture at stop and before compaction, the project's brief at session start).

(`memvault.cli.commands.setup` is the older module of init/capture/redact: setting a vault up, not an agent.)
"""

from __future__ import annotations

import difflib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from memvault.cli.common import err, guard, now_fn, open_vault, print_json, sub_app
from memvault.errors import MemvaultError, UsageError

app = sub_app()

OFF = {"off", "0", "false", "no"}
MAX_PAYLOAD = 1 << 20


@app.command()
@guard
def setup(
    agent: Annotated[str, typer.Argument(help="claude-code, codex, cursor, gemini or antigravity.")],
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
    lead = None
    if undo:
        changes = agents.plan_undo(a, scope, os.environ, project_dir)
    else:
        vault = open_vault()
        lead = agents.launch(a, scope, os.environ, project_dir, vault.root.resolve(), sys.executable)
        changes = agents.plan(a, scope, os.environ, project_dir, vault.root.resolve(), sys.executable, lead)
    if dry_run:
        for c in changes:
            if c.changed:
                sys.stdout.writelines(difflib.unified_diff(
                    (c.before or "").splitlines(keepends=True), (c.after or "").splitlines(keepends=True),
                    fromfile=str(c.path) if c.before is not None else "/dev/null",
                    tofile=str(c.path) if c.after is not None else "/dev/null"))
        if as_json:
            print_json({"agent": a.name, "dry_run": True, "files": [c.to_json() for c in changes],
                        "next": agents.advice(a, scope, lead, os.environ, project_dir) if lead else []})
        elif not any(c.changed for c in changes):
            typer.echo(f"{a.name}: nothing to change", err=True)
        elif lead is not None:
            for note in agents.advice(a, scope, lead, os.environ, project_dir):
                typer.echo(f"{a.name}: then: {note}", err=True)
        return
    done = agents.apply(changes, os.environ, undo=undo)
    if as_json:
        print_json({"agent": a.name, "undo": undo, "files": done,
                    "next": [] if undo else agents.advice(a, scope, lead, os.environ, project_dir)})
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
        for note in agents.advice(a, scope, lead, os.environ, project_dir):
            typer.echo(f"{a.name}: next: {note}", err=True)


def _project_dir(cwd: Path) -> Path:
    for p in (cwd, *cwd.parents):
        if (p / ".git").exists():
            return p
    return cwd


@app.command()
def hook(
    event: Annotated[str, typer.Argument(help="session-start, stop, pre-compact or after-agent.")],
    agent: Annotated[str, typer.Option("--agent", help="The agent whose hook runs this: claude-code, codex or "
                                       "gemini.")] = "claude-code",
) -> None:
    """Run by an agent's hook (memvault setup writes them), with the hook's JSON on stdin. stop, pre-compact
    and after-agent capture the session (its log, or Gemini's turn); session-start prints the project's memory
    brief for the agent to read (at most 9,000 characters, with a note when memory stopped being saved). Fails
    open: a problem is one line on stderr, the exit code is 0, nothing on stdout could block or cancel the
    agent, and it stops by itself before the agent's timeout. MEMVAULT_CAPTURE=off turns capture off.

    Example: echo '{"cwd": "/home/me/shop"}' | memvault hook session-start
    """
    from memvault.views.hookrun import DEADLINES

    seconds = DEADLINES.get(event, 20)
    try:
        seconds = int(os.environ.get("MEMVAULT_HOOK_SECONDS") or seconds)
    except ValueError:
        pass
    _deadline(event, agent, seconds)
    try:
        _hook(event, agent)
    except MemvaultError as exc:
        err(f"hook {event}: {exc.message}")
    except Exception as exc:  # noqa: BLE001 - an agent's hook must never fail the agent, nor print its text
        err(f"hook {event}: internal error: {type(exc).__name__}")
    finally:
        _drain()  # whatever the host still sends is read, so it never writes into a closed pipe
        signal.alarm(0)


def _drain() -> None:
    try:
        if sys.stdin is not None and not sys.stdin.isatty():
            while sys.stdin.buffer.read(1 << 16):
                pass
    except (OSError, ValueError):
        pass


def _deadline(event: str, agent: str, seconds: int) -> None:
    """Stop the hook quietly (exit 0, nothing on stdout) after `seconds`, before the host would kill it; a capture
    cut short is recorded for the brief's health note (what it stored so far stays: capture is crash-safe)."""
    def stop(_signum, _frame):  # pragma: no cover - the timeout test runs it in a real process
        try:
            from memvault.views.hookrun import record_timeout

            if _VAULT_ROOT:
                record_timeout(Path(_VAULT_ROOT[0]), event, agent, seconds, now_fn())
            err(f"hook {event}: stopped after {seconds} s")
        finally:
            os._exit(0)

    signal.signal(signal.SIGALRM, stop)
    signal.alarm(max(1, seconds))


_VAULT_ROOT: list[str] = []  # the vault's root once open, for the deadline's health note


def _hook(event: str, agent: str) -> None:
    from memvault.views.hookrun import EVENTS

    if event not in EVENTS:
        raise UsageError("the events are " + ", ".join(EVENTS))
    vault = open_vault()  # before the payload: a host that never closes stdin still gets a timeout on record
    _VAULT_ROOT.append(str(vault.root))
    payload = _payload()
    if event == "session-start":
        from memvault.views.hookrun import session_start

        out = session_start(vault, payload)
        if out is not None:
            print_json(out)
        return
    if os.environ.get("MEMVAULT_CAPTURE", "").strip().lower() in OFF:
        return
    from memvault.views.hookrun import store

    store(vault, event, agent, payload, now_fn())


def _payload() -> dict:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    raw = sys.stdin.buffer.read(MAX_PAYLOAD)
    try:
        data = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
