"""Commands that keep cards in shape: conflicts (list pairs that disagree), resolve (one card wins over
another), consolidate (fold old small cards, a synopsis card per project)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from memvault.cli.common import cards_changed, clean, err, guard, now_fn, open_vault, print_json, redraw_graph, sub_app
from memvault.cli.common import VERBOSE_HELP, speaks

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

    vault = open_vault()
    result = svc_resolve(vault, winner, over, now=now_fn(), dry_run=dry_run)
    if result.changed and not dry_run:
        redraw_graph(vault)
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
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say which cards would fold and which synopses "
                                          "would be written; write nothing (the LLM engine still asks the "
                                          "model).")] = False,
    engine: Annotated[Optional[str], typer.Option("--engine", help="offline | llm | auto (default "
                                                  "distill.engine): who writes the synopsis lines.")] = None,
    no_fold: Annotated[bool, typer.Option("--no-fold", help="Only the synopsis: fold nothing.")] = False,
    fold_only: Annotated[bool, typer.Option("--fold-only", help="Only fold: write no synopsis.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)] = False,
) -> None:
    """Fold old small cards, then write one `synopsis` card per project. Folding: active cards older than
    consolidate.fold_after_days (90), small, of one project, kind and entity, at least fold_min_cards (4) of
    them, become one card of their kind that lists each (title, id) and supersedes them; the originals stay
    readable (`show`, `timeline`). The synopsis, "where things stand" (current decisions, state, open threads
    and rules, each line citing its card ids), is built deterministically from the active cards offline; with an
    LLM (engine llm, or auto with llm.base_url set) the model writes the lines from the newest and most
    important cards, every cited id is checked, and an unusable answer falls back to the offline synopsis with
    a warning. It supersedes the project's previous synopsis. A rerun with nothing new is a no-op. Under the
    distill lock (exit 4 while a distill or another card change runs). Says what it wrote on a terminal; nothing
    on success when stdout is no terminal (cron), unless -v or --dry-run.

    Example: memvault consolidate --project shop --dry-run
    Example: memvault consolidate --engine llm --json | jq '.written[] | [.project, .engine, .lines]'
    Example: memvault consolidate --fold-only --json | jq '.folded[] | [.id, (.folds | length)]'
    """
    import os

    from memvault.distill import engine as engines
    from memvault.distill.consolidate import consolidate as svc_consolidate
    from memvault.errors import UsageError

    if no_fold and fold_only:
        raise UsageError("--no-fold and --fold-only exclude each other")
    vault = open_vault()
    chosen = engines.resolve(vault.config, engine)
    result = svc_consolidate(vault, now=now_fn(), project=project, dry_run=dry_run, engine=chosen, env=os.environ,
                             fold=False if no_fold else (True if fold_only else None), synopsis=not fold_only)
    for warning in result.warnings:
        err(f"warning: {warning}")
    if not dry_run and (result.written or result.folded):
        cards_changed(vault)
    if as_json:
        print_json(clean(vault, result.to_json()))
        return
    if not (dry_run or speaks(verbose)):
        return
    verb = "would write" if dry_run else "wrote"
    for item in result.folded:
        typer.echo(f"{verb} {item['id']}  folds {len(item['folds'])} {item['kind']} cards of {item['entity']}"
                   f" in {item['project'] or '-'} ({item['from']} to {item['to']})")
    for item in result.written:
        over = f", supersedes {', '.join(item['superseded'])}" if item["superseded"] else ""
        typer.echo(f"{verb} {item['id']}  synopsis of {item['project']} ({item['engine']}, {item['lines']} "
                   f"lines{over})")
    for name in result.unchanged:
        typer.echo(f"unchanged: {name}")
    if not result.written and not result.unchanged and not result.folded:
        typer.echo("nothing to fold and no project has cards to sum up" if not fold_only else "nothing to fold")
