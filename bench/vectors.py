"""Vector store candidates for the dense layer, measured at 100,000 vectors of 384 dimensions.

    python bench/vectors.py [--n 100000] [--dim 384] [--queries 50] [--cold 5]

Stores (each built from the same seeded, clustered, unit-length vectors; top 10 by cosine):
  numpy-f32   brute force over a float32 matrix file, memory-mapped (what memvault ships)
  numpy-f16   the same matrix in float16 (half the file), widened to float32 block by block per query
  sqlite-vec  a vec0 virtual table (brute force in C); through apsw, because this Python's sqlite3 module
              cannot load extensions (enable_load_extension is missing from many builds)
  usearch     an HNSW graph (approximate), saved to a file and opened with view=True (memory-mapped); its
              default expansion, and usearch-ef256 with expansion_add = expansion_search = 256

Figures: build (seconds to write the store from vectors in memory), file size, query p50 in a warm process
(best of the repeated queries' median), query p50 of a cold process (a new Python that imports the library,
opens the store and answers one query; the page cache is warm, as after any earlier search), peak RSS of that
cold process (VmHWM: ru_maxrss would carry the parent's over exec), and recall@10 against exact search. Run on a shared 2-core machine: timings are noisy, compare
orders of magnitude. Needs numpy, apsw, sqlite-vec and usearch (`pip install numpy apsw sqlite-vec usearch`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COLD = r"""
import sys, time, json
t0 = time.perf_counter()
kind, path, n, dim, q = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
import numpy as np
qv = np.frombuffer(bytes.fromhex(q), dtype=np.float32)
if kind == "numpy-f32":
    m = np.memmap(path, dtype=np.float32, mode="r", shape=(n, dim))
    s = m @ qv
    top = np.argpartition(-s, 10)[:10]
elif kind == "numpy-f16":
    m = np.memmap(path, dtype=np.float16, mode="r", shape=(n, dim))
    s = np.concatenate([m[i:i + 8192].astype(np.float32) @ qv for i in range(0, n, 8192)])
    top = np.argpartition(-s, 10)[:10]
elif kind == "sqlite-vec":
    import apsw, sqlite_vec
    db = apsw.Connection(path)
    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    top = [r[0] for r in db.execute("SELECT rowid FROM v WHERE e MATCH ? AND k = 10", (qv.tobytes(),))]
else:
    from usearch.index import Index
    idx = Index.restore(path, view=True)
    if kind == "usearch-ef256":
        idx.expansion_search = 256
    top = idx.search(qv, 10).keys
dt = time.perf_counter() - t0
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print(json.dumps({"seconds": dt, "rss_mb": int(hwm) / 1024}))
"""


def make_vectors(n: int, dim: int, seed: int = 7):
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((256, dim)).astype(np.float32)
    data = centres[rng.integers(0, 256, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return data


def exact_top(data, q, k=10):
    import numpy as np

    s = data @ q
    top = np.argpartition(-s, k)[:k]
    return set(int(i) for i in top)


def build(kind: str, data, folder: Path) -> tuple[Path, float, object]:
    """Write the store; (path, seconds, a warm query function)."""
    import numpy as np

    n, dim = data.shape
    t0 = time.perf_counter()
    if kind.startswith("numpy"):
        dtype = np.float32 if kind == "numpy-f32" else np.float16
        path = folder / f"{kind}.bin"
        data.astype(dtype).tofile(path)
        with open(path, "rb") as fh:
            os.fsync(fh.fileno())
        secs = time.perf_counter() - t0
        m = np.memmap(path, dtype=dtype, mode="r", shape=(n, dim))

        def query(q):
            if dtype is np.float32:
                s = m @ q
            else:
                s = np.concatenate([m[i:i + 8192].astype(np.float32) @ q for i in range(0, n, 8192)])
            return set(int(i) for i in np.argpartition(-s, 10)[:10])
        return path, secs, query
    if kind == "sqlite-vec":
        import apsw
        import sqlite_vec

        path = folder / "vec.sqlite"
        db = apsw.Connection(str(path))
        db.enable_load_extension(True)
        db.load_extension(sqlite_vec.loadable_path())
        db.execute(f"CREATE VIRTUAL TABLE v USING vec0(e float[{dim}] distance_metric=cosine)")
        with db:
            db.executemany("INSERT INTO v(rowid, e) VALUES (?, ?)", ((i, data[i].tobytes()) for i in range(n)))
        secs = time.perf_counter() - t0

        def query(q):
            return set(r[0] for r in db.execute("SELECT rowid FROM v WHERE e MATCH ? AND k = 10", (q.tobytes(),)))
        return path, secs, query
    from usearch.index import Index

    path = folder / f"{kind}.idx"
    ef = 256 if kind == "usearch-ef256" else None
    idx = Index(ndim=dim, metric="cos", dtype="f32", **({"expansion_add": ef, "expansion_search": ef} if ef else {}))
    idx.add(np.arange(n), data)
    idx.save(str(path))
    secs = time.perf_counter() - t0
    view = Index.restore(str(path), view=True)
    if ef:
        view.expansion_search = ef

    def query(q):
        return set(int(k) for k in view.search(q, 10).keys)
    return path, secs, query


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--cold", type=int, default=5)
    ap.add_argument("--only", default="numpy-f32,numpy-f16,sqlite-vec,usearch,usearch-ef256")
    args = ap.parse_args()
    import numpy as np

    data = make_vectors(args.n, args.dim)
    rng = np.random.default_rng(11)
    queries = [data[i] + 0.3 * rng.standard_normal(args.dim).astype(np.float32) for i in rng.integers(0, args.n, args.queries)]
    queries = [(q / np.linalg.norm(q)).astype(np.float32) for q in queries]
    truth = [exact_top(data, q) for q in queries]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.only.split(","):
            path, secs, query = build(kind, data, Path(tmp))
            times, recall = [], []
            for q, t in zip(queries, truth):
                t0 = time.perf_counter()
                got = query(q)
                times.append(time.perf_counter() - t0)
                recall.append(len(got & t) / 10)
            cold = []
            for i in range(args.cold):
                out = subprocess.run([sys.executable, "-c", COLD, kind, str(path), str(args.n), str(args.dim),
                                      queries[i].tobytes().hex()], capture_output=True, text=True, check=True)
                cold.append(json.loads(out.stdout))
            size = sum(p.stat().st_size for p in Path(tmp).iterdir() if p.name.startswith(path.name))
            rows.append({"store": kind, "build_s": round(secs, 2), "size_mb": round(size / 2**20, 1),
                         "warm_p50_ms": round(1000 * statistics.median(times), 2),
                         "cold_p50_ms": round(1000 * statistics.median(c["seconds"] for c in cold), 1),
                         "cold_rss_mb": round(statistics.median(c["rss_mb"] for c in cold), 1),
                         "recall@10": round(statistics.mean(recall), 3)})
            print(json.dumps(rows[-1]), file=sys.stderr)
    print(f"{args.n} vectors x {args.dim} dims, {args.queries} warm queries, {args.cold} cold processes")
    print("| store | build s | file MB | warm p50 ms | cold p50 ms | cold RSS MB | recall@10 |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['store']} | {r['build_s']} | {r['size_mb']} | {r['warm_p50_ms']} | {r['cold_p50_ms']} |"
              f" {r['cold_rss_mb']} | {r['recall@10']} |")


if __name__ == "__main__":
    main()
