"""Time `memvault doctor` on a generated vault: N cards (English and Chinese, as bench/search.py makes them),
N episodes in day files, and the entity pages `reindex` writes. Prints seconds per run (median of --runs).

    .venv/bin/python bench/doctor.py --cards 10000 --runs 3
    .venv/bin/python bench/doctor.py --cards 10000 --runs 3 --memvault-path /tmp/old-checkout   # compare
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memvault.vault import codec  # noqa: E402
from memvault.model import Episode  # noqa: E402


def _make_vault(root: Path, n: int) -> None:
    spec = importlib.util.spec_from_file_location("bench_search", ROOT / "bench" / "search.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.make_vault(root, n)
    rng = random.Random(n)
    by_day: dict[str, list[str]] = {}
    for i in range(n):
        day = f"2026-{i % 12 + 1:02d}-{i % 28 + 1:02d}"
        user = " ".join(mod.words(rng, 30)) if i % 2 else "".join(rng.choice(mod.ZH) for _ in range(60))
        ep = Episode(id=f"ep-{i:08d}", at=f"{day}T10:00:00Z", project=f"p{i % 7}", session=f"s-{i // 20}",
                     turn=i % 20, user=user, assistant=" ".join(mod.words(rng, 80)), hash=f"{i:016x}")
        by_day.setdefault(day, []).append(codec.episode_to_line(ep))
    for day, lines in by_day.items():
        path = root / "episodes" / day[:4] / day[5:7] / f"{day}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cards", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--memvault-path", default=str(ROOT), help="checkout whose memvault package to time")
    ap.add_argument("--keep", type=Path, help="make the vault in this folder and keep it (reused when it exists: "
                    "a 100k vault costs minutes to make)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = args.keep / f"vault-{args.cards}" if args.keep else Path(tmp) / "vault"
        if not (vault / "memvault.yaml").is_file():
            _make_vault(vault, args.cards)
        env = dict(os.environ, PYTHONPATH=args.memvault_path)
        cmd = [sys.executable, "-m", "memvault", "--vault", str(vault)]
        # cwd outside the checkout: `python -m` puts the cwd first on sys.path, before PYTHONPATH.
        subprocess.run([*cmd, "reindex"], env=env, check=True, capture_output=True, cwd=tmp)
        cold, warm = [], []
        for _ in range(args.runs):
            # Cold: none of doctor's caches in .memvault/ (the first doctor on a vault); warm: the second doctor.
            # -v: the summary line (doctor is quiet into a pipe).
            for name in ("secrets.cache", "doctor-cards.cache", "doctor-conflicts.cache", "doctor-files.cache"):
                (vault / ".memvault" / name).unlink(missing_ok=True)
            for times in (cold, warm):
                start = time.perf_counter()
                res = subprocess.run([*cmd, "doctor", "-v"], env=env, capture_output=True, text=True, cwd=tmp)
                times.append(time.perf_counter() - start)
        print(f"doctor ({args.memvault_path}), {args.cards} cards + {args.cards} episodes: "
              f"first run median {statistics.median(cold):.2f} s, second run median {statistics.median(warm):.2f} s; "
              f"exit {res.returncode}; {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
