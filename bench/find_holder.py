"""Time merge.find_holder, the lookup distill makes for every change it links ("we moved from X to Y"), over N
cards of one project made as bench/search.py makes them (English and Chinese titles, in memory, no vault).
Prints CPU milliseconds a call (process time: the figure holds on a busy machine), min and median over the
old values below, each asked with and without a subject.

    .venv/bin/python bench/find_holder.py --cards 10000
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memvault.distill.merge import find_holder  # noqa: E402
from memvault.model import Card  # noqa: E402

OLDS = ["Postgres", "RQ 和 Redis", "kaka", "kakan kaka", "数据库 迁移", "nothing here", "Redis", "数据", "ka",
        "kalo/kakan"]


def cards(n: int) -> list[Card]:
    spec = importlib.util.spec_from_file_location("bench_search", ROOT / "bench" / "search.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rng = random.Random(n)
    out = []
    for i in range(n):
        title = ("".join(rng.choice(mod.ZH) for _ in range(10)) if i % 2
                 else " ".join(mod.words(rng, 6)).capitalize())
        out.append(Card(id=f"c-20260101-{i:06x}", kind="fact", title=title, project="p", status="active",
                        created=f"2026-01-{i % 28 + 1:02d}T10:00:00Z"))
    for i, value in enumerate(["Postgres", "RQ", "Redis", "kaka kakan", "数据库"]):
        out.append(Card(id=f"c-20260201-{i:06x}", kind="state", title=f"Shop db engine: {value}", project="p",
                        status="active", subject="shop db", field="engine", value=value,
                        created="2026-02-01T10:00:00Z"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cards", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    pool = cards(args.cards)
    times = []
    for _ in range(args.rounds):
        for old in OLDS:
            for subject in ("shop db", None):
                start = time.process_time()
                find_holder(subject, old, pool, "p")
                times.append(time.process_time() - start)
    print(f"find_holder over {len(pool)} cards: {1000 * min(times):.1f} ms min, "
          f"{1000 * statistics.median(times):.1f} ms median, {1000 * max(times):.1f} ms max a call (CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
