"""Whole-process start-up of every kind of command: `python bench/startup.py [--size 10000] [--runs 15]
[--episodes 0] [--baseline REV]`.

Measures, on a generated card vault (the one bench/search.py builds), the wall time of `memvault --help`,
`stats`, `show ID`, `timeline --limit 5` and `search WORDS` as a user's install runs them: a byte-compiled,
non-editable copy of the package in its own venv (bench/search.py's user_install), through the console script's
entry point (`memvault.__main__:main`). With `--baseline REV` the package as it was at git revision REV is
installed beside it and measured in the same run, interleaved, so both see the same machine load; it reads its own
copy of the vault (an index of another schema version would otherwise be rebuilt at every other call).
With `--episodes N` the vault also holds N captured turns (7 projects, ~60 a day, half Chinese, ~1 KB each) and a
journal whose distill batches consumed nine in ten of them: what `stats` reads of the raw layer.
Goal (issue 9): --help, stats and show <= 120 ms on a 10k-card vault; (issue 37) --help, stats and timeline
<= 8x bare python (`python -c pass` of the same venv, measured in the same run: the `x bare` column), in wall
time and in CPU time (printed below it: on a loaded machine the wall time is mostly the wait for a core).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search import CPU, ENV, ROOT, ZH, make_vault, pct, timed, user_install, words  # noqa: E402

LAUNCHER = "import sys\nfrom memvault.__main__ import main\nmain()\n"


def export_package(rev: str, dest: Path) -> Path:
    """The memvault/ folder of git revision `rev`, unpacked under `dest`."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev, "memvault", "vault-template"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest / "memvault"


def add_episodes(root: Path, n: int) -> None:
    """N turns in day files (codec.episode_to_line, as capture writes them) and the journal's distill batches."""
    from memvault.model import Episode
    from memvault.vault import codec

    rng = random.Random(n)
    days: dict[Path, list[str]] = {}
    batch: list[str] = []
    journal: dict[Path, list[str]] = {}
    for i in range(n):
        day, sec = divmod(i, 60)
        date = f"{2021 + day // 336}-{day // 28 % 12 + 1:02d}-{day % 28 + 1:02d}"
        at = f"{date}T{8 + sec // 6:02d}:{sec % 6 * 9:02d}:00Z"
        chinese = i % 2
        user = "".join(rng.choice(ZH) for _ in range(60)) if chinese else " ".join(words(rng, 30))
        reply = "".join(rng.choice(ZH) for _ in range(250)) if chinese else " ".join(words(rng, 140))
        ep = Episode(id=f"ep-{at[:10].replace('-', '')}T{at[11:19].replace(':', '')}Z-{i:06x}", at=at,
                     project=f"p{i % 7}", session=f"s-{day}-{i % 7}", turn=sec // 7, user=user, assistant=reply,
                     source={"kind": "claude-code", "ref": f"log-{day}.jsonl"}, hash=f"{rng.getrandbits(64):016x}")
        path = root / "episodes" / at[:4] / at[5:7] / f"{at[:10]}.jsonl"
        days.setdefault(path, []).append(codec.episode_to_line(ep))
        batch.append(ep.id)
        if len(batch) == 20 and i < n * 9 // 10:
            journal.setdefault(root / "journal" / f"{at[:7]}.jsonl", []).append(json.dumps(
                {"type": "distill", "at": at, "batch": f"b-{i:06x}", "run": "r-1", "episodes": batch,
                 "created": [f"c-{i:06x}"], "updated": [], "superseded": []}))
        if len(batch) == 20:
            batch = []
    # Written yesterday, as most day files of a vault are: stats reads a file changed in the last 2 s again at
    # every call (memvault.vault.tally), and the first timed calls would follow the generation that closely.
    day_ago = time.time() - 86400
    for where in (days, journal):
        for path, lines in where.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            os.utime(path, (day_ago, day_ago))


def commands(vault: Path) -> dict[str, list[str]]:
    first = sorted((vault / "cards").rglob("c-*.md"))[0].stem
    v = ["--vault", str(vault)]
    return {"--help": ["--help"], "stats": v + ["stats"], "show": v + ["show", first],
            "timeline": v + ["timeline", "--limit", "5"], "search": v + ["search", "postgres", "backup"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--episodes", type=int, default=0, help="captured turns in the vault too (stats reads them)")
    ap.add_argument("--baseline", help="git revision to measure in the same run (e.g. a commit of main)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        installs = {"now": user_install(base)}
        if args.baseline:
            src = export_package(args.baseline, base / "baseline-src")
            installs[args.baseline[:10]] = user_install(base, src, "baseline-venv")
        scripts = {}
        for label, py in installs.items():
            script = base / f"memvault-{label}"
            script.write_text(f"#!{py}\n{LAUNCHER}")
            script.chmod(0o755)
            scripts[label] = str(script)
        vault = base / "vault"
        make_vault(vault, args.size)
        add_episodes(vault, args.episodes)
        # Each install reads its own copy of the vault: an index of another schema version would be rebuilt by
        # every call that follows a call of the other install.
        vaults = {label: vault if label == "now" else shutil.copytree(vault, base / f"vault-{label}", symlinks=True)
                  for label in scripts}
        cmds = {label: commands(v) for label, v in vaults.items()}
        for label, script in scripts.items():  # warm: index build, byte-code and page caches
            for argv in cmds[label].values():
                timed([script] + argv, ENV)
        times = {(label, name): [] for label in scripts for name in cmds["now"]}
        bare = []
        for _ in range(args.runs):
            bare.append(timed([installs["now"], "-c", "pass"], ENV, what="bare"))
            for name in cmds["now"]:
                for label, script in scripts.items():
                    times[(label, name)].append(timed([script] + cmds[label][name], ENV, what=f"{label} {name}"))
        print(f"{args.size} cards, {args.episodes} episodes, {args.runs} runs, whole-process p50 / p95 in ms")
        base_p50 = pct(bare, .5)
        print(f"bare python (-c pass): {base_p50 * 1000:.1f} / {pct(bare, .95) * 1000:.1f}")
        print(f"{'command':<10}" + "".join(f"{label:>22}{'x bare':>8}" for label in scripts))
        for name in cmds["now"]:
            row = "".join(f"{pct(times[(label, name)], .5) * 1000:>13.1f} / {pct(times[(label, name)], .95) * 1000:>6.1f}"
                          f"{pct(times[(label, name)], .5) / base_p50:>8.1f}" for label in scripts)
            print(f"{name:<10}{row}")
        # On a loaded machine the wall time mostly measures the wait for a core; CPU time hardly moves with it.
        cpu_bare = pct(CPU["bare"], .5)
        print(f"\nCPU (user + system) p50 in ms; bare python {cpu_bare * 1000:.1f}")
        print(f"{'command':<10}" + "".join(f"{label:>13}{'x bare':>8}" for label in scripts))
        for name in cmds["now"]:
            print(f"{name:<10}" + "".join(f"{pct(CPU[f'{label} {name}'], .5) * 1000:>13.1f}"
                                          f"{pct(CPU[f'{label} {name}'], .5) / cpu_bare:>8.1f}" for label in scripts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
