"""Redaction benchmark: recall, strict recall, false positives and keep-loss per family on the generated
tables (the original one, issue 11's extended one and a held-out draw of it), MB/s on chat text and on text
dense in key words (secret detectors' test files, issue 34: goal >= 5 MB/s), the time for 1 MB pathological
lines (goal < 1 s each), and issue 24's scanner-breadth table (tests/unit/redact_scanner_cases.py) per form
and per provider family.   Run: .venv/bin/python bench/redact.py [--quick | --breadth]

- recall: no secret survives whole;  strict recall: no 16-character window of a secret survives (the whole
  secret if shorter);  FP: a secret-free line changed at all;  keep-loss: characters a redaction removed that
  were not part of a secret, over all such characters of the positive lines (PEM armour lines count as part
  of the key; lines whose exact output the tests fix, emails and home directories, are left out).
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

import redact_cases  # noqa: E402
import redact_keygen  # noqa: E402
import redact_scanner_cases as scanner  # noqa: E402

from memvault.redact.engine import default_rules, redact  # noqa: E402

HELDOUT_SEED = 4242


def survives(secret: str, out: str, width: int) -> bool:
    w = min(width, len(secret))
    return any(secret[i:i + w] in out for i in range(len(secret) - w + 1))


# What the project treats as one secret although a case lists only its payload: a PEM block's armour lines
# go with the block, and a Twilio account SID is itself a positive kind of the original table.
_WHOLE = re.compile(r"-----BEGIN[ A-Z]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
                    r"|\bAC[0-9a-f]{32}\b", re.S)


def secret_mask(text: str, secrets) -> list[bool]:
    mask = [False] * len(text)
    for m in _WHOLE.finditer(text):
        for j in range(*m.span()):
            mask[j] = True
    for s in secrets:
        i = text.find(s)
        while i >= 0:
            for j in range(i, i + len(s)):
                mask[j] = True
            i = text.find(s, i + 1)
    return mask


def family_of(case) -> str:
    return case.family or "original"


def score(cases) -> tuple[dict, list[str], tuple[int, int]]:
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # n, recall hits, strict hits
    misses: list[str] = []
    lost = kept_total = 0
    for c in cases:
        r = redact(c.text)
        fam = family_of(c)
        st = stats[fam]
        st[0] += 1
        whole = not any(s in r.text for s in c.secrets)
        strict = not any(survives(s, r.text, 16) for s in c.secrets)
        if c.family == "" and c.rule not in {f.rule for f in r.findings}:
            whole = strict = False  # the original table also names the rule that must fire
        st[1] += whole
        st[2] += strict
        if not strict:
            misses.append(f"{fam}/{c.lang}: {c.kind}")
        if c.expect is not None:
            continue  # emails and home directories: the exact output is fixed by the tests
        mask = secret_mask(c.text, c.secrets)
        removed = [False] * len(c.text)
        for f in r.findings:
            for j in range(f.start, f.end):
                removed[j] = True
        lost += sum(1 for m, x in zip(mask, removed) if x and not m)
        kept_total += sum(1 for m in mask if not m)
    return stats, misses, (lost, kept_total)


def report_positives(title: str, cases) -> None:
    stats, misses, (lost, total) = score(cases)
    n = sum(s[0] for s in stats.values())
    rec = sum(s[1] for s in stats.values())
    strict = sum(s[2] for s in stats.values())
    print(f"{title}: {n} secret-bearing lines")
    print(f"  recall {100 * rec / n:.1f} %   strict recall {100 * strict / n:.1f} %   "
          f"keep-loss {100 * lost / max(total, 1):.2f} % ({lost}/{total} chars)")
    for fam, (k, a, b) in sorted(stats.items()):
        print(f"    {fam:<18} n={k:<4} recall {100 * a / k:5.1f} %   strict {100 * b / k:5.1f} %")
    for m in misses[:25]:
        print("    missed:", m)


def report_negatives(title: str, lines, *, unit: str = "lines", inline: bool = False, show: int = 25) -> float:
    """False positives over (group, secret-free text) pairs, per group: one line each, or `inline` after the
    total (the breadth table's many groups); the first `show` changed texts; the false-positive rate."""
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    changed = []
    for group, ln in lines:
        r = redact(ln)
        by[group][0] += 1
        if r.text != ln:
            by[group][1] += 1
            changed.append(f"{group}: {ln[:100 if inline else 90]!r} -> {[f.rule for f in r.findings]}")
    n, fp = sum(a for a, _ in by.values()), sum(b for _, b in by.values())
    head = f"{title}: {n} secret-free {unit}, false positives {fp} = {100 * fp / n:.2f} %"
    if inline:
        print(f"{head}  " + ", ".join(f"{g} {b}/{a}" for g, (a, b) in sorted(by.items())))
    else:
        print(head)
        for group, (k, a) in sorted(by.items()):
            print(f"    {group:<18} n={k:<4} FP {a} = {100 * a / k:.1f} %")
    for c in changed[:show]:
        print("    changed:", c)
    return fp / n


def report_breadth(title: str, cases, show: int = 30) -> float:
    """Issue 24's table: strict recall overall, per form, per provider family and per value shape."""
    by_form: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses = []
    for c in cases:
        out = redact(c.text).text
        ok = not any(survives(s, out, 16) for s in c.secrets)
        for key, table in ((c.form, by_form), (c.family, by_family)):
            table[key][0] += 1
            table[key][1] += ok
        if not ok:
            misses.append(f"{c.table}/{c.form}/{c.kind}: {c.text[:110]!r}")
    n, hit = len(cases), sum(ok for _, ok in by_form.values())
    print(f"{title}: {n} secret-bearing texts, strict recall {100 * hit / n:.1f} % ({n - hit} missed)")
    for label, table in (("form", by_form), ("family", by_family)):
        worst = sorted(table.items(), key=lambda kv: (kv[1][1] / kv[1][0], kv[0]))
        print(f"  per {label}: " + ", ".join(f"{k} {100 * b / a:.0f}% ({a})" for k, (a, b) in worst))
    for m in misses[:show]:
        print("    missed:", m)
    return hit / n


def main_breadth() -> None:
    """The scanner-breadth table (issue 24): tuning draw, held-out draw (with the forms nobody listed)."""
    report_breadth(f"scanner breadth, tuning draw (seed {scanner.SEED})", scanner.breadth_positive_cases())
    report_breadth(f"scanner breadth, held-out draw (seed {scanner.HELDOUT_SEED}, unlisted forms)",
                   scanner.breadth_positive_cases(heldout=True))
    report_negatives("scanner breadth negatives (placeholders, look-alikes)", scanner.breadth_negative_lines(),
                     unit="texts", inline=True, show=30)
    report_negatives(f"scanner breadth negatives, held-out draw (seed {scanner.HELDOUT_SEED})",
                     scanner.breadth_negative_lines(scanner.HELDOUT_SEED), unit="texts", inline=True, show=30)


def cold() -> None:
    """Empty the redaction's memo caches (values judged once per process), so a repeated run costs what the
    first did."""
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("memvault.redact"):
            for obj in vars(mod).values():
                if callable(getattr(obj, "cache_clear", None)) and obj is not default_rules:
                    obj.cache_clear()


def timed(fn, repeat: int = 3) -> float:
    """Median wall time; the CPU time of the same runs goes to CPU_TIMES (a shared machine inflates wall time).
    Each run starts with the memo caches empty."""
    times, cpu = [], []
    for _ in range(repeat):
        cold()
        t, c = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    CPU_TIMES.append(statistics.median(cpu))
    return statistics.median(times)


CPU_TIMES: list[float] = []


def main() -> None:
    quick = "--quick" in sys.argv
    default_rules()
    if "--breadth" in sys.argv:
        main_breadth()
        return
    report_positives("original table", redact_cases.positive_cases())
    report_positives("extended table (issue 11)", redact_cases.extended_positive_cases())
    report_positives(f"held-out draw (seed {HELDOUT_SEED}, other value shapes and names)",
                     redact_cases.extended_positive_cases(seed=HELDOUT_SEED, heldout=True))
    report_positives("novel phrasings (written after tuning; held-out values)", redact_cases.novel_phrasings())
    neg = [("original", ln) for ln in redact_cases.negative_lines()]
    report_negatives("original negatives", neg)
    report_negatives("extended negatives (issue 11)", redact_cases.extended_negative_lines())
    report_negatives("all negatives", neg + redact_cases.extended_negative_lines())
    report_negatives("plain negatives (issue 34: code, URLs, placeholders, prose; goal <= 5 % changed)",
                     redact_cases.plain_negatives())
    all_pos = redact_cases.positive_cases() + redact_cases.extended_positive_cases()
    stats, _, (lost, total) = score(all_pos)
    n = sum(s[0] for s in stats.values())
    print(f"both tables: strict recall {100 * sum(s[2] for s in stats.values()) / n:.2f} %  "
          f"keep-loss {100 * lost / total:.2f} %")
    main_breadth()
    if quick:
        return

    for label, corpus in (("chat text (zh/en prose + code)", redact_cases.chat_corpus(4 << 20)),
                          ("negative lines only (trigger-dense)", redact_cases.dense_corpus(4 << 20)),
                          ("detector test files (key words dense; goal >= 5 MB/s)",
                           redact_keygen.detector_test_corpus(4 << 20)),
                          ("key = value lines only (every line a key word)", redact_keygen.keyword_corpus(4 << 20))):
        mb = len(corpus.encode()) / 1e6
        changed = redact(corpus).text != corpus and "detector" not in label and "key = value" not in label
        dt = timed(lambda: redact(corpus))
        print(f"throughput, {label}: {mb:.1f} MB in {dt:.2f} s = {mb / dt:.1f} MB/s (CPU {mb / CPU_TIMES[-1]:.1f} MB/s)"
              f"{'  (CHANGED: false positive!)' if changed else ''}")

    print("pathological 1 MB lines (seconds, median of 3):")
    worst, worst_name = 0.0, ""
    lines = redact_cases.pathological_lines(1 << 20)
    for name, line in lines.items():
        dt = timed(lambda: redact(line))
        if dt > worst:
            worst, worst_name = dt, name
        print(f"  {name:<18} {dt:6.3f} s  (CPU {CPU_TIMES[-1]:.3f} s)")
    print(f"  slowest            {worst:6.3f} s  ({worst_name}); slowest in CPU time {max(CPU_TIMES[-len(lines):]):.3f} s")


if __name__ == "__main__":
    main()
