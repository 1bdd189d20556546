"""Capture speed and memory: turns/s for 20,000 mixed zh/en turns, peak RSS for a 50 MB line.

    python bench/capture.py [--turns 20000]

Runs the real `memvault` command in a subprocess on a throw-away vault and prints its figures.
Goal on a 2-core machine: >= 2,000 turns/s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEMVAULT = [sys.executable, "-m", "memvault"]
EN = ("we decided to move the sync workers to postgres because sqlite serialises writers; the queue stays on "
      "redis for now and the beta ships on the fifteenth").split()
ZH = list("我们决定把同步任务迁移到数据库因为写入并发太高队列暂时保留发布日期定在下个月中旬小说第三章需要重写主角的动机")


def make_log(path: Path, turns: int) -> int:
    rnd = random.Random(42)
    size = 0
    with open(path, "w", encoding="utf-8") as fh:
        for t in range(turns):
            session = f"bench-{t // 500}"
            if t % 2:
                user = "".join(rnd.choices(ZH, k=rnd.randint(20, 80)))
                reply = "".join(rnd.choices(ZH, k=rnd.randint(60, 400)))
            else:
                user = " ".join(rnd.choices(EN, k=rnd.randint(8, 30)))
                reply = " ".join(rnd.choices(EN, k=rnd.randint(30, 150)))
            ts = f"2026-{1 + t % 12:02d}-{1 + t % 28:02d}T{t % 24:02d}:{t % 60:02d}:00Z"
            for role, text in (("user", user), ("assistant", reply)):
                line = json.dumps({"role": role, "content": text, "session": session, "ts": ts},
                                  ensure_ascii=False) + "\n"
                size += len(line.encode())
                fh.write(line)
    return size


def run(args: list[str], stdin_path: Path | None = None) -> tuple[float, int, str]:
    """Wall time, peak RSS (KiB) of that process alone, stdout."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if stdin_path:
        stdin.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"memvault failed: {' '.join(args)}")
    return wall, usage.ru_maxrss, out.decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20000)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memvault-bench-") as tmp:
        tmp = Path(tmp)
        vault = tmp / "vault"
        subprocess.run([*MEMVAULT, "init", str(vault)], check=True, capture_output=True)
        log = tmp / "chat.jsonl"
        size = make_log(log, opts.turns)
        wall, peak, out = run([*MEMVAULT, "--vault", str(vault), "capture", "--json", str(log)])
        new = json.loads(out)["new"]
        print(f"capture {opts.turns} mixed zh/en turns ({size / 1e6:.1f} MB JSONL), whole process:")
        print(f"  {wall:.2f} s, {new / wall:,.0f} turns/s, peak RSS {peak / 1024:.0f} MiB, {new} new")
        wall2, _, out2 = run([*MEMVAULT, "--vault", str(vault), "capture", "--json", str(log)])
        print(f"  again (all already stored): {wall2:.2f} s, {json.loads(out2)['already_stored']} already stored")

        huge = tmp / "huge.jsonl"
        with open(huge, "wb") as fh:
            fh.write(b'{"role":"user","content":"a question before the huge line","session":"h"}\n')
            fh.write(b'{"role":"assistant","session":"h","content":"')
            block = b"x" * (1 << 20)
            for _ in range(50):
                fh.write(block)
            fh.write(b'"}\n{"role":"assistant","content":"an answer after it","session":"h"}\n')
        wall3, peak3, _ = run([*MEMVAULT, "--vault", str(vault), "capture", "--json"], stdin_path=huge)
        _, base, _ = run([*MEMVAULT, "--vault", str(vault), "stats", "--json"])
        print(f"50 MB single line on stdin: {wall3:.2f} s, peak RSS {peak3 / 1024:.0f} MiB "
              f"(a `memvault stats` process: {base / 1024:.0f} MiB)")


if __name__ == "__main__":
    main()
