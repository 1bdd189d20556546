"""`make demo` (examples/demo.py) as a newcomer runs it: real `memvault` subprocesses on a throw-away vault.

It runs with --words-only: the local embedding server's part is tested in test_embed_server.py, and its speed on a
loaded machine is not this test's business.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def steps(out: str) -> dict[str, str]:
    """The demo's output cut at each `$ memvault …` line: {command line: what followed it}."""
    parts = re.split(r"(?m)^\$ memvault (.*)$", out)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_demo_runs_end_to_end_and_shows_a_card_traced_back_to_its_turns(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLES / "demo.py"), "--words-only"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = steps(done.stdout)
    names = [line.split()[0] for line in ran]
    for command in ("init", "capture", "stats", "distill", "search", "timeline", "show", "context", "doctor"):
        assert command in names, f"the demo did not run `memvault {command}`"
    assert names.index("distill") < names.index("show") < names.index("context")

    again = next(out for line, out in ran.items() if line.startswith("capture") and line.count(".") >= 4)
    assert re.search(r"^0 new, \d+ already stored", again.strip(), re.M), again

    (show_line, shown), = ((line, out) for line, out in ran.items() if line.startswith("show "))
    card = show_line.split()[1]
    assert re.fullmatch(r"c-\d{8}-[0-9a-f]{6,}", card), show_line
    timeline = next(out for line, out in ran.items() if line.startswith("timeline"))
    assert card in timeline, "the demo shows a card the timeline does not list"
    assert shown.splitlines()[1].startswith(card), shown[:300]

    # The card is traced back to its turns: a `sources:` block whose user text is a line of an example log.
    assert "\nsources:\n" in shown, shown
    said = [line.strip().removeprefix("user:").strip() for line in shown.split("\nsources:\n", 1)[1].splitlines()
            if line.strip().startswith("user:")]
    assert said, shown
    logs = "\n".join(p.read_text(encoding="utf-8") for p in EXAMPLES.iterdir() if p.suffix in (".jsonl", ".json", ".txt"))
    for text in said:
        assert text.removesuffix(" […]") in logs, f"a source turn the example logs do not hold: {text!r}"
    # …and its supersede chain: the job queue changed its mind, so the card it replaced is listed with it.
    assert re.search(r"c-\d{8}-[0-9a-f]{6,}\s+superseded\s", shown), shown
