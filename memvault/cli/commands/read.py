"""Commands that read cards: search, show, timeline, graph, context."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any, Optional

import typer

from memvault.cli.common import state, guard, open_vault, open_settings, print_json, clean, chinese_mode, sub_app, err
from memvault.errors import NoMatch, UsageError
from memvault.voices import speaker_label  # not memvault.model: its dataclasses cost ~3.5 ms of a timeline

app = sub_app()


@app.command()
@guard
def search(
    query: Annotated[list[str], typer.Argument(help="Words to look for (English and/or Chinese).")],
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", help="Most hits to show (default search.limit).")] = None,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project.")] = None,
    kind: Annotated[Optional[str], typer.Option("--kind", "-k", help="Only this card kind.")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include retracted cards.")] = False,
    hops: Annotated[Optional[int], typer.Option("--hops", help="Entity hops from the best hits (default 1).")] = None,
    cards_only: Annotated[bool, typer.Option("--cards-only", help="Cards alone, without the raw turns.")] = False,
    episodes: Annotated[bool, typer.Option("--episodes", "-e", help="Raw turns too (the default; kept for "
                                           "scripts).")] = False,
    snippet_chars: Annotated[Optional[int], typer.Option("--snippet-chars", help="Snippet length.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON (shape in docs/search.md).")] = False,
) -> None:
    """Find cards and the raw turns no card covers, in one ranked list; each hit says why. Exit 1: no match.

    Example: memvault search "what did we decide about postgres" --limit 5
    """
    from memvault.search import service as svc

    root = svc.open_root(state.get("vault"), os.environ)
    cfg = svc.settings(root, os.environ)
    opts = svc.options_from(cfg["search"], cfg["kinds"], limit=limit, project=project, kind=kind,
                            include_all=show_all, hops=hops, episodes=False if cards_only else (episodes or None),
                            snippet_chars=snippet_chars,
                            embeddings=cfg.get("embeddings"))
    from memvault.cli.fast import mark_conflicts, no_match, render_text, warn  # shared with the Typer-free fast path

    try:
        result = mark_conflicts(root, svc.run_search(root, " ".join(query), opts, deny=cfg["deny"]))
    except NoMatch as exc:
        raise typer.Exit(no_match(exc, as_json)) from None
    warn(result.warnings)
    if as_json:
        print_json(result.to_json())
        return

    typer.echo(render_text(result))


@app.command()
@guard
def show(
    ident: Annotated[str, typer.Argument(metavar="ID", help="Card id, turn id (ep-…), or entity slug / name / "
                                         "alias.")],
    no_sources: Annotated[bool, typer.Option("--no-sources", help="Only list the source turns' ids, "
                                             "not their text.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON (shape in docs/browse.md).")] = False,
) -> None:
    """Show a card or an entity in full: the redacted text of the turns a card came from (cut at 300
    characters a side), and its supersede chain; or one turn (an ep-… id from search --episodes) in full,
    with the cards made from it (exit 1 if unknown).

    Example: memvault show c-20261102-7f3a --no-sources
    """
    from memvault.views.show import show as svc_show

    vault = open_vault()
    data = clean(vault, svc_show(vault, ident, chinese_mode(vault),
                                  with_sources=not no_sources))
    if as_json:
        print_json(data)
        return
    if data["type"] == "episode":
        for line in _episode_lines(data):
            typer.echo(line)
        return
    if data["type"] == "card":
        typer.echo(f"{data['id']}  [{data['kind']}] {data['title']}")
        typer.echo(f"project {data['project'] or '-'} · status {data['status']} · created {data['created']}"
                   f" · valid {data['valid_from'] or '?'} .. {data['valid_to'] or 'now'}")
        if data["entities"]:
            typer.echo(f"entities: {', '.join(data['entities'])}")
        if data.get("folded_into"):
            typer.echo(f"folded into {', '.join(data['folded_into'])} (this card is listed there; its text is here)")
        if data.get("folds"):
            typer.echo(f"folds {len(data['folds'])} cards (they stay readable: memvault show ID):")
            for f in data["folds"]:
                typer.echo(f"  {f['date'] or '?'}  {f['id']}  {f['status']:10s} {f['title'] or ''}")
        typer.echo("")
        typer.echo(data["body"])
        typer.echo("")
        if "source_episodes" in data and data["source_episodes"]:
            typer.echo("sources:")
            for line in _source_lines(data["source_episodes"]):
                typer.echo(line)
        elif isinstance((data.get("source") or {}).get("cards"), list):  # a reflection: the cards it rests on
            typer.echo(f"rests on: {', '.join(str(c) for c in data['source']['cards'])}")
        else:
            from memvault.model import sourceless_label

            typer.echo(f"sources: {', '.join(data['sources']) or sourceless_label(data.get('source'))}")
        for step in data["chain"]:
            mark = "*" if step["id"] == data["id"] else " "
            typer.echo(f" {mark} {step['created'][:10]}  {step['id']}  {step['status']:10s} {step['title'] or ''}")
    else:
        typer.echo(f"{data['name']}  ({data['kind'] or 'entity'})  aliases: {', '.join(data['aliases']) or '-'}")
        if data["prose"]:
            typer.echo(data["prose"])
        for c in data["cards"]:
            typer.echo(f"  {c['created'][:10]}  {c['id']}  [{c['kind']}] {c['title']}  ({c['status']})")


def _episode_lines(data: dict[str, Any]) -> list[str]:
    """A turn: where and when it was said, then each side in full (control characters dropped), then the cards
    that came from it."""
    def clean_text(text: str) -> str:
        return "".join(ch if ch.isprintable() or ch == "\n" else " " for ch in text)

    where = f"{data['project']}/{data['session']} turn {data['turn']}" if data["at"] else ""
    mark = "" if data["status"] == "live" else f"(revoked: {data['revoked_reason']})"
    lines = ["  ".join(x for x in (data["id"], data["at"] or "", where, mark) if x)]
    source = data.get("source") or {}
    if source.get("ref"):  # the input it came from (a file:line, a message id, capture --source NAME:line)
        lines.append(clean_text(f"from {source.get('kind') or '?'} {source['ref']}").replace("\n", " "))
    if data["user"] is not None:
        for role in ("user", "assistant"):
            label = speaker_label((data.get("speakers") or {}).get(role))
            lines += ["", f"{role}{f' {label}' if label else ''}:", clean_text(data[role])]
    if data["cards"]:
        lines += ["", "cards from this turn:"]
        lines += [f"  {c['id']}  [{c['kind']}] {c['title']}  ({c['status']})" for c in data["cards"]]
    return lines


def _source_lines(items: list[dict[str, Any]]) -> list[str]:
    """Two indented lines per source turn, its text on one line each (control characters dropped)."""

    def flat(text: str) -> str:
        return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())

    lines = []
    for ep in items:
        where = f"{ep['at']}  {ep['project']}/{ep['session']} turn {ep['turn']}" if ep["at"] else ""
        mark = {"live": "", "missing": "(not found)"}.get(ep["status"], f"(revoked: {ep['revoked_reason']})")
        lines.append("  " + "  ".join(x for x in (ep["id"], where, mark) if x))
        if ep["user"] is not None:
            for role in ("user", "assistant"):
                label = flat(speaker_label((ep.get("speakers") or {}).get(role)))
                lines.append(f"    {role}{f' {label}' if label else ''}: {flat(ep[role])}")
    return lines


@app.command()
@guard
def timeline(
    entity: Annotated[Optional[str], typer.Argument(help="Only cards naming this entity.")] = None,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project.")] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="From this date on (YYYY-MM-DD).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", help="Only the newest N entries.")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include retracted cards.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Cards in time order, oldest first, with supersede links (-> newer card).

    Example: memvault timeline postgres --since 2026-01-01
    """
    from memvault.search.index import Index
    from memvault.views.timeline import timeline as svc_timeline

    if since is not None:
        _check_date("--since", since)
    vault = open_settings()  # the index and the settings only: no Vault (start-up)
    with Index(vault.root, chinese_mode(vault)) as idx:
        rows = clean(vault, svc_timeline(idx, entity, project, since, limit, show_all))
    if as_json:
        print_json({"entries": rows})
        return
    for r in rows:
        link = f"  -> {', '.join(r['superseded_by'])}" if r["superseded_by"] else ""
        typer.echo(f"{r['date']}  {r['id']}  [{r['kind']}] {r['title']}  ({r['status']}){link}")


@app.command()
@guard
def graph(
    ident: Annotated[Optional[str], typer.Argument(metavar="[ID]", help="Card id or entity; with --html: the "
                                                   "file to write, from the current folder.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="Most neighbours to list.")] = 20,
    html_out: Annotated[bool, typer.Option("--html", help="Write graph.html, an explorable page of the vault.")] = False,
    open_page: Annotated[bool, typer.Option("--open", help="With --html: open graph.html in the web browser.")] = False,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="With --html: only this project.")] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="With --html: only cards valid from this date "
                                                 "on (YYYY-MM-DD).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Neighbours of a card or entity through shared entities; --html writes graph.html (deterministic), a
    self-contained page to search, filter and explore; it is drawn again after remember, forget and distill.

    With --html and a file name (`graph --html page.html`) the page is written there, from the current folder,
    and not drawn again later.

    Example: memvault graph postgres --json; memvault graph --html --open
    """
    from memvault.views import graph as svc

    vault = open_vault()
    if not html_out and (open_page or project or since):
        raise UsageError("--open, --project and --since go with --html")
    if html_out:
        if since is not None:
            _check_date("--since", since)
        from pathlib import Path

        if ident is None:
            vault.require_writable("graph --html")
        path = svc.write_html(vault, chinese_mode(vault), project, since, Path(ident) if ident else None)
        typer.echo(str(path))
        if open_page:
            import webbrowser

            if not webbrowser.open(path.resolve().as_uri()):
                err("could not open a web browser; open the file above by hand")
        return
    from memvault.search.index import Index

    if not ident:
        raise UsageError("graph needs an ID (or --html)")
    with Index(vault.root, chinese_mode(vault)) as idx:
        data = clean(vault, svc.neighbours(idx, ident, limit))
    if as_json:
        print_json(data)
        return
    c = data["center"]
    typer.echo(f"{c['id']}  {c.get('title') or ''}")
    for n in data["neighbours"]:
        via = f"  via {', '.join(n['via'])}" if n["via"] else ""
        typer.echo(f"  {n['type']:6s} {n['id']}  {n.get('title') or ''}{via}")


def _check_date(option: str, value: str) -> None:
    """A UsageError unless `value` is a real date written YYYY-MM-DD."""
    import datetime

    try:
        ok = len(value) == 10 and value[4] == value[7] == "-" and value.replace("-", "").isdigit()
        datetime.date.fromisoformat(value if ok else "x")
    except ValueError:
        raise UsageError(f"{option} must be a date, YYYY-MM-DD") from None


@app.command()
@guard
def context(
    query: Annotated[Optional[list[str]], typer.Argument(help="What the prompt is about (English and/or "
                                                       "Chinese); none gives the project's session brief.")] = None,
    budget: Annotated[Optional[int], typer.Option("--budget", "-b", help="Most tokens in the pack (default "
                                                  "context.budget_tokens).")] = None,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project's cards, plus "
                                                   "personal ones (no project). Without a question and without "
                                                   "--project: the project of the working folder.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the pack and its cards as JSON.")] = False,
) -> None:
    """A token-budgeted memory pack for an LLM prompt: pinned cards, then cards recalled for the query,
    bucketed by kind and fenced as reference data. With no question, the session-start brief of a project:
    its synopsis, rules and preferences, open threads and newest decisions. Exit 1 when there is nothing.

    Example: memvault context "set up the deploy pipeline" --project shop --budget 1500 | pbcopy
    """
    vault = open_vault()
    if query and " ".join(query).strip():
        from memvault.views.context import build_context

        result = build_context(vault, " ".join(query), budget=budget, project=project)
    else:
        from memvault.views.brief import build_brief, project_for

        result = build_brief(vault, project or project_for(vault, os.getcwd()), budget=budget)
    if as_json:
        print_json(result.to_json())
    else:
        sys.stdout.write(result.pack)
        sys.stdout.flush()

