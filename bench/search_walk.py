"""One query's walk through search: `python bench/search_walk.py QUERY... --vault V [--scope search] [--show]`.

Runs the search `memvault search QUERY` runs (service.run_search with the vault's settings), once untraced (index
fresh, lazy imports done) and once under sys.setprofile, and records the module of each function of memvault
the first time the search enters it (a loop over candidates enters score_text a thousand times: the walk is the
order in which the code is reached, not how often). A "stay" is a run of such entries in the same module; a
"return" is a stay in a module the walk had already left (the query going back to a room it passed).
Rooms (--scope search, the default) are the modules of memvault/search/ that do a step of the search; the
libraries every step calls (index/: the SQL, bm25, tokenize, results: the records) are not rooms, nor is
anything outside memvault/search/ (the walk stays where it was). --scope all: every memvault module is a room.
Issue 37 counted 27 stays, 16 returns, service.py and query.py 5 times each on one query (method not given);
this method gives 27 stays and 20 returns on "postgres backup" over eval/fixture with examples/ captured.

Prints the number of stays and returns, the stays per module, and with --show the sequence of stays.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PKG = str(ROOT / "memvault") + os.sep


def room(filename: str, scope: str) -> str | None:
    """The room a frame of `filename` runs in, or None when it is outside the scope."""
    if not filename.startswith(PKG):
        return None
    rel = filename[len(PKG):].replace(os.sep, "/")
    if scope == "all":
        return rel
    if not rel.startswith("search/"):
        return None
    rel = rel[len("search/"):]
    return None if rel.startswith(LIBRARIES) else rel


LIBRARIES = ("index/", "bm25.py", "tokenize.py", "results.py")  # called by every step: not rooms


def walk(run, scope: str) -> list[str]:
    """The sequence of stays (rooms) while `run()` runs."""
    stays: list[str] = []
    entered: set = set()  # code objects already entered

    def profile(frame, event, _arg) -> None:
        code = frame.f_code
        if event != "call" or code in entered:
            return
        entered.add(code)
        r = room(code.co_filename, scope)
        if r is not None and (not stays or stays[-1] != r):
            stays.append(r)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return stays


def returns(stays: list[str]) -> int:
    """Stays in a room the walk had been in and left before."""
    seen: set[str] = set()
    n = 0
    for r in stays:
        n += r in seen
        seen.add(r)
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("query", nargs="+")
    ap.add_argument("--vault", required=True)
    ap.add_argument("--scope", choices=("search", "all"), default="search")
    ap.add_argument("--show", action="store_true", help="print the sequence of stays")
    args = ap.parse_args()
    from memvault.errors import NoMatch
    from memvault.search import service

    root = service.root_path(args.vault, os.environ)
    cfg = service.settings(root, os.environ)
    opts = service.options_from(cfg["search"], cfg["kinds"])
    query = " ".join(args.query)

    def run() -> None:
        try:
            service.run_search(root, query, opts, deny=cfg["deny"])
        except NoMatch:
            pass

    run()  # index fresh, lazy imports done: the traced walk is the search alone
    stays = walk(run, args.scope)
    print(f"query: {query!r} ({args.scope} scope)")
    print(f"stays: {len(stays)}, returns: {returns(stays)}")
    for name, n in Counter(stays).most_common():
        print(f"  {n:>4}  {name}")
    if args.show:
        print(" -> ".join(stays))
    return 0


if __name__ == "__main__":
    sys.exit(main())
