"""Random keys (issue 34): draws keys at random in providers' documented formats (tests/unit/redact_keygen.py:
44 formats of 29 providers, 30 syntaxes) and counts the keys left in clear (any 12-character piece of the key
still in the redacted text). The suite runs the same draws with hypothesis and a fixed seed
(tests/unit/test_redact_properties.py); this bench takes a fresh random seed each run.

    python bench/redact_random.py [--draws 100000] [--seed N]

Goal: 0 in clear. Prints the seed, so a failing draw can be replayed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

import redact_keygen as keygen  # noqa: E402

from memvault.redact.engine import redact  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=None)
    opts = parser.parse_args()
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(1 << 32)
    rnd = random.Random(seed)
    left: list[tuple[str, str, str]] = []
    by_format: Counter[str] = Counter()
    start = time.perf_counter()
    for _ in range(opts.draws):
        name, form, text, key = keygen.draw(rnd)
        by_format[name] += 1
        out = redact(text).text
        if keygen.in_clear(key, out):
            left.append((name, text, out))
    dt = time.perf_counter() - start
    print(f"seed {seed}: {opts.draws} draws over {len(by_format)} formats x {len(keygen.SYNTAXES)} syntaxes "
          f"in {dt:.1f} s")
    print(f"  in clear: {len(left)}")
    for name, n in Counter(n for n, _, _ in left).most_common():
        print(f"    {name:<22} {n}/{by_format[name]}")
    for name, text, out in left[:20]:
        print(f"    {name}: {text[:140]!r} -> {out[:140]!r}")


if __name__ == "__main__":
    main()
