"""Commands that look after the vault: stats, doctor, reindex, export, import."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from memvault.cli.common import VERBOSE_HELP, guard, open_vault, err, print_json, now_fn, warn_settings, sub_app, redraw_graph
from memvault.cli.common import speaks
from memvault.errors import UsageError

app = sub_app()


@app.command()
@guard
def stats(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Counts per layer and project, newest episode, and which LLM endpoint and key source are configured.

    Example: memvault stats --json | jq .episodes
    """
    from memvault.views.stats import vault_stats

    vault = open_vault()
    warn_settings(vault)
    result = vault_stats(vault, os.environ)
    if as_json:
        print_json(result)
        return
    from memvault.cli.render import stats_lines

    typer.echo("\n".join(stats_lines(result)))


@app.command()
@guard
def doctor(
    fix: Annotated[bool, typer.Option("--fix", help="Redact secrets found in clear, then rewrite what is "
                                      "derived (entity page blocks, the search index), before checking.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print problems as JSON.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)] = False,
) -> None:
    """Parse every file of the vault and list damage as path:line: reason (exit 3 when any is found),
    secrets in clear included (named by rule, never shown). memvault.yaml problems are warnings on stderr.
    Conflicting active cards are listed as `path: conflicts with c-…` but are not damage (no exit 3): settle
    them with `memvault resolve`. A healthy vault prints nothing when stdout is no terminal (cron); -v
    prints the summary (and the conflicts) anyway.

    Example: memvault doctor --fix
    """
    from memvault.views.doctor import check_vault

    report = check_vault(open_vault(), fix=fix)
    for warning in report.warnings:
        err(f"warning: {warning}")
    if as_json:
        print_json(report.to_json())
    else:
        for line in report.fixed:
            typer.echo(f"fixed: {line}", err=True)
        for problem in report.problems:
            typer.echo(problem)
        if report.problems or speaks(verbose):  # damage always; a healthy vault's summary only when asked
            for line in report.conflict_lines:
                typer.echo(line)
            many = (f"more than {len(report.conflicts)} conflicts (the first {len(report.conflicts)} listed; "
                    "memvault conflicts lists them all)" if report.more_conflicts
                    else f"{len(report.conflicts)} conflicts (see memvault conflicts)")
            typer.echo(f"checked {report.files} files: {len(report.problems)} problems"
                       + (f", {many}" if report.conflicts else ""), err=True)
    if report.problems:
        raise typer.Exit(3)


@app.command()
@guard
def reindex(
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)] = False,
) -> None:
    """Rebuild every derived file: the search index (cards, entities, episodes), entity pages, graph.html if any.
    Progress and a summary on a terminal; nothing on success when stdout is no terminal (-v: the summary).

    Example: memvault reindex
    """
    from memvault.views.reindex import reindex as svc_reindex

    vault = open_vault()
    vault.require_writable("reindex")
    say = not as_json and speaks(verbose)
    result = svc_reindex(vault, on_progress=lambda m: err(m) if say else None)
    redraw_graph(vault)
    for problem in result.problems:
        err(f"warning: {problem}")
    if as_json:
        print_json(result.to_json())
    elif say:
        typer.echo(f"indexed {result.cards} cards, {result.entities} entities, {result.episodes} episodes"
                   f" in {result.seconds:.2f} s; entity pages {result.pages}")


@app.command()
@guard
def embed(
    episodes: Annotated[bool, typer.Option("--episodes", "-e", help="Embed raw turns too (for search --episodes).")] = False,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Forget every stored vector and embed all again.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Embed the cards (and raw turns) that have no vector yet, for search by meaning (embeddings: in
    memvault.yaml). Incremental and resumable: an interrupted run keeps what it stored; run it again.

    Example: memvault embed --episodes
    """
    from memvault.views.embed import embed_vault

    vault = open_vault()
    with _progress(enabled=not as_json and sys.stderr.isatty()) as tick:
        report = embed_vault(vault, os.environ, episodes=episodes, rebuild=rebuild, on_progress=tick)
    for note in report.notes:
        err(note)
    if as_json:
        print_json(report.to_json())
        return
    done = ", ".join(f"{report.embedded.get(s, 0)} {s}s" for s in report.total)
    stored = ", ".join(f"{n} {s}s" for s, n in report.total.items())
    typer.echo(f"embedded {done} with {report.model} ({report.dim} dimensions) in {report.seconds:.2f} s;"
               f" vectors stored: {stored}")


def _progress(enabled: bool):
    """A rich progress bar on a terminal (on_progress(space, done, total)); a no-op elsewhere."""
    import contextlib

    if not enabled:
        return contextlib.nullcontext(None)

    @contextlib.contextmanager
    def bar():
        from rich.progress import Progress

        tasks: dict[str, Any] = {}
        with Progress(transient=True) as prog:
            def tick(space: str, done: int, total: int) -> None:
                if space not in tasks:
                    tasks[space] = prog.add_task(f"embedding {space}s", total=total)
                prog.update(tasks[space], completed=done)
            yield tick
    return bar()


@app.command("export")
@guard
def export_cmd(
    output: Annotated[str, typer.Option("--output", "-o", help="File to write, or '-' for stdout.")] = "-",
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project's cards and the "
                                                   "entities they name.")] = None,
) -> None:
    """Write a portable JSON bundle of the vault's cards and entity pages (sorted, deterministic).

    Example: memvault export --project shop -o shop.json && memvault --vault ~/other import shop.json
    """
    from memvault.views.bundle import export_bundle

    result = export_bundle(open_vault(), now=now_fn(), project=project)
    for problem in result.problems:
        err(f"warning: {problem}")
    if result.flagged:
        err(f"warning: {len(result.flagged)} cards hold text the redaction rules flag: "
             f"{', '.join(result.flagged[:10])}{' …' if len(result.flagged) > 10 else ''}")
    text = result.to_text()
    if output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from memvault.vault.store import atomic_write

    try:
        atomic_write(Path(output), text)
    except OSError as exc:
        raise UsageError(f"{output}: cannot write ({exc.strerror})") from None
    err(f"exported {len(result.bundle['cards'])} cards, {len(result.bundle['entities'])} entities to {output}")


@app.command("import")
@guard
def import_cmd(
    file: Annotated[str, typer.Argument(metavar="FILE", help="A bundle made by `memvault export`; '-' reads stdin.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate and report; write nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Add the cards and entity pages of a bundle; never overwrites (a different card with a known id is a
    conflict, reported, and the vault's card stays). A bundle that does not validate is refused whole.

    Example: memvault import shop.json --dry-run
    """
    from memvault.views.bundle import import_bundle

    if file == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(file).read_bytes()
        except OSError as exc:
            raise UsageError(f"{file}: cannot read ({exc.strerror})") from None
    vault = open_vault()
    result = import_bundle(vault, data, name="<stdin>" if file == "-" else file, now=now_fn(), dry_run=dry_run)
    if result.imported and not dry_run:
        redraw_graph(vault)
    for problem in result.problems:
        err(f"warning: {problem}")
    if as_json:
        print_json(result.to_json())
        return
    for cid in result.conflicts:
        err(f"conflict: {cid} exists with different content; the vault's card was kept")
    ents = ""
    if result.entities_created or result.entities_merged:
        ents = (f"; entity pages: {len(result.entities_created)} created, {len(result.entities_merged)} "
                "prose merged")
    typer.echo(f"{'dry run: would import' if dry_run else 'imported'} {len(result.imported)}, "
               f"{len(result.identical)} identical, {len(result.conflicts)} conflicts{ents}")

