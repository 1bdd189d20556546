"""One search passes each stage of memvault/search/pipeline.py once, in order (issue 37): traced with
sys.setprofile over a real search of cards, an entity hop and raw turns, the stage modules a query enters
appear once each, in the pipeline's order, and never again after the query has left them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memvault.errors import NoMatch
from memvault.search import service as search

from search_helpers import card, entity_page, write

SEARCH = Path(search.__file__).resolve().parent
STAGES = ["query", "candidates", "scoring", "hops", "order", "fuse", "snippets"]  # pipeline.py's order


def walk(root, query: str) -> list[str]:
    """The stage modules in the order the search enters them, one entry per stay."""
    stays: list[str] = []

    def profile(frame, event, _arg):
        path = Path(frame.f_code.co_filename)
        if event == "call" and path.parent == SEARCH and path.stem in STAGES and stays[-1:] != [path.stem]:
            stays.append(path.stem)

    opts = search.options_from({})
    sys.setprofile(profile)
    try:
        search.run_search(root, query, opts)
    except NoMatch:
        pass
    finally:
        sys.setprofile(None)
    return stays


def test_a_query_passes_each_stage_once_in_order(vault, run):
    write(vault, card("c-20250101-aaaa", "Move the shop database to Postgres", "Backups nightly.",
                      entities=("postgres",)),
          card("c-20250102-bbbb", "Postgres replica in Frankfurt", "Streaming replication.", entities=("postgres",)),
          card("c-20250103-cccc", "主角林晚住在雾港", "小说的开头。", entities=("林晚",)))
    entity_page(vault, "postgres", "PostgreSQL", ["pg"])
    log = [{"role": "user", "content": "how do we back up the shop database?", "session": "s"},
           {"role": "assistant", "content": "pg_dump nightly to B2", "session": "s"}]
    run("capture", "--format", "jsonl", input="".join(json.dumps(m) + "\n" for m in log))
    for query in ("shop database backup", "林晚 雾港", "what did we decide about pg before"):
        walk(vault, query)  # index fresh, first calls done
        assert walk(vault, query) == STAGES, query
    # a question nothing answers passes the same way (its closest hits are the score stage's, below the floor)
    assert walk(vault, "kubernetes autoscaling shop") == STAGES
