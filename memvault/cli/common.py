"""What every command module shares: the error guard, opening the vault, JSON and redacted output, the clock.

Every error becomes one line on stderr and an exit code here, in `guard`; services never print or exit.
"""

from __future__ import annotations

import functools
import os
import sys
from collections import namedtuple
from typing import Any

import typer

from memvault.choices import check_project
from memvault.errors import MemvaultError, no_space, unwritable_stdout
from memvault.vault.local import READ_ONLY_ERRNOS

# What open_settings() returns: a vault's root and config, without the rest of a Vault.
Settings = namedtuple("Settings", "root config")

# Set by the app's callback (global options), read by the commands of this process.
state: dict[str, Any] = {"vault": None, "debug": False}


def sub_app() -> typer.Typer:
    """The Typer app a command module registers its commands on (memvault.cli.app loads it on demand)."""
    return typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_show_locals=False)


def err(message: str) -> None:
    typer.echo(f"memvault: {message}", err=True)


VERBOSE_HELP = "Say what was done even when stdout is no terminal (cron, a pipe)."


def speaks(verbose: bool = False, quiet: bool = False) -> bool:
    """The quiet rule of the commands cron runs (capture, distill, doctor, reindex, consolidate): on success
    they say what they did only when stdout is a terminal, or with -v/--verbose; never with --quiet. Warnings,
    errors and problems always print, and --json always prints its summary."""
    return not quiet and (verbose or sys.stdout.isatty())


def guard(fn):
    """Turn MemvaultError into its exit code, Ctrl-C into 130, anything else into 70 (traceback with --debug)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            # Every command's --project is checked here, once: a newline in it would split output lines.
            check_project(kwargs.get("project"))
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except MemvaultError as exc:
            err(exc.message)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err("interrupted")
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # `memvault search x | head`: the reader went away; that is not an error of ours (memvault.__main__'s
            # stdout drops what is still buffered, so the exit flush raises nothing).
            raise typer.Exit(0) from None
        except OSError as exc:
            _full(exc)
            if exc.errno not in READ_ONLY_ERRNOS:
                _internal(exc)
            # Trigger: a file could not be written or read for want of rights (a read-only mount, another
            # user's vault) where no explicit check caught it. Outcome: exit 3 naming the file, no traceback.
            where = f"{exc.filename}: " if exc.filename else ""
            err(f"{where}{exc.strerror or 'permission denied'} (is the vault read-only for this user?)")
            raise typer.Exit(3) from None
        except Exception as exc:  # noqa: BLE001 - the one place internal errors are reported
            _full(exc)
            _internal(exc)

    return wrapper


def _full(exc: BaseException) -> None:
    """Standard output that cannot be written (`> /dev/full`), or a full disk: one line naming it, exit 6 for a
    full disk (errors.NoSpace); returns for any other error."""
    found = unwritable_stdout(exc) or no_space(exc, where=_local_dir())
    if found is not None:
        err(found.message)
        raise typer.Exit(found.exit_code) from None


def _local_dir() -> str:
    """The vault's .memvault/ folder, named when SQLite says the disk is full (it names no file)."""
    from memvault.vault.locate import locate_vault

    try:
        return os.path.join(locate_vault(state.get("vault"), os.environ), ".memvault")
    except Exception:  # noqa: BLE001 - no vault to name: the message says "the disk"
        return ""


def _internal(exc: BaseException) -> None:
    """An error memvault did not expect: one line (the traceback with --debug, never local variables), exit 70."""
    if state.get("debug"):
        import traceback

        traceback.print_exception(exc, limit=None, chain=True)
    err(f"internal error: {type(exc).__name__} (run with --debug for the traceback)")
    raise typer.Exit(70) from None


def open_vault():
    from memvault.vault.store import Vault

    return Vault.open(state.get("vault"), os.environ)


def open_settings():
    """The vault's root and settings, as Vault.open finds them, without the Vault: a command that reads only the
    index (timeline) does not import the card and episode code (memvault.model's dataclasses, ~7 ms of start-up).
    Has .root and .config like a Vault, for clean() and chinese_mode()."""
    from memvault.vault.locate import locate_vault
    from memvault.vault.settings_cache import read_config

    root = locate_vault(state.get("vault"), os.environ)
    return Settings(root, read_config(root, os.environ))


def warn_settings(vault) -> None:
    """memvault.yaml's problems on stderr as `memvault.yaml:LINE: reason` (never the value)."""
    for problem in vault.config.problems:
        err(f"{'error' if problem.error else 'warning'}: {problem}")


def clean(vault, data: Any) -> Any:
    """Reading commands filter their output through redaction once more (defence in depth)."""
    from memvault.redact import engine as redact

    return redact.redact_tree(data, redact.compile_rules(list(vault.config.section("redact").get("deny") or [])))


def print_json(data: Any) -> None:
    import json  # not at the top: --help and a plain stats or timeline print none

    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False))


def now_fn():
    from memvault.vault.config import clock_from_env

    return clock_from_env(os.environ)


def chinese_mode(vault) -> str:
    return str(vault.config.section("search").get("chinese", "bigram"))


def redraw_graph(vault) -> None:
    """Draw graph.html again when the vault has one (cards changed); a failure is a warning, not the command's."""
    from memvault.views.graph import redraw_if_present

    try:
        redraw_if_present(vault, chinese_mode(vault))
    except MemvaultError as exc:
        err(f"warning: graph.html was not redrawn: {exc.message}")


def cards_changed(vault) -> None:
    """Cards were written: redraw graph.html and embed the new cards (both best effort, warnings only)."""
    redraw_graph(vault)
    embed_new(vault)


def embed_new(vault) -> None:
    """With embeddings on, the new cards get their vectors now, best effort: a failure only warns."""
    if not vault.config.section("embeddings").get("base_url"):
        return
    import os

    from memvault.views.embed import embed_new_cards

    warning = embed_new_cards(vault, os.environ)
    if warning:
        err(f"warning: {warning}")
