"""Commands that set a vault up and feed it: init, capture, redact."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from memvault.cli.common import VERBOSE_HELP, guard, open_vault, err, print_json, now_fn, speaks, sub_app
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
    files: Annotated[Optional[list[Path]], typer.Argument(help="Chat logs or folders of them to read; none or "
                                                          "'-' reads stdin.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="auto, jsonl, openai, chatgpt, claude-code, "
                                     "codex, sillytavern, cursor, gemini, antigravity, claude-ai, opencode or "
                                     "text.")] = "auto",
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Project for these turns.")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="Session id, when the log has none.")] = None,
    source: Annotated[Optional[str], typer.Option("--source", help="Name of the piped input in the turns' refs "
                                                  "(NAME:line instead of <stdin>:line).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success, even on a terminal.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)] = False,
) -> None:
    """Store chat turns from logs (stdin by default), redacted before anything touches disk. A folder is read
    recursively: the logs it holds are captured, other files are skipped and listed.

    Exit 2 when any input named on the command line (or stdin) was refused (unreadable, or of no known
    format); the others are still captured. On a terminal it prints one summary line; under cron or into a pipe
    nothing on success (-v: the line anyway).

    Example: cat ~/.claude/projects/x/session.jsonl | memvault capture --project myapp
    """
    from memvault.capture.service import capture as run_capture
    from memvault.choices import check_choice
    from memvault.capture.formats import FORMATS
    from memvault.capture.inputs import walk_folder

    check_choice("format", fmt, ("auto", *FORMATS))
    paths = [str(f) for f in files or [Path("-")]]
    stdin_name = _source_name(source, piped="-" in paths)
    vault = open_vault()
    if not files and sys.stdin.isatty():
        raise UsageError("capture reads chat logs from files or a pipe: memvault capture FILE… or "
                         "cat chat.jsonl | memvault capture")
    named: list[str] = []  # inputs to read, in order ("-" is stdin)
    walked: set[str] = set()
    skipped: list[dict] = []  # not read: files in folders that are no chat logs, inputs that cannot be opened
    for f in paths:
        if f != "-" and os.path.isdir(f):
            found = walk_folder(Path(f))
            named += [str(p) for p in found.files]
            walked.update(str(p) for p in found.files)
            skipped += [{"input": p, "reason": r, "refused": False} for p, r in found.skipped]
            skipped += [{"input": p, "reason": r, "refused": True} for p, r in found.unreadable]
        else:
            named.append(f)
    for item in skipped:
        if item["refused"]:
            err(f"warning: {item['input']}: {item['reason']}")

    def opened():
        """Each input open while it is read, and closed before the next (a folder may hold thousands)."""
        for f in named:
            if f == "-":
                yield stdin_name, sys.stdin.buffer
                continue
            try:
                fh = open(f, "rb")
            except OSError as exc:
                reason = f"cannot read ({exc.strerror})"
                skipped.append({"input": f, "reason": reason, "refused": True})
                err(f"warning: {f}: {reason}")
                continue
            with fh:
                yield f, fh

    result = run_capture(vault, opened(), fmt=fmt, project=project, session=session, now=now_fn(),
                         on_problem=lambda p: err(f"warning: {p}"), walked=walked)
    result.inputs_skipped += skipped
    if result.refused and not result.formats:
        first = next(x for x in result.inputs_skipped if x["refused"])
        raise UsageError(f"{first['input']}: {first['reason']}")
    if as_json:
        print_json(result.to_json())
    elif speaks(verbose, quiet) or (result.refused and not quiet):  # a failed run always says what it did
        _print_summary(result)
    if result.refused:
        # Trigger: an input the person named could not be read. Why: a script must see it (exit 0 hid it).
        # Outcome: the other inputs are stored; exit 2 (usage) after the summary.
        err(f"error: {result.refused} of {result.refused + len(result.formats)} inputs refused (named above); "
            "the others were captured")
        raise typer.Exit(2)


def _source_name(source: str | None, *, piped: bool) -> str:
    """The name piped input goes by in refs: `--source NAME`, else `<stdin>`."""
    if source is None:
        return "<stdin>"
    if not piped:
        raise UsageError("--source names piped input (stdin); a file is named by its own path")
    if not source.strip() or any(not ch.isprintable() for ch in source):
        raise UsageError("--source must be one printable line, not empty")
    return source


def _print_summary(result) -> None:
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
    passed = [x for x in result.inputs_skipped if not x["refused"]]
    if passed:
        names = ", ".join(x["input"] for x in passed[:5])
        more = f" and {len(passed) - 5} more (--json lists all)" if len(passed) > 5 else ""
        err(f"skipped {len(passed)} files in folders that are not chat logs: {names}{more}")


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

