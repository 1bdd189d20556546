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
import typer.core

from memvault import __version__
from memvault.cli.argv import hoist_vault
from memvault.errors import MemvaultError, UsageError


class _Group(typer.core.TyperGroup):
    """Accepts the global --vault/-V after the command too (memvault.cli.argv explains which words move)."""

    def parse_args(self, ctx, args):
        def value_options(name: str) -> set[str] | None:
            cmd = self.get_command(ctx, name)
            if cmd is None:
                return None
            return {opt for p in cmd.params if p.param_type_name == "option" and not p.is_flag and not p.count
                    for opt in (*p.opts, *p.secondary_opts)}

        return super().parse_args(ctx, hoist_vault(list(args), value_options))

    def get_command(self, ctx, name):
        cmd = super().get_command(ctx, name)
        if cmd is not None and not cmd.epilog:
            cmd.epilog = "Every command also takes -V, --vault DIR (the vault folder), before or after its name."
        return cmd


app = typer.Typer(
    cls=_Group,
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
                                                   "nearest memvault.yaml upwards, or ~/memvault). Also "
                                                   "accepted after the command.")] = None,
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
    from memvault.vault.store import Vault

    return Vault.open(_state.get("vault"), os.environ)


def _warn_settings(vault) -> None:
    """memvault.yaml's problems on stderr as `memvault.yaml:LINE: reason` (never the value)."""
    for problem in vault.config.problems:
        _err(f"{'error' if problem.error else 'warning'}: {problem}")


def _clean(vault, data: Any) -> Any:
    """Reading commands filter their output through redaction once more (defence in depth)."""
    from memvault.redact import engine as redact

    return redact.redact_tree(data, redact.compile_rules(list(vault.config.section("redact").get("deny") or [])))


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
    from memvault.vault.init import init_vault

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
                                     "codex, sillytavern or text.")] = "auto",
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
    vault = _open_vault()
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
            vault, opened, fmt=fmt, project=project, session=session, now=_now_fn(),
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
    as_json: Annotated[bool, typer.Option("--json", help="List findings (rule, family, line, span) instead of text.")] = False,
) -> None:
    """Filter stdin to stdout with the vault's redaction rules (built-in rules outside a vault).

    Example: pbpaste | memvault redact --check || echo "has secrets"
    """
    from memvault.redact import engine as redact

    deny: list[str] = []
    try:
        deny = list(_open_vault().config.section("redact").get("deny") or [])
    except MemvaultError:
        pass  # no vault: the built-in rules still apply
    rules = redact.compile_rules(deny)
    data = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    result = redact.redact(data, rules)
    if as_json:
        _print_json({"findings": [{"rule": f.rule, "family": f.family, "line": f.line, "start": f.start,
                                   "end": f.end}
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
    from memvault.views.stats import vault_stats

    vault = _open_vault()
    _warn_settings(vault)
    result = vault_stats(vault, os.environ)
    if as_json:
        _print_json(result)
        return
    from memvault.cli import render

    render.stats(result)


@app.command()
@_guard
def doctor(
    fix: Annotated[bool, typer.Option("--fix", help="Redact secrets found in clear, then rewrite what is "
                                      "derived (entity page blocks, the search index), before checking.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print problems as JSON.")] = False,
) -> None:
    """Parse every file of the vault and list damage as path:line: reason (exit 3 when any is found),
    secrets in clear included (named by rule, never shown). memvault.yaml problems are warnings on stderr.

    Example: memvault doctor --fix
    """
    from memvault.views.doctor import check_vault

    report = check_vault(_open_vault(), fix=fix)
    for warning in report.warnings:
        _err(f"warning: {warning}")
    if as_json:
        _print_json(report.to_json())
    else:
        for line in report.fixed:
            typer.echo(f"fixed: {line}", err=True)
        for problem in report.problems:
            typer.echo(problem)
        typer.echo(f"checked {report.files} files: {len(report.problems)} problems", err=True)
    if report.problems:
        raise typer.Exit(3)


# ------------------------------------------------------------------ search and reading commands


@app.command()
@_guard
def search(
    query: Annotated[list[str], typer.Argument(help="Words to look for (English and/or Chinese).")],
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", help="Most hits to show (default search.limit).")] = None,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project.")] = None,
    kind: Annotated[Optional[str], typer.Option("--kind", "-k", help="Only this card kind.")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include retracted cards.")] = False,
    hops: Annotated[Optional[int], typer.Option("--hops", help="Entity hops from the best hits (default 1).")] = None,
    episodes: Annotated[bool, typer.Option("--episodes", "-e", help="Search raw turns too.")] = False,
    snippet_chars: Annotated[Optional[int], typer.Option("--snippet-chars", help="Snippet length.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON (shape in README).")] = False,
) -> None:
    """Find cards (and with --episodes raw turns) by BM25 and entity hops; each hit says why. Exit 1: no match.

    Example: memvault search "what did we decide about postgres" --limit 5
    """
    from memvault.search import service as svc

    root = svc.open_root(_state.get("vault"), os.environ)
    cfg = svc.settings(root, os.environ)
    opts = svc.options_from(cfg["search"], cfg["kinds"], limit=limit, project=project, kind=kind,
                            include_all=show_all, hops=hops, episodes=episodes, snippet_chars=snippet_chars)
    result = svc.run_search(root, " ".join(query), opts, deny=cfg["deny"])
    if as_json:
        _print_json(result.to_json())
        return
    from memvault.cli.fast import render_text  # one renderer for this command and its Typer-free fast path

    typer.echo(render_text(result))


@app.command()
@_guard
def show(
    ident: Annotated[str, typer.Argument(metavar="ID", help="Card id, or entity slug / name / alias.")],
    no_sources: Annotated[bool, typer.Option("--no-sources", help="Only list the source turns' ids, "
                                             "not their text.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON (shape in README).")] = False,
) -> None:
    """Show a card or an entity in full: the redacted text of the turns a card came from (cut at 300
    characters a side), and its supersede chain (exit 1 if unknown).

    Example: memvault show c-20261102-7f3a --no-sources
    """
    from memvault.views.show import show as svc_show

    vault = _open_vault()
    data = _clean(vault, svc_show(vault, ident, str(vault.config.section("search").get("chinese", "bigram")),
                                  with_sources=not no_sources))
    if as_json:
        _print_json(data)
        return
    if data["type"] == "card":
        typer.echo(f"{data['id']}  [{data['kind']}] {data['title']}")
        typer.echo(f"project {data['project'] or '-'} · status {data['status']} · created {data['created']}"
                   f" · valid {data['valid_from'] or '?'} .. {data['valid_to'] or 'now'}")
        if data["entities"]:
            typer.echo(f"entities: {', '.join(data['entities'])}")
        typer.echo("")
        typer.echo(data["body"])
        typer.echo("")
        if "source_episodes" in data and data["source_episodes"]:
            typer.echo("sources:")
            for line in _source_lines(data["source_episodes"]):
                typer.echo(line)
        else:
            typer.echo(f"sources: {', '.join(data['sources']) or '(written by hand)'}")
        for step in data["chain"]:
            mark = "*" if step["id"] == data["id"] else " "
            typer.echo(f" {mark} {step['created'][:10]}  {step['id']}  {step['status']:10s} {step['title'] or ''}")
    else:
        typer.echo(f"{data['name']}  ({data['kind'] or 'entity'})  aliases: {', '.join(data['aliases']) or '-'}")
        if data["prose"]:
            typer.echo(data["prose"])
        for c in data["cards"]:
            typer.echo(f"  {c['created'][:10]}  {c['id']}  [{c['kind']}] {c['title']}  ({c['status']})")


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
            lines.append(f"    user: {flat(ep['user'])}")
            lines.append(f"    assistant: {flat(ep['assistant'])}")
    return lines


@app.command()
@_guard
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
        import datetime

        try:
            ok = len(since) == 10 and since[4] == since[7] == "-" and since.replace("-", "").isdigit()
            datetime.date.fromisoformat(since if ok else "x")
        except ValueError:
            raise UsageError("--since must be a date, YYYY-MM-DD") from None
    vault = _open_vault()
    with Index(vault.root, str(vault.config.section("search").get("chinese", "bigram"))) as idx:
        rows = _clean(vault, svc_timeline(idx, entity, project, since, limit, show_all))
    if as_json:
        _print_json({"entries": rows})
        return
    for r in rows:
        link = f"  -> {', '.join(r['superseded_by'])}" if r["superseded_by"] else ""
        typer.echo(f"{r['date']}  {r['id']}  [{r['kind']}] {r['title']}  ({r['status']}){link}")


@app.command()
@_guard
def graph(
    ident: Annotated[Optional[str], typer.Argument(metavar="[ID]", help="Card id or entity.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="Most neighbours to list.")] = 20,
    html_out: Annotated[bool, typer.Option("--html", help="Write graph.html of the whole vault.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Neighbours of a card or entity through shared entities; --html writes graph.html (deterministic).

    Example: memvault graph postgres --json
    """
    from memvault.views import graph as svc
    from memvault.search.index import Index

    vault = _open_vault()
    with Index(vault.root, str(vault.config.section("search").get("chinese", "bigram"))) as idx:
        if html_out:
            from memvault.vault.store import atomic_write

            atomic_write(vault.root / "graph.html", svc.render_html(svc.whole_graph(idx)))
            typer.echo(str(vault.root / "graph.html"))
            return
        if not ident:
            raise UsageError("graph needs an ID (or --html)")
        data = _clean(vault, svc.neighbours(idx, ident, limit))
    if as_json:
        _print_json(data)
        return
    c = data["center"]
    typer.echo(f"{c['id']}  {c.get('title') or ''}")
    for n in data["neighbours"]:
        via = f"  via {', '.join(n['via'])}" if n["via"] else ""
        typer.echo(f"  {n['type']:6s} {n['id']}  {n.get('title') or ''}{via}")


@app.command()
@_guard
def reindex(
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Rebuild every derived file: the search index (cards, entities, episodes) and entity pages.

    Example: memvault reindex
    """
    from memvault.views.reindex import reindex as svc_reindex

    result = svc_reindex(_open_vault(), on_progress=lambda m: _err(m) if not as_json else None)
    for problem in result.problems:
        _err(f"warning: {problem}")
    if as_json:
        _print_json(result.to_json())
    else:
        typer.echo(f"indexed {result.cards} cards, {result.entities} entities, {result.episodes} episodes"
                   f" in {result.seconds:.2f} s; entity pages {result.pages}")


# ------------------------------------------------------------------ distill / remember / forget


def _now_fn():
    from memvault.vault.config import clock_from_env

    return clock_from_env(os.environ)


def _progress_printer():
    """Progress on stderr when a person watches a terminal; silence under cron."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rdistilling [{'#' * filled}{'.' * (width - filled)}] {done}/{total} episodes{end}")
        sys.stderr.flush()

    return show


@app.command("distill")
@_guard
def distill_cmd(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="First batch only; write nothing; print the cards "
                                          "it would write and how many episodes remain.")] = False,
    max_calls: Annotated[Optional[int], typer.Option("--max-calls", help="Stop after this many LLM "
                                                     "requests (retries of a bad reply count).")] = None,
    max_episodes: Annotated[Optional[int], typer.Option("--max-episodes", help="Distil at most this many "
                                                        "episodes (default distill.max_episodes).")] = None,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only episodes of this "
                                                   "project.")] = None,
    auto: Annotated[bool, typer.Option("--auto", help="Run only if the auto: rules of memvault.yaml say so "
                                       "(for cron).")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="With --auto: say why it would or would not "
                                          "run now, and stop.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run summary as JSON.")] = False,
    upgrade: Annotated[bool, typer.Option("--upgrade", help="Send the turns only the offline engine has read "
                                          "to the LLM; its cards supersede the extracted ones.")] = False,
) -> None:
    """Turn pending episodes into memory cards with the configured OpenAI-compatible LLM, or with the offline
    engine when no endpoint is configured (distill.engine in memvault.yaml).

    One distill per vault at a time (a second exits 4 at once). Exit 0 when every batch worked or found
    nothing worth keeping; exit 5 when any batch failed (llm_error, truncated, invalid_output): those
    episodes stay pending for the next run. Silent on success unless stdout is a terminal or --json.

    For cron, `memvault distill --auto` applies the auto: rules of memvault.yaml (see the README).

    Example: memvault distill --max-calls 20 --json | jq .cards
    """
    from memvault.distill import service as svc

    vault = _open_vault()
    now = _now_fn()
    if explain and not auto:
        raise UsageError("--explain goes with --auto")
    if auto:
        decision = svc.auto_decision(vault, os.environ, now=now, project=project)
        for warning in decision.warnings:
            _err(f"warning: {warning}")
        if explain or not decision.run:
            if as_json:
                _print_json({"auto": decision.to_json(), "ran": False})
            elif explain:
                typer.echo(f"{'would run' if decision.run else 'would not run'}: {decision.reason}")
            return
    summary = svc.distill(vault, os.environ, dry_run=dry_run, max_calls=max_calls, max_episodes=max_episodes,
                          project=project, now=now, on_progress=None if as_json else _progress_printer(),
                          upgrade=upgrade)
    if summary.recovered:
        _err(f"rolled back batch {summary.recovered}, interrupted in an earlier run")
    if summary.rolled_back and sys.stderr.isatty():
        _err(f"rolled back {summary.rolled_back} batches whose turns were edited in the chat history")
    if summary.rollback_fallback:
        _err(f"warning: could not undo {len(summary.rollback_fallback)} batches from the journal; their turns are "
             "distilled again and their cards kept")
    for message in summary.errors:
        _err(message)
    if as_json:
        _print_json(summary.to_json())
    elif dry_run:
        for card in summary.would_write:
            typer.echo(f"{card['action']:6s} {card['id']}  {card['kind']} · {card['title']}"
                       + (f" ({card['status']})" if card["status"] != "active" else ""))
        typer.echo(f"dry run: nothing written; {summary.pending_after} episodes pending")
    elif summary.engine == "offline":  # issue 10: said even under cron, so a log shows which engine ran
        typer.echo(f"engine offline: {summary.created} cards from {summary.episodes_distilled} episodes "
                   f"({summary.merged} merged, {summary.superseded} superseded; {summary.pending_after} pending)")
    elif sys.stdout.isatty():
        typer.echo(f"{summary.episodes_distilled} episodes in {summary.batches} batches: {summary.created} "
                   f"cards created, {summary.merged} merged, {summary.updated} updated, {summary.superseded} "
                   f"superseded; {summary.pending_after} pending; {summary.calls} calls, "
                   f"{summary.prompt_tokens}+{summary.completion_tokens} tokens")
    if summary.stopped == "max_calls" and not as_json:
        _err(f"stopped at --max-calls {max_calls}; {summary.pending_after} episodes still pending")
    if summary.failed:
        raise typer.Exit(5)


@app.command()
@_guard
def remember(
    title: Annotated[str, typer.Argument(help="One-line title of the card.")],
    kind: Annotated[str, typer.Option("--kind", "-k", help="decision, fact, preference, question, event, state, "
                                      "rule, thread, synopsis or reflection.")] = "fact",
    body: Annotated[str, typer.Option("--body", "-b", help="A few sentences of context.")] = "",
    entities: Annotated[Optional[list[str]], typer.Option("--entities", "-e", help="Entity names; repeat or "
                                                          "separate with commas.")] = None,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Project (none = personal, "
                                                   "across projects).")] = None,
    supersedes: Annotated[Optional[list[str]], typer.Option("--supersedes", help="Card id this one "
                                                            "replaces; repeatable.")] = None,
    valid_from: Annotated[Optional[str], typer.Option("--valid-from", help="YYYY-MM-DD it holds from "
                                                      "(default today).")] = None,
    subject: Annotated[Optional[str], typer.Option("--subject", help="state cards: whose value.")] = None,
    field: Annotated[Optional[str], typer.Option("--field", help="state cards: which value.")] = None,
    value: Annotated[Optional[str], typer.Option("--value", help="state cards: the value.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the new card as JSON.")] = False,
) -> None:
    """Write a memory card by hand.

    Example: memvault remember "Deploys only on weekdays" --kind rule -e ci --project shop
    """
    from memvault.distill.remember import remember as svc_remember

    names = [n.strip() for item in entities or [] for n in item.split(",") if n.strip()]
    result = svc_remember(_open_vault(), title, now=_now_fn(), kind=kind, body=body, entities=names,
                          project=project, supersedes=supersedes or [], valid_from=valid_from,
                          subject=subject, field=field, value=value)
    if as_json:
        _print_json(result.to_json())
    else:
        typer.echo(f"{result.card.id}  {result.path}")
        for old in result.superseded:
            typer.echo(f"supersedes {old}")


@app.command()
@_guard
def forget(
    card_id: Annotated[str, typer.Argument(help="Card id, e.g. c-20261102-7f3a1c.")],
    retract: Annotated[bool, typer.Option("--retract", help="Mark the card retracted; keep it as a trace.")] = False,
    purge: Annotated[bool, typer.Option("--purge", help="Remove the card's text from cards, entity pages, "
                                        "journal and index.")] = False,
    with_episodes: Annotated[bool, typer.Option("--with-episodes", help="With --purge: also remove the "
                                                "episodes it came from.")] = False,
    reason: Annotated[str, typer.Option("--reason", help="Why (kept with a retraction).")] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print what changed as JSON.")] = False,
) -> None:
    """Retract a card (keeps a trace) or purge it (removes its text everywhere memvault wrote it).

    Example: memvault forget c-20261102-7f3a1c --purge --with-episodes
    """
    from memvault.distill.forget import forget as svc_forget

    if retract == purge:
        raise UsageError("choose exactly one of --retract or --purge")
    result = svc_forget(_open_vault(), card_id, mode="retract" if retract else "purge", now=_now_fn(),
                        reason=reason, with_episodes=with_episodes)
    if as_json:
        _print_json(result.to_json())
        return
    if not result.changed:
        typer.echo(f"{result.id} was already retracted")
        return
    done = {"retract": "retracted", "purge": "purged"}[result.mode]
    typer.echo(f"{done} {result.id}: {len(result.files)} files changed"
               + (f", {len(result.episodes_purged)} episodes removed" if result.episodes_purged else ""))
    for line in result.git_history:
        _err(line)


# ------------------------------------------------------------------ context / export / import


@app.command()
@_guard
def context(
    query: Annotated[list[str], typer.Argument(help="What the prompt is about (English and/or Chinese).")],
    budget: Annotated[Optional[int], typer.Option("--budget", "-b", help="Most tokens in the pack (default "
                                                  "context.budget_tokens).")] = None,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project's cards, plus "
                                                   "personal ones (no project).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the pack and its cards as JSON.")] = False,
) -> None:
    """A token-budgeted memory pack for an LLM prompt: pinned cards, then cards recalled for the query,
    bucketed by kind and fenced as reference data. Exit 1 when the vault has nothing to put in.

    Example: memvault context "set up the deploy pipeline" --project shop --budget 1500 | pbcopy
    """
    from memvault.views.context import build_context

    result = build_context(_open_vault(), " ".join(query), budget=budget, project=project)
    if as_json:
        _print_json(result.to_json())
    else:
        sys.stdout.write(result.pack)
        sys.stdout.flush()


@app.command("export")
@_guard
def export_cmd(
    output: Annotated[str, typer.Option("--output", "-o", help="File to write, or '-' for stdout.")] = "-",
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project's cards and the "
                                                   "entities they name.")] = None,
) -> None:
    """Write a portable JSON bundle of the vault's cards and entity pages (sorted, deterministic).

    Example: memvault export --project shop -o shop.json && memvault --vault ~/other import shop.json
    """
    from memvault.views.bundle import export_bundle

    result = export_bundle(_open_vault(), now=_now_fn(), project=project)
    for problem in result.problems:
        _err(f"warning: {problem}")
    if result.flagged:
        _err(f"warning: {len(result.flagged)} cards hold text the redaction rules flag: "
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
    _err(f"exported {len(result.bundle['cards'])} cards, {len(result.bundle['entities'])} entities to {output}")


@app.command("import")
@_guard
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
    result = import_bundle(_open_vault(), data, name="<stdin>" if file == "-" else file, now=_now_fn(),
                           dry_run=dry_run)
    for problem in result.problems:
        _err(f"warning: {problem}")
    if as_json:
        _print_json(result.to_json())
        return
    for cid in result.conflicts:
        _err(f"conflict: {cid} exists with different content; the vault's card was kept")
    ents = ""
    if result.entities_created or result.entities_merged:
        ents = (f"; entity pages: {len(result.entities_created)} created, {len(result.entities_merged)} "
                "prose merged")
    typer.echo(f"{'dry run: would import' if dry_run else 'imported'} {len(result.imported)}, "
               f"{len(result.identical)} identical, {len(result.conflicts)} conflicts{ents}")
