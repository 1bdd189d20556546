"""The `memvault` Typer app: global options, and each command loaded from its module only when it runs.

Start-up is the cost every command pays, so the app knows its commands by a table (name -> module and one-line
help) and imports just the module of the command on the command line: `memvault --help` imports none, `memvault
stats` imports memvault.cli.commands.upkeep and what `stats` needs. Plain coercion of option values
(memvault.cli.coerce) keeps pydantic out of the process.
"""

from __future__ import annotations

import gc
import importlib
from pathlib import Path
from typing import Annotated, Optional

import typer
import typer.core

from memvault import __version__
from memvault.cli import coerce
from memvault.cli.argv import hoist_vault
from memvault.cli.common import state

coerce.install()

# name -> (module under memvault.cli.commands, the line `memvault --help` shows)
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("setup", "Create a new vault from the template."),
    "capture": ("setup", "Store chat turns from logs, redacted before they touch disk."),
    "redact": ("setup", "Filter stdin to stdout with the redaction rules."),
    "stats": ("upkeep", "Counts, newest episode, last distill, LLM endpoint."),
    "doctor": ("upkeep", "Check every vault file; --fix repairs what can be derived."),
    "search": ("read", "Find cards (and raw turns) by words and entities."),
    "show": ("read", "A card or entity in full, with its source turns."),
    "timeline": ("read", "Cards in time order with supersede links."),
    "graph": ("read", "Neighbours of a card or entity; --html draws the vault."),
    "reindex": ("upkeep", "Rebuild the search index and entity pages."),
    "embed": ("upkeep", "Embed new cards (and turns) for search by meaning."),
    "distill": ("write", "Turn pending episodes into memory cards."),
    "remember": ("write", "Write a memory card by hand."),
    "forget": ("write", "Retract or purge a card."),
    "import-rules": ("write", "Cards from agents' rule files: CLAUDE.md, AGENTS.md …"),
    "context": ("read", "A token-budgeted memory pack for a prompt."),
    "conflicts": ("settle", "Active cards that cannot both be true."),
    "resolve": ("settle", "Settle a conflict: card A supersedes card B."),
    "consolidate": ("settle", "Fold old small cards; write each project's synopsis."),
    "reflect": ("reflect", "LLM-written insight cards from a project's recent cards."),
    "export": ("upkeep", "Write a portable JSON bundle of cards and entities."),
    "import": ("upkeep", "Add the cards and entity pages of a bundle."),
    "mcp": ("agent", "Serve the vault to agents over MCP (stdio or --http PORT)."),
    "setup": ("agents", "Connect an agent: its MCP entry, capture hooks, session brief."),
    "hook": ("agents", "Run by agents' hooks: capture at stop, brief at start."),
    "embed-server": ("embedserver", "Serve the bundled local embedding model (memvault[embed])."),
}
# Other spellings accepted for a command, not listed in --help: British "distil" (docs once used it as the verb).
ALIASES = {"distil": "distill"}
# Commands that only read (the index they refresh is closed when they return): their process may end without the
# interpreter's tear-down (memvault.__main__.leave), as --help, --version and a usage error may.
READS = frozenset({"stats", "timeline", "show", "search"})
EPILOG = "Every command also takes -V, --vault DIR (the vault folder), before or after its name."


class _Group(typer.core.TyperGroup):
    """Loads a command's module on demand, and accepts the global --vault/-V after the command too
    (memvault.cli.argv explains which words move)."""

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        name = ALIASES.get(name, name)
        if name not in COMMANDS:
            return None
        built = self.__dict__.setdefault("_built", {})
        if name not in built:
            built[name] = _build(name)
        return built[name]

    def resolve_command(self, ctx, args):
        # click says only "No such command"; name the nearest commands as it does for options.
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            import difflib

            near = difflib.get_close_matches(args[0], [*COMMANDS, *ALIASES], n=3, cutoff=0.6)
            near = list(dict.fromkeys(ALIASES.get(n, n) for n in near))
            hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            ctx.fail(f"No such command {args[0]!r}.{hint}")
        name, cmd, rest = super().resolve_command(ctx, args)
        state["command"] = name
        return name, cmd, rest

    def invoke(self, ctx):
        # memvault.__main__ keeps the collector off while the app and the command's module are imported: their
        # objects live until the process ends, so they are frozen out of every later collection. (A process that
        # runs the app otherwise, as tests do, keeps its collector as it was.)
        if not gc.isenabled():
            gc.freeze()
            gc.enable()
        return super().invoke(ctx)

    def format_commands(self, ctx, formatter):
        # The table's lines, without importing every command module for `memvault --help`.
        with formatter.section("Commands"):
            formatter.write_dl(list((name, short) for name, (_, short) in COMMANDS.items()))

    def parse_args(self, ctx, args):
        def value_options(name: str) -> set[str] | None:
            cmd = self.get_command(ctx, name)
            if cmd is None:
                return None
            return {opt for p in cmd.params if p.param_type_name == "option" and not p.is_flag and not p.count
                    for opt in (*p.opts, *p.secondary_opts)}

        return super().parse_args(ctx, hoist_vault(list(args), value_options))


def ends_plainly(code) -> bool:
    """Whether the process that ran the app may end now without the interpreter's tear-down: its exit code is a
    number and no command ran (--help, --version, a usage error) or only one of READS did."""
    return (code is None or isinstance(code, int)) and state.get("command") in (None, *READS)


def _build(name: str):
    """The click command `name`, built from its module's Typer app; only that command's parameters are read."""
    import typer.main

    module, short_help = COMMANDS[name]
    sub = importlib.import_module(f"memvault.cli.commands.{module}").app
    info = next(i for i in sub.registered_commands
                if (i.name or typer.main.get_command_name(i.callback.__name__)) == name)
    cmd = typer.main.get_command_from_info(info, pretty_exceptions_short=True, rich_markup_mode=None)
    cmd.short_help = short_help
    cmd.epilog = cmd.epilog or EPILOG
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
    state["vault"] = vault
    state["debug"] = debug
