"""Commands that set a vault up and feed it: init, capture, redact."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from memvault.cli.common import guard, open_vault, err, print_json, now_fn, sub_app
from memvault.errors import MemvaultError, UsageError

app = sub_app()


@app.command()
@guard
def init(
    directory: Annotated[Optional[Path], typer.Argument(help="Folder for the new vault (default ~/memvault).")] = None,
    git: Annotated[bool, typer.Option("--git", help="Also run `git init` and make a first commit.")] = False,
) -> None:
    """Create a new vault from the template.

    Example: memvault init ~/memvault --git
    """
    from memvault.vault.init import init_vault

    target = directory or Path(os.environ.get("MEMVAULT_DIR") or Path.home() / "memvault")
    result = init_vault(target, git=git)
    typer.echo(f"vault created at {result.root}")
    if result.git:
        typer.echo("git repository initialised with a first commit")
    typer.echo(f"next: cat chat.jsonl | memvault --vault {result.root} capture", err=True)


@app.command()
@guard
def capture(
    files: Annotated[Optional[list[Path]], typer.Argument(help="Chat logs to read; none or '-' reads stdin.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="auto, jsonl, openai, chatgpt, claude-code, "
                                     "codex, sillytavern, cursor, gemini, antigravity, claude-ai, opencode or "
                                     "text.")] = "auto",
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Project for these turns.")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="Session id, when the log has none.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")] = False,
) -> None:
    """Store chat turns from logs (stdin by default), redacted before anything touches disk.

    Example: cat ~/.claude/projects/x/session.jsonl | memvault capture --project myapp
    """
    from memvault.capture.service import capture as run_capture
    from memvault.choices import check_choice
    from memvault.capture.formats import FORMATS

    check_choice("format", fmt, ("auto", *FORMATS))
    vault = open_vault()
    if not files and sys.stdin.isatty():
        raise UsageError("capture reads chat logs from files or a pipe: memvault capture FILE… or "
                         "cat chat.jsonl | memvault capture")
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
            vault, opened, fmt=fmt, project=project, session=session, now=now_fn(),
            on_problem=lambda p: err(f"warning: {p}"),
        )
    finally:
        for name, fh in opened:
            if name != "<stdin>":
                fh.close()
    if as_json:
        print_json(result.to_json())
    elif not quiet:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items()))
        skipped = sum(result.skipped.values())
        line = f"{result.new} new, {result.already} already stored, {skipped} skipped"
        line += f" ({reasons})" if reasons else ""
        if result.revoked:
            line += f", {result.revoked} revoked (history edit)"
        if result.redactions:
            line += f", {sum(result.redactions.values())} secrets redacted"
        if result.private:
            line += f", {result.private['spans']} private spans left out"
        typer.echo(line)


@app.command("redact")
@guard
def redact_cmd(
    check: Annotated[bool, typer.Option("--check", help="Exit 1 if anything would be redacted; print nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="List findings (rule, family, line, span) instead of text.")] = False,
) -> None:
    """Filter stdin to stdout with the vault's redaction rules (built-in rules outside a vault).

    Example: pbpaste | memvault redact --check || echo "has secrets"
    """
    from memvault.redact import engine as redact

    deny: list[str] = []
    try:
        deny = list(open_vault().config.section("redact").get("deny") or [])
    except MemvaultError:
        pass  # no vault: the built-in rules still apply
    rules = redact.compile_rules(deny)
    data = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    result = redact.redact(data, rules)
    if as_json:
        print_json({"findings": [{"rule": f.rule, "family": f.family, "line": f.line, "start": f.start,
                                   "end": f.end}
                                  for f in result.findings],
                     "counts": redact.count_by_rule(result.findings)})
    elif not check:
        sys.stdout.write(result.text)
        sys.stdout.flush()
    if check and result.findings:
        raise typer.Exit(1)

