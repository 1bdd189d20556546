"""MCP start-up and search over one session: `python bench/mcp.py [--cards 10000] [--calls 200] [--warmup 20]
[--starts 10] [--startup-only]`.

Start-up (issue 23, goal <= 0.5 s to the first answer): `memvault mcp` started --starts times as a real process on
the same vault (its search index already built), driven over its pipes by a plain JSON-RPC client (no SDK in this
process's way): the median wall time from the spawn to the answer of `initialize`, of `tools/list`, and of a first
`search` call, and the server's CPU time (user + system, from /proc) when that search is answered.

Builds a generated vault (bench/search.py's make_vault: ~490-byte cards, half Chinese), starts `memvault mcp` as
a real subprocess over stdio, and drives it with the SDK's own client (ClientSession): a few warm-up calls (the
first builds the search index), then --calls sequential `search` calls cycling through bench/search.py's queries.
Prints the per-call round trip (p50, p95, max, as the client sees it) and the server process's resident memory
(VmRSS from /proc) after warm-up and at the end. Goals (issue 13): p50 <= 20 ms at 10k cards, RSS growth after
warm-up <= 10 %. Needs the extra: pip install -e '.[mcp]'.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# This file is named like the SDK: drop its own folder from the path so `import mcp` finds the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

import importlib.util  # noqa: E402

import anyio  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_search", ROOT / "bench" / "search.py")
bench_search = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_search)
QUERIES, make_vault = bench_search.QUERIES, bench_search.make_vault


def children_cpu_s() -> float:
    """CPU time (user + system) used so far by this process's child processes: unlike wall time, it does not
    grow when other programs share the CPUs."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == os.getpid():
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def children_rss_kb() -> dict[int, int]:
    """VmRSS of this process's child processes (the server stdio_client started), by pid."""
    out = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if int(fields.get("PPid", "0").strip()) == os.getpid() and "VmRSS" in fields:
            out[int(status.parent.name)] = int(fields["VmRSS"].split()[0])
    return out


async def run(vault: Path, calls: int, warmup: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "memvault", "--vault", str(vault), "mcp",
                                                                 "--read-only"], env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                start = time.perf_counter()
                first = await session.call_tool("search", {"query": QUERIES[0]})
                first_s = time.perf_counter() - start
                assert not first.is_error, first.content
                for i in range(warmup):
                    await session.call_tool("search", {"query": QUERIES[i % len(QUERIES)]})
                rss_warm = sum(children_rss_kb().values())
                cpu_start = children_cpu_s()
                times, hits = [], 0
                for i in range(calls):
                    start = time.perf_counter()
                    res = await session.call_tool("search", {"query": QUERIES[i % len(QUERIES)], "limit": 10})
                    times.append(time.perf_counter() - start)
                    assert not res.is_error
                    hits += res.structured_content["count"]
                cpu = children_cpu_s() - cpu_start
                rss_end = sum(children_rss_kb().values())
    times.sort()
    return {"first_s": first_s, "p50": statistics.median(times) * 1000, "p95": times[int(len(times) * 0.95)] * 1000,
            "max": times[-1] * 1000, "server_cpu": cpu / calls * 1000, "rss_warm": rss_warm, "rss_end": rss_end,
            "hits": hits, "service_p50": service_p50(vault, calls)}


def startup(vault: Path, starts: int) -> dict:
    """Median wall seconds from the spawn to each first answer, and the server's CPU seconds at the end."""
    import json
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    calls = [("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "bench", "version": "1"}}),
             ("tools/list", {}), ("tools/call", {"name": "search", "arguments": {"query": QUERIES[0]}})]
    runs: list[list[float]] = []
    for _ in range(starts):
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault), "mcp", "--read-only"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        marks = []
        for i, (method, params) in enumerate(calls, 1):
            proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
                              + "\n").encode())
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline())
            assert reply.get("id") == i and "result" in reply, reply
            marks.append(time.perf_counter() - t0)
            if i == 1:
                stat = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
                first_cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
            if i == 1:
                proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        stat = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        marks += [first_cpu, (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")]
        proc.stdin.close()
        proc.wait(timeout=30)
        runs.append(marks)
    return {key: statistics.median(r[i] for r in runs)
            for i, key in enumerate(("initialize", "tools_list", "first_search", "cpu_initialize", "cpu"))}


def service_p50(vault: Path, calls: int) -> tuple[float, float]:
    """The same calls in this process, straight to memvault.mcp.tools.search (the service, guard and
    rendering without the SDK and the pipe): p50 wall and CPU ms. The rest of a round trip is the protocol's."""
    from memvault.mcp import tools

    ctx = tools.Ctx(vault, dict(os.environ))
    tools.search(ctx, QUERIES[0])
    times, cpu = [], []
    for i in range(calls):
        start, start_cpu = time.perf_counter(), time.thread_time()
        tools.search(ctx, QUERIES[i % len(QUERIES)], limit=10)
        times.append(time.perf_counter() - start)
        cpu.append(time.thread_time() - start_cpu)
    return statistics.median(times) * 1000, statistics.median(cpu) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cards", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--startup-only", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        make_vault(vault, args.cards)
        from memvault.mcp import tools

        tools.search(tools.Ctx(vault, {}), QUERIES[0])  # builds the index: start-up is measured without it
        s = startup(vault, args.starts)
        print(f"start-up, median of {args.starts} starts ({args.cards} cards, index built): initialize answered "
              f"{s['initialize']:.2f} s, tools/list {s['tools_list']:.2f} s, first search {s['first_search']:.2f} s "
              f"after the spawn; server CPU {s['cpu_initialize']:.2f} s at the first answer, {s['cpu']:.2f} s at the "
              f"first search  (goal: first answer <= 0.5 s); load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        if args.startup_only:
            return 0 if s["tools_list"] <= 0.5 else 1
        r = anyio.run(run, vault, args.calls, args.warmup)
    growth = (r["rss_end"] - r["rss_warm"]) / r["rss_warm"] * 100 if r["rss_warm"] else float("nan")
    print(f"{args.cards} cards, {args.calls} sequential search calls over one stdio session "
          f"(first call, building the index: {r['first_s']:.1f} s; {r['hits']} hits in all)")
    print(f"per call: p50 {r['p50']:.1f} ms, p95 {r['p95']:.1f} ms, max {r['max']:.1f} ms  (goal p50 <= 20 ms)")
    print(f"server CPU time per call (mean): {r['server_cpu']:.1f} ms")
    print(f"the same calls in-process (tools.search, no SDK): p50 {r['service_p50'][0]:.1f} ms wall, "
          f"{r['service_p50'][1]:.1f} ms CPU; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"server RSS: {r['rss_warm'] / 1024:.1f} MiB after warm-up, {r['rss_end'] / 1024:.1f} MiB at the end, "
          f"growth {growth:+.1f} %  (goal <= 10 %)")
    return 0 if r["p50"] <= 20 and growth <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
