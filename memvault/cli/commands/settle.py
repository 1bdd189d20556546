"""Commands that keep cards in shape: conflicts (list pairs that disagree), resolve (one card wins over
another), consolidate (a synopsis card per project)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memvault.cli.common import err, guard, open_vault, print_json, clean, now_fn, sub_app

app = sub_app()


@app.command()
@guard
def conflicts(
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the pairs as JSON.")] = False,
) -> None:
    """Active cards that cannot both be true: the same state key (subject + field) with another value, the same
    subject and field written differently, and near-duplicates of one project that should have merged.
    Pure code, no LLM; always exit 0 (a conflict is not damage). Settle a pair with `memvault resolve`.

    Example: memvault conflicts --project shop --json | jq '.conflicts[] | [.a, .b, .sort]'
    """
    from memvault.views.conflicts import scan

    vault = open_vault()
    report = scan(vault, project=project)
    if as_json:
        print_json(clean(vault, report.to_json()))
        return
    for c in report.conflicts:
        typer.echo(clean(vault, f"{c.a}  {c.b}  {c.sort}  {c.project or '-'}  {c.reason}"))
        for cid in (c.a, c.b):
            typer.echo(clean(vault, f"    {cid}  {report.titles.get(cid, '')}"))
    typer.echo(f"{len(report.conflicts)} conflicts", err=True)


@app.command()
@guard
def resolve(
    winner: Annotated[str, typer.Argument(metavar="A", help="The card that holds (stays active).")],
    over: Annotated[str, typer.Option("--over", help="The card A replaces (becomes superseded by A).")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check and say what would change; write "
                                          "nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what changed as JSON.")] = False,
) -> None:
    """Settle a conflict: card A supersedes card B, under the distill lock (exit 4 while a distill or another
    card change runs), with a `resolve` journal line. A rerun once B is superseded by A changes nothing.

    Example: memvault resolve c-20261102-7f3a1c --over c-20261020-0b9e44 --dry-run
    """
    from memvault.distill.resolve import resolve as svc_resolve

    result = svc_resolve(open_vault(), winner, over, now=now_fn(), dry_run=dry_run)
    if as_json:
        print_json(result.to_json())
        return
    if not result.changed:
        typer.echo(f"{result.loser} is already superseded by {result.winner}: nothing to do")
    elif dry_run:
        typer.echo(f"dry run: {result.winner} would supersede {result.loser}; nothing written")
    else:
        typer.echo(f"{result.winner} supersedes {result.loser}")


@app.command()
@guard
def consolidate(
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say which synopses would be written; write "
                                          "nothing (the LLM engine still asks the model).")] = False,
    engine: Annotated[Optional[str], typer.Option("--engine", help="offline | llm | auto (default "
                                                  "distill.engine): who writes the lines.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Write one `synopsis` card per project, "where things stand": its current decisions, state, open threads
    and rules, each line citing its card ids. Offline it is built deterministically from the active cards; with
    an LLM (engine llm, or auto with llm.base_url set) the model writes the lines from the newest and most
    important cards, every cited id is checked, and an unusable answer falls back to the offline synopsis with
    a warning. It supersedes the project's previous synopsis; a project whose cards did not change is skipped,
    so a rerun is a no-op. Under the distill lock (exit 4 while a distill or another card change runs).

    Example: memvault consolidate --project shop --dry-run
    Example: memvault consolidate --engine llm --json | jq '.written[] | [.project, .engine, .lines]'
    """
    import os

    from memvault.distill import engine as engines
    from memvault.distill.consolidate import consolidate as svc_consolidate

    vault = open_vault()
    chosen = engines.resolve(vault.config, engine)
    result = svc_consolidate(vault, now=now_fn(), project=project, dry_run=dry_run, engine=chosen, env=os.environ)
    for warning in result.warnings:
        err(f"warning: {warning}")
    if as_json:
        print_json(clean(vault, result.to_json()))
        return
    verb = "would write" if dry_run else "wrote"
    for item in result.written:
        over = f", supersedes {', '.join(item['superseded'])}" if item["superseded"] else ""
        typer.echo(f"{verb} {item['id']}  synopsis of {item['project']} ({item['engine']}, {item['lines']} "
                   f"lines{over})")
    for name in result.unchanged:
        typer.echo(f"unchanged: {name}")
    if not result.written and not result.unchanged:
        typer.echo("no project has cards to sum up")
