"""The command that serves the vault to agents: mcp (memvault.mcp, on the optional extra `memvault[mcp]`)."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from memvault.cli.common import state, guard, err, sub_app
from memvault.errors import UsageError

app = sub_app()

MISSING = "MCP over HTTP needs the optional extra (the mcp SDK, 2.x): pip install 'memvault[mcp]'"


@app.command()
@guard
def mcp(
    http: Annotated[Optional[int], typer.Option("--http", metavar="PORT", help="Serve streamable HTTP on "
                                                "127.0.0.1:PORT (endpoint /mcp) instead of stdio.")] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="Offer no tool that writes (remember, forget, "
                                            "distill).")] = False,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Scope every call to this "
                                                   "project.")] = None,
) -> None:
    """Serve the vault to agents over the Model Context Protocol: stdio by default (what agents launch), or
    streamable HTTP on 127.0.0.1 with --http PORT (needs the extra memvault[mcp]). Tools: search, show,
    timeline, graph, context, stats, remember, forget (retract only), distill; prompts brief and recall;
    resources memvault://card/{id} and memvault://entity/{slug}.

    Example: claude mcp add memvault -- memvault mcp
    """
    if http is not None and not 1 <= http <= 65535:
        raise UsageError("--http must be a port number, 1-65535")
    if project is not None and not project.strip():
        raise UsageError("--project needs a name")
    if http is not None:
        try:
            import mcp.server.lowlevel  # noqa: F401 - the optional extra; checked before anything starts
        except ImportError:
            err(MISSING)
            raise typer.Exit(2) from None
    from memvault.mcp.protocol import Dispatcher
    from memvault.mcp.tools import Ctx
    from memvault.vault.store import Vault

    Vault.open(state.get("vault"), os.environ)  # a missing vault fails here, with the CLI's message and exit code
    dispatcher = Dispatcher(Ctx(state.get("vault"), os.environ, project), read_only=read_only)
    if http is None:
        from memvault.mcp.stdio import serve

        serve(dispatcher)
    else:
        from memvault.mcp.server import serve_http

        serve_http(dispatcher, http)
