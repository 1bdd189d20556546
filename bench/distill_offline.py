"""Speed of the offline distill engine in-process (issue 10: >= 500 episodes/s): the labelled set's 179 user
turns (eval/distill/author.py), repeated, through `offline.plan` and `offline.propose` as distill calls them.
The CLI run of eval/distill.py is dominated by process start-up and file writes, not by the engine.

    .venv/bin/python bench/distill_offline.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "eval/distill"))
sys.path.insert(0, str(ROOT))

import author  # noqa: E402

from memvault.distill import offline  # noqa: E402
from memvault.model import Episode  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    eps = [Episode(id=f"ep-{n}", at="2026-01-01T00:00:00Z", project=conv.file, session="s", turn=i, user=t.user,
                   assistant=t.asst)
           for n, (conv, i, t) in enumerate((c, i, t) for c in author.CONVS for i, t in enumerate(c.turns, 1))]
    todo = eps * args.repeat
    start = time.perf_counter()
    cards = sum(len(offline.propose(b, {})[0]["cards"]) for b in offline.plan(todo))
    took = time.perf_counter() - start
    print(f"offline engine: {len(todo)} episodes ({len(eps)} x {args.repeat}), {cards} cards, {took:.3f} s, "
          f"{len(todo) / took:.0f} episodes/s")


if __name__ == "__main__":
    main()
