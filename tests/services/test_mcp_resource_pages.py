"""MCP resources/list builds its list once per state of the index, not once per page (issue 37), and a card
written meanwhile (by another process: the CLI) is in the next page's list."""

import os
import subprocess
import sys

from memvault.mcp.protocol import PAGE, Dispatcher
from memvault.mcp.tools import Ctx

from search_helpers import card, write


def test_pages_share_one_list_until_the_index_changes(vault):
    write(vault, *[card(f"c-20250101-{i:04x}", f"Card {i}", "Body.", project="shop") for i in range(PAGE + 5)])
    ctx = Ctx(str(vault), dict(os.environ))
    rpc = Dispatcher(ctx)
    first = rpc.list_resources({})
    built = ctx._resources[1]
    second = rpc.list_resources({"cursor": first["nextCursor"]})
    assert ctx._resources[1] is built  # the second page came from the same list
    assert len(first["resources"]) == PAGE and "nextCursor" not in second
    done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "remember", "A new card",
                           "--project", "shop"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    again = rpc.list_resources({"cursor": first["nextCursor"]})
    assert ctx._resources[1] is not built
    names = [r["name"] for r in rpc.list_resources({})["resources"] + again["resources"]]
    assert any(n.startswith("c-") and n not in {r["name"] for r in built} for n in names)
