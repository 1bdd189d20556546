"""Command line: parse options -> open the vault -> call ONE service function -> render.

Every error becomes one line on stderr and an exit code here, in `_guard`; services never print or exit.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from memvault import __version__
from memvault.errors import MemvaultError, UsageError

app = typer.Typer(
    name="memvault",
    help="Long-term memory of your LLM conversations, kept in a plain-text, git-friendly vault.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals can hold unredacted chat text
    add_completion=False,
    rich_markup_mode=None,
)

_state: dict[str, Any] = {"vault": None, "debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memvault {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    vault: Annotated[Optional[Path], typer.Option("--vault", "-V", help="Vault folder (else MEMVAULT_DIR, the "
                                                   "nearest memvault.yaml upwards, or ~/memvault).")] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks of internal errors.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """memvault keeps your LLM conversations as memory you can grep, git-merge and search.

    Example: memvault init ~/memvault && cat chat.jsonl | memvault capture
    """
    _state["vault"] = vault
    _state["debug"] = debug


def _err(message: str) -> None:
    typer.echo(f"memvault: {message}", err=True)


def _guard(fn):
    """Turn MemvaultError into its exit code, Ctrl-C into 130, anything else into 70 (traceback with --debug)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except MemvaultError as exc:
            _err(exc.message)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            _err("interrupted")
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # `memvault search x | head`: the reader went away; that is not an error of ours.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(0) from None
        except Exception as exc:  # noqa: BLE001 - the one place internal errors are reported
            if _state.get("debug"):
                import traceback

                traceback.print_exception(exc, limit=None, chain=True)
            _err(f"internal error: {type(exc).__name__} (run with --debug for the traceback)")
            raise typer.Exit(70) from None

    return wrapper


def _open_vault():
    from memvault.vault import Vault

    return Vault.open(_state.get("vault"), os.environ)


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False))


# ------------------------------------------------------------------ init


@app.command()
@_guard
def init(
    directory: Annotated[Optional[Path], typer.Argument(help="Folder for the new vault (default ~/memvault).")] = None,
    git: Annotated[bool, typer.Option("--git", help="Also run `git init` and make a first commit.")] = False,
) -> None:
    """Create a new vault from the template.

    Example: memvault init ~/memvault --git
    """
    from memvault.init import init_vault

    target = directory or Path(os.environ.get("MEMVAULT_DIR") or Path.home() / "memvault")
    result = init_vault(target, git=git)
    typer.echo(f"vault created at {result.root}")
    if result.git:
        typer.echo("git repository initialised with a first commit")
    typer.echo(f"next: cat chat.jsonl | memvault --vault {result.root} capture", err=True)


# ------------------------------------------------------------------ capture


@app.command()
@_guard
def capture(
    files: Annotated[Optional[list[Path]], typer.Argument(help="Chat logs to read; none or '-' reads stdin.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="auto, jsonl, openai, chatgpt, claude-code, "
                                     "sillytavern or text.")] = "auto",
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Project for these turns.")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="Session id, when the log has none.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")] = False,
) -> None:
    """Store chat turns from logs (stdin by default), redacted before anything touches disk.

    Example: cat ~/.claude/projects/x/session.jsonl | memvault capture --project myapp
    """
    from memvault.capture import capture as run_capture

    vault = _open_vault()
    opened = []
    try:
        for f in files or [Path("-")]:
            if str(f) == "-":
                opened.append(("<stdin>", sys.stdin.buffer))
            else:
                try:
                    opened.append((str(f), open(f, "rb")))
                except OSError as exc:
                    raise UsageError(f"{f}: cannot read ({exc.strerror})") from None
        result = run_capture(
            vault, opened, fmt=fmt, project=project, session=session,
            on_problem=lambda p: _err(f"warning: {p}"),
        )
    finally:
        for name, fh in opened:
            if name != "<stdin>":
                fh.close()
    if as_json:
        _print_json(result.to_json())
    elif not quiet:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items()))
        skipped = sum(result.skipped.values())
        line = f"{result.new} new, {result.already} already stored, {skipped} skipped"
        line += f" ({reasons})" if reasons else ""
        if result.revoked:
            line += f", {result.revoked} revoked (history edit)"
        if result.redactions:
            line += f", {sum(result.redactions.values())} secrets redacted"
        typer.echo(line)


# ------------------------------------------------------------------ redact


@app.command("redact")
@_guard
def redact_cmd(
    check: Annotated[bool, typer.Option("--check", help="Exit 1 if anything would be redacted; print nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="List findings (rule, line, span) instead of text.")] = False,
) -> None:
    """Filter stdin to stdout with the vault's redaction rules (built-in rules outside a vault).

    Example: pbpaste | memvault redact --check || echo "has secrets"
    """
    from memvault import redact

    deny: list[str] = []
    try:
        deny = list(_open_vault().config.section("redact").get("deny") or [])
    except MemvaultError:
        pass  # no vault: the built-in rules still apply
    rules = redact.compile_rules(deny)
    data = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    result = redact.redact(data, rules)
    if as_json:
        _print_json({"findings": [{"rule": f.rule, "line": f.line, "start": f.start, "end": f.end}
                                  for f in result.findings],
                     "counts": redact.count_by_rule(result.findings)})
    elif not check:
        sys.stdout.write(result.text)
        sys.stdout.flush()
    if check and result.findings:
        raise typer.Exit(1)


# ------------------------------------------------------------------ stats / doctor


@app.command()
@_guard
def stats(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Counts per layer and project, newest episode, and which LLM endpoint and key source are configured.

    Example: memvault stats --json | jq .episodes
    """
    from memvault.stats import vault_stats

    result = vault_stats(_open_vault(), os.environ)
    if as_json:
        _print_json(result)
        return
    from memvault import render

    render.stats(result)


@app.command()
@_guard
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print problems as JSON.")] = False,
) -> None:
    """Parse every file of the vault and list damage as path:line: reason (exit 3 when any is found).

    Example: memvault doctor
    """
    from memvault.doctor import check_vault

    report = check_vault(_open_vault())
    if as_json:
        _print_json(report.to_json())
    else:
        for problem in report.problems:
            typer.echo(problem)
        typer.echo(f"checked {report.files} files: {len(report.problems)} problems", err=True)
    if report.problems:
        raise typer.Exit(3)
