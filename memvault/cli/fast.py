"""`memvault search` without Typer: the start-up path for the command people run most; and `memvault mcp` over
stdio, the command agents launch at every session start (`try_mcp`).

Typer 0.29 builds pydantic adapters for every parameter, which costs ~100 ms per process before a command runs;
a whole search must take well under 100 ms. `main` therefore handles exactly the `search` command line it fully
understands (global --vault/-V, then `search` with its documented options, where --vault/-V may come too, as
memvault.cli.argv allows for every command) and hands everything else — other
commands, --help, --debug, unknown or malformed options — to the Typer app unchanged, so behaviour and messages
stay those of memvault.cli.app. Output and exit codes are the same as the Typer command, which uses `render_text`.

Wiring (entry point, owned by the CLI): `[project.scripts] memvault = "memvault.__main__:main"` with
    def main():
        code = try_search(sys.argv[1:])
        if code is not None:
            sys.exit(code)
        from memvault.cli.app import app
        app(prog_name="memvault")
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from typing import Any

_FLAGS = {"--all": "include_all", "--episodes": "episodes", "-e": "episodes", "--cards-only": "cards_only",
          "--json": "as_json"}
_VALUES = {"--limit": ("limit", int), "-n": ("limit", int), "--project": ("project", str), "-p": ("project", str),
           "--kind": ("kind", str), "-k": ("kind", str), "--hops": ("hops", int),
           "--snippet-chars": ("snippet_chars", int), "--vault": ("vault", str), "-V": ("vault", str)}


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The options of a plain `search` call, or None when Typer should handle the command line."""
    out: dict[str, Any] = {"vault": None, "words": []}
    i = 0
    while i < len(argv) and argv[i] != "search":
        arg = argv[i]
        if arg in ("--vault", "-V") and i + 1 < len(argv):
            out["vault"] = argv[i + 1]
            i += 2
        elif arg.startswith("--vault="):
            out["vault"] = arg.split("=", 1)[1]
            i += 1
        else:
            return None
    if i >= len(argv):
        return None
    i += 1
    rest_are_words = False
    while i < len(argv):
        arg = argv[i]
        if rest_are_words or not arg.startswith("-") or arg == "-":
            out["words"].append(arg)
        elif arg == "--":
            rest_are_words = True
        elif arg in _FLAGS:
            out[_FLAGS[arg]] = True
        else:
            # Only long options take `=value` (click reads `-n=5` as the value "=5": leave that to Typer).
            name, _, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
            if name not in _VALUES:
                return None
            if not inline:
                if i + 1 >= len(argv):
                    return None
                i += 1
                inline = argv[i]
            key, kind = _VALUES[name]
            try:
                out[key] = kind(inline)
            except ValueError:
                return None
        i += 1
    return out if out["words"] else None


def render_text(result) -> str:
    """Hits as a person reads them: id, date (a card's valid_from, else created; a turn's time), kind, title.
    No score: cards and turns are merged by rank, their scores are not on one scale (--json has them)."""
    lines = []
    for hit in result.hits:
        flags = ", ".join(x for x in (hit.project, hit.status if hit.status not in ("active", "live") else "") if x)
        date = (hit.world or hit.created or "")[:10]
        lines.append(f"{hit.id}  {date or '-':10s}  [{hit.kind}] {hit.title}" + (f"  ({flags})" if flags else ""))
        if hit.snippet and hit.snippet != hit.title:
            lines.append(f"    {hit.snippet}")
        lines.append(f"    why: {'; '.join(hit.why)}")
        if hit.refs:
            lines.append(f"    refs: {', '.join(hit.refs)}")
    return "\n".join(lines)


def no_match(exc, as_json: bool) -> int:
    """Exit 1 of a search that found no answer. What came closest (NoMatch.result.closest, each hit weak): in
    --json as `closest` beside an empty `hits`; on a terminal under "no match; closest:"; into a pipe, nothing
    on stdout (like grep) and one line on stderr."""
    warn(getattr(exc, "warnings", ()))
    result = getattr(exc, "result", None)
    closest = result.closest if result is not None else ()
    if as_json and result is not None:
        import json  # only for --json

        _write(json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n")
    elif closest and sys.stdout.isatty():
        _write("no match; closest:\n" + render_text(result._replace(hits=closest)) + "\n")
    else:
        more = f" ({len(closest)} closest hits: --json lists them)" if closest else ""
        sys.stderr.write(f"memvault: {exc.message}{more}\n")
    return 1


def _write(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass  # the reader went away (`| head`); memvault.__main__'s stdout drops the rest


def mark_conflicts(root, result):
    """`why: conflicts with c-…` on active card hits that disagree with another active card (see
    memvault.views.conflicts.around: same subject and field, other value). Only when a hit's front matter has a
    subject and a field (a byte check of its file): a plain search stays a few small reads, without yaml."""
    ids = [h.id for h in result.hits if h.status == "active" and h.kind != "episode" and _has_subject(root, h.path)]
    if not ids:
        return result
    from memvault.vault.store import Vault
    from memvault.views.conflicts import around

    clashes = around(Vault.open(root, os.environ), ids)
    if not clashes:
        return result
    hits = tuple(h._replace(why=(*h.why, "conflicts with " + ", ".join(clashes[h.id]))) if h.id in clashes else h
                 for h in result.hits)
    return result._replace(hits=hits)


def _has_subject(root, path: str | None) -> bool:
    if not path:
        return False
    try:
        with open(os.path.join(root, path), "rb") as fh:
            head = fh.read(8192).split(b"\n---", 1)[0]
    except OSError:
        return False
    if b"subject:" not in head or b"field:" not in head:  # most cards: no pattern to compile
        return False
    import re

    return all(re.search(rb"^%s: *(?!null *$)[^\s]" % key, head, re.M) for key in (b"subject", b"field"))


def run(opts: dict[str, Any]) -> int:
    from memvault.search import service as svc
    from memvault.choices import check_project
    from memvault.errors import MemvaultError, NoMatch

    try:
        check_project(opts.get("project"))
        root = svc.root_path(opts["vault"], os.environ)
        cfg = svc.settings(root, os.environ)
        options = svc.options_from(
            cfg["search"], cfg["kinds"], limit=opts.get("limit"), project=opts.get("project"), kind=opts.get("kind"),
            include_all=opts.get("include_all"), hops=opts.get("hops"),
            episodes=False if opts.get("cards_only") else opts.get("episodes"),
            snippet_chars=opts.get("snippet_chars"), embeddings=cfg.get("embeddings"))
        result = mark_conflicts(root, svc.run_search(root, " ".join(opts["words"]), options, deny=cfg["deny"]))
    except NoMatch as exc:
        return no_match(exc, bool(opts.get("as_json")))
    except MemvaultError as exc:
        warn(getattr(exc, "warnings", ()))
        sys.stderr.write(f"memvault: {exc.message}\n")
        return exc.exit_code
    warn(result.warnings)
    if opts.get("as_json"):
        import json

        text = json.dumps(result.to_json(), ensure_ascii=False, indent=2)
    else:
        text = render_text(result)
    _write(text + "\n")
    return 0


def warn(lines) -> None:
    """What the dense layer had to say (it fell back to words, cards without vectors): stderr, once each."""
    for line in dict.fromkeys(lines or ()):
        sys.stderr.write(f"memvault: warning: {line}\n")


def try_search(argv: list[str]) -> int | None:
    """Run `argv` if it is a plain search command line and return the exit code; None means "not mine: hand
    the command line to memvault.cli.app". The entry point calls this before importing Typer (see module doc)."""
    opts = parse(argv)
    if opts is None:
        return None
    try:
        return run(opts)
    except KeyboardInterrupt:
        sys.stderr.write("memvault: interrupted\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - same contract as cli._guard: one line, no locals
        from memvault.errors import no_space, unwritable_stdout

        full = unwritable_stdout(exc) or no_space(exc, where=os.path.join(opts.get("vault") or ".", ".memvault"))
        if full is not None:
            sys.stderr.write(f"memvault: {full.message}\n")
            return full.exit_code
        sys.stderr.write(f"memvault: internal error: {type(exc).__name__} (run with --debug for the traceback)\n")
        return 70


def parse_mcp(argv: list[str]) -> dict[str, Any] | None:
    """The options of a plain stdio `mcp` call (global --vault/-V before or after `mcp`, --read-only,
    --project/-p), or None when Typer should handle the command line (--http, --help, anything else)."""
    out: dict[str, Any] = {"vault": None, "read_only": False, "project": None}
    seen_mcp = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg == "mcp" and not seen_mcp:
            seen_mcp = True
        elif name in ("--vault", "-V") or (seen_mcp and name in ("--project", "-p")):
            if not eq:
                if i + 1 >= len(argv):
                    return None
                i += 1
                inline = argv[i]
            out["vault" if name in ("--vault", "-V") else "project"] = inline
        elif seen_mcp and arg == "--read-only":
            out["read_only"] = True
        else:
            return None
        i += 1
    if not seen_mcp or (out["project"] is not None and not out["project"].strip()):
        return None
    return out


def try_mcp(argv: list[str]) -> int | None:
    """Serve MCP over stdio if `argv` is a plain stdio `mcp` command line (exit code), else None. What the Typer
    command does, without Typer's ~100 ms: agents wait for this process at every session start."""
    opts = parse_mcp(argv)
    if opts is None:
        return None
    import gc

    gc.enable()  # off for a search's start-up (memvault.__main__); a server lives long
    from memvault.errors import MemvaultError, unwritable_stdout

    try:
        from memvault.mcp.protocol import Dispatcher
        from memvault.mcp.stdio import serve
        from memvault.mcp.tools import Ctx
        from memvault.vault.store import Vault

        Vault.open(opts["vault"], os.environ)  # a missing vault fails here, with the CLI's message and exit code
        serve(Dispatcher(Ctx(opts["vault"], os.environ, opts["project"]), read_only=opts["read_only"]))
    except MemvaultError as exc:
        sys.stderr.write(f"memvault: {exc.message}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - same contract as cli._guard: one line, no locals
        found = unwritable_stdout(exc)
        if found is not None:
            sys.stderr.write(f"memvault: {found.message}\n")
            return found.exit_code
        sys.stderr.write(f"memvault: internal error: {type(exc).__name__} (run with --debug for the traceback)\n")
        return 70
    return 0
