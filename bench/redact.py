"""Redaction benchmark: recall and false positives on the generated table, MB/s on chat text, and the time
for 1 MB pathological lines.   Run: .venv/bin/python bench/redact.py"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

import redact_cases  # noqa: E402

from memvault.redact import default_rules, redact  # noqa: E402


def leaked(secret: str, out: str) -> bool:
    w = min(8, len(secret))
    return any(secret[i:i + w] in out for i in range(len(secret) - w + 1))


def timed(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    default_rules()
    pos = redact_cases.positive_cases()
    hits = 0
    misses = []
    for c in pos:
        r = redact(c.text)
        if c.rule in {f.rule for f in r.findings} and not any(leaked(s, r.text) for s in c.secrets):
            hits += 1
        else:
            misses.append(f"{c.kind}/{c.lang}")
    neg = redact_cases.negative_lines()
    fps = [ln for ln in neg if redact(ln).text != ln]
    kinds = len({c.kind.split("#")[0] for c in pos})
    print(f"recall:              {hits}/{len(pos)} = {100 * hits / len(pos):.1f} %  ({kinds} kinds, en+zh)")
    if misses:
        print("  missed:", ", ".join(misses[:20]))
    print(f"false positives:     {len(fps)}/{len(neg)} = {100 * len(fps) / len(neg):.1f} %")
    for ln in fps[:10]:
        print("  changed:", ln[:100])

    for label, corpus in (("chat text (zh/en prose + code)", redact_cases.chat_corpus(4 << 20)),
                          ("negative lines only (trigger-dense)", redact_cases.dense_corpus(4 << 20))):
        mb = len(corpus.encode()) / 1e6
        changed = redact(corpus).text != corpus
        dt = timed(lambda: redact(corpus))
        print(f"throughput, {label}: {mb:.1f} MB in {dt:.2f} s = {mb / dt:.1f} MB/s"
              f"{'  (CHANGED: false positive!)' if changed else ''}")

    print("pathological 1 MB lines (seconds, median of 3):")
    worst = 0.0
    for name, line in redact_cases.pathological_lines(1 << 20).items():
        dt = timed(lambda: redact(line))
        worst = max(worst, dt)
        print(f"  {name:<18} {dt:6.3f} s")
    print(f"  worst              {worst:6.3f} s")


if __name__ == "__main__":
    main()
