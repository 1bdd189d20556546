"""The reflect command: LLM-written `reflection` cards (long-term insights) from a project's recent cards."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from memvault.cli.common import cards_changed, clean, err, guard, now_fn, open_vault, print_json
from memvault.cli.common import sub_app

app = sub_app()


@app.command()
@guard
def reflect(
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project.")] = None,
    max_k: Annotated[Optional[int], typer.Option("--max", help="At most this many new reflections per "
                                                 "project (default synopsis.max_reflections).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Ask the model and say what would be written; "
                                          "write nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was written (or why not) as JSON.")] = False,
) -> None:
    """Write at most K `reflection` cards per project, long-term insights the model finds across its recent cards
    ("the user rejects dependencies that need a build step"), each citing the cards it rests on (ids checked).
    A near-duplicate of an existing reflection is refused; a Chinese project gets Chinese reflections. LLM only:
    with the offline engine it is skipped and says so (exit 0). A project whose recent cards were already
    reflected on is skipped without a call, so a rerun is a no-op. Under the distill lock (exit 4 while a
    distill or another card change runs); exit 5 when the endpoint failed.

    Example: memvault reflect --project shop --max 2 --dry-run
    Example: memvault reflect --json | jq '.written[] | [.id, .title, .cards]'
    """
    from memvault.distill.reflect import reflect as svc_reflect

    vault = open_vault()
    result = svc_reflect(vault, os.environ, now=now_fn(), project=project, max_k=max_k, dry_run=dry_run)
    for warning in result.warnings:
        err(f"warning: {warning}")
    if result.written and not dry_run:
        cards_changed(vault)
    if as_json:
        print_json(clean(vault, result.to_json()))
    elif result.skipped:
        typer.echo(f"skipped: {result.reason}")
    else:
        verb = "would write" if dry_run else "wrote"
        for item in result.written:
            typer.echo(clean(vault, f"{verb} {item['id']}  {item['project']} · {item['title']} "
                                    f"(rests on {', '.join(item['cards'])})"))
        for name in result.unchanged:
            typer.echo(f"unchanged: {name}")
        if result.dropped:
            typer.echo(f"refused {len(result.dropped)} of the model's reflections (--json says why)")
        if not result.written and not result.unchanged and not result.dropped:
            typer.echo("no new reflections")
    if result.failed:
        raise typer.Exit(5)
