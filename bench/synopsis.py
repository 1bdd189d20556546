"""LLM synopsis and reflect on a generated vault: `python bench/synopsis.py [--cards 20000]`.

Builds the clean vault of bench/conflicts.py (3 projects, half Chinese), serves the fake model of
tests/synopsis_fake.py on 127.0.0.1 (real HTTP, answers at once: the figures are memvault's own cost, not a
model's), and times in-process: `consolidate --engine llm` (one call per project), its rerun (must make no call
and write nothing), `reflect`, and its rerun. Prints the cards shown per project and the prompt tokens.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from conflicts import build  # noqa: E402
from fake_llm import fake_llm_server  # noqa: E402
from synopsis_fake import answer  # noqa: E402

from memvault.distill.consolidate import consolidate  # noqa: E402
from memvault.distill.reflect import reflect  # noqa: E402
from memvault.vault.store import Vault  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=20000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, fake_llm_server() as fake:
        root = Path(tmp) / "v"
        build(root, args.cards, planted=False)
        fake.set_default(answer)
        env = {"MEMVAULT_LLM_BASE_URL": fake.base_url}
        now = lambda: "2026-12-01T08:00:00Z"  # noqa: E731
        for name, step in (("consolidate --engine llm", lambda v: consolidate(v, now=now, engine="llm", env=env)),
                           ("reflect", lambda v: reflect(v, env, now=now))):
            for attempt in ("first", "rerun"):
                vault = Vault.open(root, env)
                asked = len(fake.requests)
                started = time.perf_counter()
                result = step(vault)
                took = time.perf_counter() - started
                print(f"{name:26s} {attempt:5s} {took:6.2f} s  written {len(result.written)}  "
                      f"calls {len(fake.requests) - asked}  prompt tokens {result.usage['prompt_tokens']}")
        for r in fake.requests[:3]:
            shown = r["body"]["messages"][1]["content"].count("\n[c-") + 1
            print(f"  synopsis prompt: {shown} cards shown, {len(r['body']['messages'][1]['content'])} chars")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
