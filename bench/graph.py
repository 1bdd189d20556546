"""graph.html at scale: `python bench/graph.py [--sizes 2000,20000] [--runs 5]`.

For each size it generates a vault (tests/graph_helpers.make_vault: deterministic), then prints:
- draw: wall time of `memvault graph --html` in a fresh process (index build excluded: a warm index),
- size: graph.html's bytes (target at 2,000 cards: <= 2 MB),
- interactive: headless Chromium (Debian's /usr/bin/chromium through Playwright), from navigation start to the
  page's first frame after it drew every node and wired its handlers (window.memvaultReady), median of --runs
  loads in fresh pages (target at 2,000 cards: <= 1 s),
- wheel: time for one zoom step to be painted, median of 10 (how usable the page stays),
- drawn / hidden cards (past graph_layout.CARD_LIMIT the page draws the newest and most connected).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from graph_helpers import launch, make_vault  # noqa: E402


def bench(size: int, runs: int, base: Path, browser) -> dict:
    root = make_vault(base / f"v{size}", size)
    cmd = [sys.executable, "-m", "memvault", "--vault", str(root), "graph", "--html"]
    subprocess.run(cmd, check=True, capture_output=True)  # builds the index
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    draw = time.perf_counter() - t
    path = root / "graph.html"
    ready, wheel = [], []
    for _ in range(runs):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=60000)
        ready.append(page.evaluate("window.memvaultReady") / 1000)
        counts = page.evaluate("[document.querySelectorAll('#nodes circle.card').length,"
                               " document.getElementById('notice').textContent]")
        page.mouse.move(640, 400)
        for _ in range(10):
            t = page.evaluate("performance.now()")
            page.mouse.wheel(0, -120)
            done = page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame("
                                 "() => r(performance.now()))))")
            wheel.append((done - t) / 1000)
        page.close()
    return {"size": size, "draw_s": draw, "bytes": path.stat().st_size, "ready_s": statistics.median(ready),
            "wheel_s": statistics.median(wheel), "drawn": counts[0], "notice": counts[1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="75,2000,20000")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = launch(p)
        print(f"{'cards':>6} {'draw s':>7} {'size':>9} {'interactive s':>14} {'wheel ms':>9} {'drawn':>6}  notice")
        for size in (int(s) for s in args.sizes.split(",")):
            r = bench(size, args.runs, Path(tmp), browser)
            print(f"{r['size']:>6} {r['draw_s']:>7.2f} {r['bytes'] / 1e6:>7.2f}MB {r['ready_s']:>14.3f}"
                  f" {r['wheel_s'] * 1000:>9.1f} {r['drawn']:>6}  {r['notice']}")
        browser.close()


if __name__ == "__main__":
    main()
