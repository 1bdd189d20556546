"""Commands that write cards: distill, remember, forget, import-rules."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from memvault.cli.common import state, guard, open_vault, err, print_json, now_fn, sub_app, redraw_graph
from memvault.cli.common import VERBOSE_HELP, cards_changed, speaks
from memvault.errors import UsageError

app = sub_app()


def _progress_printer(quiet: bool = False):
    """Progress on stderr when a person watches a terminal; silence under cron and with --quiet."""
    if quiet or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rdistilling [{'#' * filled}{'.' * (width - filled)}] {done}/{total} episodes{end}")
        sys.stderr.flush()

    return show


@app.command("distill")
@guard
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
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success, even on a "
                                        "terminal (warnings and errors still go to stderr).")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)] = False,
    engine: Annotated[Optional[str], typer.Option("--engine", help="offline | llm | auto (default "
                                                  "distill.engine): who writes the cards.")] = None,
) -> None:
    """Turn pending episodes into memory cards with the configured OpenAI-compatible LLM, or with the offline
    engine when no endpoint is configured (distill.engine in memvault.yaml).

    One distill per vault at a time (a second exits 4 at once). Exit 0 when every batch worked or found
    nothing worth keeping; exit 5 when any batch failed (llm_error, truncated, invalid_output): those
    episodes stay pending for the next run. Output, the same for both engines: on a terminal (stdout is one)
    progress and one summary line; under cron or in a pipe nothing on success (-v: the line anyway);
    --quiet nothing even on a terminal; --json the summary as JSON always. Warnings and errors always go to stderr.

    For cron, `memvault distill --auto` applies the auto: rules of memvault.yaml (docs/cron.md), then writes
    the synopsis (consolidate) and, with an LLM, the reflections (reflect) of every project whose synopsis:
    rule says so (every_cards new cards or every_days days).

    Example: memvault distill --max-calls 20 --json | jq .cards
    """
    from memvault.distill import engine as engines
    from memvault.distill import service as svc

    vault = open_vault()
    now = now_fn()
    if explain and not auto:
        raise UsageError("--explain goes with --auto")
    # auto.upgrade: cron also lets the LLM re-read what only the offline engine read, once an endpoint exists.
    chosen = engines.resolve(vault.config, engine)
    auto_upgrade = (auto and not upgrade and bool(vault.config.section("auto").get("upgrade"))
                    and chosen == "llm")
    if auto:
        decision = svc.auto_decision(vault, os.environ, now=now, project=project, upgrade=auto_upgrade)
        for warning in decision.warnings:
            err(f"warning: {warning}")
        if explain or not decision.run:
            # quiet_hours and min_gap_minutes hold the synopsis too; "nothing to distil" does not.
            held = explain or dry_run or decision.held
            upkeep = _upkeep(vault, now, project, explain=held, as_json=as_json, talk=speaks(verbose, quiet))
            if as_json:
                print_json({"auto": decision.to_json(), "ran": False, "upkeep": upkeep})
            elif explain:
                typer.echo(f"{'would run' if decision.run else 'would not run'}: {decision.reason}")
                for item in upkeep["synopsis"]:
                    typer.echo(f"synopsis of {item['project']}: {'would run' if item['run'] else 'would not run'}: "
                               f"{item['reason']}")
            return
    summaries = []
    for upgrading in [upgrade, True] if auto_upgrade else [upgrade]:
        summary = svc.distill(vault, os.environ, dry_run=dry_run, max_calls=max_calls, max_episodes=max_episodes,
                              project=project, now=now,
                              on_progress=None if as_json else _progress_printer(quiet),
                              upgrade=upgrading, engine=chosen)
        summaries.append(summary)
        if not dry_run:
            cards_changed(vault)
        if summary.failed or dry_run:
            break
    failed = any(s.failed for s in summaries)
    if not dry_run:
        _health(vault, summaries, now)
    # After a failed distill the endpoint is likely down: the synopsis waits for the next run.
    upkeep = (_upkeep(vault, now, project, explain=dry_run, as_json=as_json, talk=speaks(verbose, quiet))
              if auto and not failed else None)
    for i, summary in enumerate(summaries):
        last = i == len(summaries) - 1
        _report(summary, as_json=as_json, dry_run=dry_run, max_calls=max_calls, talk=speaks(verbose, quiet),
                extra={"upkeep": upkeep} if upkeep is not None and last else None)
    if failed:
        raise typer.Exit(5)


def _health(vault, summaries, now) -> None:
    """The run's outcome for the brief's note on whether memory is still being saved (memvault.vault.health)."""
    from memvault.vault import health

    last = summaries[-1]
    failed = next((s for s in summaries if s.failed), None)
    entry = {"at": now(), "by": "memvault distill", "ok": True, "episodes": last.episodes_distilled}
    if failed is not None:
        kinds = ", ".join(k for k, n in failed.failures.items() if n)
        entry.update(ok=False, problem=f"{kinds}: {failed.errors[0][:200] if failed.errors else 'a batch failed'}",
                     fix="check llm.base_url, llm.model and the key named by llm.api_key_env in memvault.yaml "
                         "(`memvault distill --dry-run` tries one batch); the turns stay pending")
    elif last.pending_before and not any(s.episodes_distilled for s in summaries) and not last.stopped:
        entry.update(ok=False, nothing=True, problem=f"{last.pending_before} turns were pending and none was read",
                     fix="run `memvault distill --json` by hand to see why")
    health.record(vault.root, "distill", entry)


def _upkeep(vault, now, project: str | None, *, explain: bool, as_json: bool, talk: bool) -> dict[str, Any]:
    """--auto: the synopsis rule of each project, and the consolidate/reflect it runs (one line each written)."""
    from memvault.distill.upkeep import auto_upkeep

    from memvault.errors import Busy

    try:
        upkeep = auto_upkeep(vault, os.environ, now=now, project=project, explain=explain)
    except Busy as exc:
        # Trigger: another card change took the lock between the distill and this. Outcome: the distill's own
        # report still prints; the synopsis waits for the next run (its rule still holds then).
        err(f"warning: synopsis not written now: {exc.message}")
        return {"synopsis": [], "consolidate": None, "reflect": None, "busy": True}
    for part in ("consolidate", "reflect"):
        for warning in (upkeep[part] or {}).get("warnings", []):
            err(f"warning: {warning}")
    if any((upkeep[part] or {}).get(key) for part in ("consolidate", "reflect") for key in ("written", "folded")):
        cards_changed(vault)
    if not as_json and talk:
        for item in (upkeep["consolidate"] or {}).get("written", []):
            typer.echo(f"synopsis of {item['project']}: {item['id']} ({item['engine']}, {item['lines']} lines)")
        for item in (upkeep["reflect"] or {}).get("written", []):
            typer.echo(f"reflection in {item['project']}: {item['id']} (rests on {len(item['cards'])} cards)")
    return upkeep


def _report(summary, *, as_json: bool, dry_run: bool, max_calls: int | None, talk: bool = False,
            extra: dict | None = None) -> None:
    """A distill run's summary: JSON, the dry-run cards, or one line on a terminal or with -v (`talk`)."""
    speaks = talk  # cli.common.speaks: a terminal, or -v; never --quiet
    if summary.recovered and speaks:  # done and repaired: news for a person watching, not for cron's mail
        err(f"rolled back batch {summary.recovered}, interrupted in an earlier run")
    if summary.rolled_back and speaks:
        err(f"rolled back {summary.rolled_back} batches whose turns were edited in the chat history")
    if summary.rollback_fallback:
        err(f"warning: could not undo {len(summary.rollback_fallback)} batches from the journal; their turns are "
            "distilled again and their cards kept")
    for message in summary.errors:
        err(message)
    if summary.failed_episodes or summary.untried_episodes:
        ids = [*summary.failed_episodes, *summary.untried_episodes]
        why = (f"{len(summary.failed_episodes)} in failed batches, {len(summary.untried_episodes)} not sent after "
               "the endpoint failed" if summary.untried_episodes else "their batches failed")
        err(f"{len(ids)} episodes not distilled ({why}); they stay pending for the next run: {', '.join(ids[:5])}"
            + (f" and {len(ids) - 5} more" if len(ids) > 5 else ""))
    unread = summary.nothing.get("unread_language", 0)
    if unread and not dry_run:
        # Trigger: turns in a language the offline engine reads only by signs gave no card. Why: a silent
        # "success" hid exactly this (42 French and Korean turns, 0 cards). Outcome: said even to cron's mail.
        err(f"warning: {unread} turns are in a language the offline engine does not read and gave no card; "
            "set llm.base_url in memvault.yaml and run `memvault distill --upgrade` to read them with a model")
    fell_back = [s for s in summary.suspect if s["outcome"] == "offline"]
    if fell_back:
        n = sum(len(s["episodes"]) for s in fell_back)
        err(f"warning: the model found nothing in {n} episodes where the offline engine finds facts; their "
            "offline cards are kept (tagged offline-fallback) and `memvault distill --upgrade` sends them again")
    if as_json:
        print_json({**summary.to_json(), **(extra or {})})
    elif dry_run:
        for card in summary.would_write:
            typer.echo(f"{card['action']:6s} {card['id']}  {card['kind']} · {card['title']}"
                       + (f" ({card['status']})" if card["status"] != "active" else ""))
        typer.echo(f"dry run: nothing written; {summary.pending_after} episodes pending")
    elif not speaks:
        pass
    elif summary.engine == "offline":
        n = summary.cards
        none = sum(summary.nothing.values())
        typer.echo(f"engine offline: {n['created']} cards from {summary.episodes_distilled} episodes "
                   f"({n['merged']} merged, {n['superseded']} superseded; {summary.pending_after} pending)"
                   + (f"; {none} episodes gave nothing ({summary.nothing.get('no_statement', 0)} with no statement"
                      f", {unread} in a language it does not read)" if none else ""))
    else:
        n = summary.cards
        typer.echo(f"{summary.episodes_distilled} episodes in {summary.batches} batches: {n['created']} "
                   f"cards created, {n['merged']} merged, {n['updated']} updated, {n['superseded']} "
                   f"superseded; {summary.pending_after} pending; {summary.calls} calls, "
                   f"{summary.prompt_tokens}+{summary.completion_tokens} tokens"
                   + (f"; {sum(summary.repairs.values())} model mistakes repaired" if any(summary.repairs.values())
                      else ""))
    if summary.stopped == "max_calls" and not as_json and speaks:
        err(f"stopped at --max-calls {max_calls}; {summary.pending_after} episodes still pending")


@app.command()
@guard
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
    vault = open_vault()
    result = svc_remember(vault, title, now=now_fn(), kind=kind, body=body, entities=names,
                          project=project, supersedes=supersedes or [], valid_from=valid_from,
                          subject=subject, field=field, value=value)
    cards_changed(vault)
    if as_json:
        print_json(result.to_json())
    else:
        typer.echo(f"{result.card.id}  {result.path}")
        for old in result.superseded:
            typer.echo(f"supersedes {old}")


@app.command()
@guard
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
    vault = open_vault()
    result = svc_forget(vault, card_id, mode="retract" if retract else "purge", now=now_fn(),
                        reason=reason, with_episodes=with_episodes)
    if result.changed:
        redraw_graph(vault)
    if as_json:
        print_json(result.to_json())
        return
    if not result.changed:
        typer.echo(f"{result.id} was already retracted")
        return
    done = {"retract": "retracted", "purge": "purged"}[result.mode]
    typer.echo(f"{done} {result.id}: {len(result.files)} files changed"
               + (f", {len(result.episodes_purged)} episodes removed" if result.episodes_purged else ""))
    for line in result.git_history:
        err(line)



@app.command("import-rules")
@guard
def import_rules(
    files: Annotated[list[Path], typer.Argument(help="CLAUDE.md, AGENTS.md, GEMINI.md, MEMORY.md, .cursorrules, "
                                                     ".cursor/rules/*.mdc …")],
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Project of these rules (default: "
                                                   "the file's repository; none for ~/.claude, ~/.gemini …).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would change; write nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what changed as JSON.")] = False,
) -> None:
    """Turn each rule or preference an agent's instruction or memory file states into a card (source FILE:LINE).
    Run it again after editing a file: unchanged lines change nothing, an edited line supersedes its card, a
    removed line retracts it.

    Example: memvault import-rules CLAUDE.md .cursor/rules/*.mdc ~/.claude/CLAUDE.md
    """
    from memvault.distill.import_rules import import_rules as svc_import_rules

    vault = open_vault()
    result = svc_import_rules(vault, files, now=now_fn(), project=project, dry_run=dry_run)
    if result.changed and not dry_run:
        cards_changed(vault)
    if as_json:
        print_json(result.to_json())
        return
    verb = "would be " if dry_run else ""
    for f in result.files:
        typer.echo(f"{f.file}: {f.statements} statements, {len(f.new) - len(f.superseded)} new, "
                   f"{len(f.superseded)} {verb}superseded, {len(f.retracted)} {verb}retracted, "
                   f"{len(f.restored)} {verb}restored, {f.unchanged} unchanged")
