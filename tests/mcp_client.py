"""The official MCP SDK's stdio client on `memvault mcp`, for the e2e tests that talk to the server as agents do."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent


async def _stdio(vault: Path, body, extra: list[str], env: dict[str, str]):
    # The SDK is imported here, not at collection: the pytest process stays small for the tests that measure
    # a child's peak RSS (ru_maxrss counts the parent's pages a vfork'ed child shared before exec).
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "memvault", "--vault", str(vault), "mcp",
                                                                 *extra], env=env, cwd=str(ROOT))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)


def over_stdio(vault: Path, body, *extra: str, env: dict[str, str]):
    """Run `await body(session)` against a fresh `memvault --vault VAULT mcp EXTRA…` child; its result."""
    return anyio.run(_stdio, vault, body, list(extra), env)
