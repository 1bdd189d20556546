"""Search speed on generated vaults: `python bench/search.py [--sizes 1000,10000,100000] [--runs 10]`.

For each size it builds a vault of cards (~490 bytes each, half Chinese, 84 month folders, hub entities,
deterministic) under a temporary folder (or takes --existing) and prints, in one run:
- build: full index build in a fresh process (Index.refresh over every card, no index on disk; with tantivy
  installed and 5,000+ cards this includes building the tantivy list), and its peak RSS,
- reindex: the whole `memvault reindex` from nothing (index and every entity page), and its peak RSS,
- one new card: write a card, then the in-process refresh that indexes it (p50 of 10),
- search: whole-process `memvault search WORDS` for each of the 30 QUERIES (--runs calls each, interleaved, warm
  index) through the console script's entry point (memvault.__main__.main: the Typer-free path of cli/fast.py, what
  `memvault` runs), from a byte-compiled, non-editable install (see user_install); the Typer app's p50 for reference;
  with --fts5 the same searches with MEMVAULT_SEARCH_ENGINE=fts5 (no tantivy: memvault before issue 25),
- rg: whole-process `rg -l -i -e WORD …` over cards/ for the same words; per query the ratio of the two medians,
  and the median and the worst ratio over the 30 queries,
- same top-10: on how many queries the 10 hits are the same (ids, in order) with tantivy's candidates and FTS5's.
Goals of issue 25: at 100k search >= 8x faster than rg at the median and >= 4x at the worst query, p50 <= 60 ms
on a quiet machine; at 1M (`--sizes 1000000 --existing DIR`: generate the vault once, ~4 GB of small files)
build <= 120 s, search p50 <= 150 ms, peak RSS <= 1 GiB, one new card <= 50 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memvault.vault import codec  # noqa: E402
from memvault.model import Card  # noqa: E402

ZH = ("数据库备份迁移服务器容器配置网络端口证书域名日志监控告警磁盘内存缓存队列任务调度用户订单支付"
      "价格运费库存商品图片搜索索引小说章节人物线索结局视角码头灯塔雾港警察记者编辑平台连载读者")
SYLL = ["ka", "lo", "mi", "ter", "sun", "ber", "dol", "vex", "pra", "qui", "zan", "fo", "rin", "tas", "mor"]
# Entities: two of n/20 + 5 plain ones per card (~40 cards each), and in HUB_SHARE of the cards one hub, the k-th
# named with weight 1/k (at 100k cards "postgres" is named by ~5k cards: an entity hop must not sort them all).
HUBS = ["postgres", "docker", "caddy", "stripe", "queue", "backup", "alice", "homelab", "雾港", "林晚", "码头", "小说"]
HUB_WEIGHTS = [1 / (k + 1) for k in range(len(HUBS))]
HUB_SHARE = 0.15
# 30 queries: common and rare words, hubs and plain entities, Chinese, mixed, words no card holds.
QUERIES = ["postgres backup", "数据库 迁移", "kalomi vexter", "caddy certificate renewal",
           "docker deploy", "stripe queue", "postgres", "certificate", "kalomi", "vexter dolber",
           "码头 灯塔", "小说 章节", "警察 记者", "缓存 队列", "订单 支付", "ent-42", "ent-4242 backup",
           "sunmor prater", "deploy docker queue stripe", "雾港 码头 灯塔", "kaka kakan", "rinfo taster",
           "alice homelab", "数据库", "服务器 配置", "postgres 备份", "caddy 证书", "林晚 小说", "日志 监控 告警",
           "tasmor zanrin"]


def words(rng: random.Random, n: int) -> list[str]:
    vocab = [a + b + c for a in SYLL for b in SYLL for c in ("", "n", "s", "ter")]
    common = ["postgres", "backup", "caddy", "certificate", "renewal", "docker", "queue", "stripe", "deploy"]
    return [rng.choice(common) if rng.random() < 0.05 else vocab[min(int(rng.paretovariate(1.1)), len(vocab)) - 1]
            for _ in range(n)]


def make_vault(root: Path, n: int, check_every: int = 997) -> None:
    """The deterministic test vault. Card files are formatted here (codec.card_to_text runs YAML and redaction:
    ~1M cards took hours on a loaded machine) and every `check_every`-th card, and any title outside the plain
    shapes below, goes through codec.card_to_text itself: a generated file differs from what memvault writes
    only if this function is wrong, and then it stops."""
    rng = random.Random(n)
    shutil.copytree(ROOT / "vault-template", root)
    months = [f"{2020 + m // 12}-{m % 12 + 1:02d}" for m in range(84)]
    for month in months:
        (root / "cards" / month).mkdir(parents=True, exist_ok=True)
    for i in range(n):
        month = months[i % 84]
        cid = f"c-{month.replace('-', '')}{(i // 84) % 28 + 1:02d}-{i:06x}"
        if i % 2:
            title = "".join(rng.choice(ZH) for _ in range(10))
            body = "".join(rng.choice(ZH) for _ in range(120))
        else:
            title = " ".join(words(rng, 6)).capitalize()
            body = " ".join(words(rng, 55)) + "."
        ents = {f"ent-{rng.randrange(n // 20 + 5)}" for _ in range(2)}
        if rng.random() < HUB_SHARE:  # a hub: a thing many cards name (Zipf over HUBS)
            ents.add(rng.choices(HUBS, HUB_WEIGHTS)[0])
        ents = tuple(sorted(ents))
        text = _card_text(cid, title, body, f"p{i % 7}", ents, month, i)
        if text is None or i % check_every == 0:
            card = Card(id=cid, kind="fact", title=title, body=body, project=f"p{i % 7}", entities=ents,
                        created=f"{month}-01T10:00:00Z", valid_from=f"{month}-01",
                        source={"kind": "distill", "run": "r-1", "episodes": [f"ep-{i:08d}"]})
            slow = codec.card_to_text(card)
            if text is not None and text != slow:
                raise AssertionError(f"bench/search.py formats card {cid} unlike codec.card_to_text")
            text = slow
        with open(root / "cards" / month / f"{cid}.md", "w", encoding="utf-8") as fh:
            fh.write(text)


_PLAIN_TITLE = re.compile(r"[A-Z][a-z]+(?: [a-z]+)+|[" + ZH + "]+")
_PLAIN_ENTITY = re.compile(r"ent-[0-9]+|[a-z]+|[" + "".join(h for h in HUBS if not h.isascii()) + "]+")


def _card_text(cid: str, title: str, body: str, project: str, ents: tuple[str, ...], month: str, i: int) -> str | None:
    """What codec.card_to_text writes for a generated card, or None for a title YAML might quote."""
    if not _PLAIN_TITLE.fullmatch(title) or not all(_PLAIN_ENTITY.fullmatch(e) for e in ents):
        return None
    return (f"---\nid: {cid}\nkind: fact\ntitle: {title}\nproject: {project}\nentities: [{', '.join(ents)}]\n"
            f"created: {month}-01T10:00:00Z\nvalid_from: {month}-01\nvalid_to: null\nstatus: active\n"
            f"confidence: user_stated\nsubject: null\nsource: {{kind: distill, run: r-1, episodes: [ep-{i:08d}]}}\n"
            f"supersedes: []\nsuperseded_by: []\ntags: []\n---\n{body}\n")


# Measured as a user's install runs: a non-editable copy of memvault in its own venv, byte-compiled as pip does
# on install. This checkout's .venv has an editable install (its import finder costs ~10-20 ms at every start-up)
# and PYTHONDONTWRITEBYTECODE set (every call would compile memvault's sources again); neither is what a user
# runs. Dependencies come from this checkout's .venv through a .pth line (a plain path: its own .pth files,
# such as the editable finder, are not run).
ENV = dict(os.environ)


def user_install(base: Path, src: Path = ROOT / "memvault", name: str = "user-venv") -> str:
    """A venv holding a byte-compiled copy of the memvault package at `src`; returns its python."""
    import site
    import venv

    home = base / name
    venv.create(home, with_pip=False)
    py = home / "bin" / "python"
    purelib = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    shutil.copytree(src, purelib / "memvault", ignore=shutil.ignore_patterns("__pycache__"))
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (purelib / "memvault-deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run([str(py), "-m", "compileall", "-q", str(purelib / "memvault")], check=True)
    return str(py)


def timed_rss(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS in MiB of the largest process the command ran (its workers included)."""
    import resource

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    seconds = time.perf_counter() - start
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(usage.ru_maxrss, children) / 1024


CPU: dict[str, list[float]] = {}  # what= -> CPU seconds (user + system) of each timed process


def timed(cmd: list[str], env=None, what: str | None = None) -> float:
    """Wall seconds of the whole command; with `what`, its CPU seconds go to CPU[what] (on a loaded machine the
    wall time mostly measures waiting for a core; the CPU time hardly moves with the load)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if what:
        CPU.setdefault(what, []).append(usage.ru_utime + usage.ru_stime)
    return seconds


# What the console script runs (`memvault = "memvault.__main__:main"`), and the Typer app alone for reference.
FAST_LAUNCHER = """from memvault.__main__ import main
main()
"""
TYPER_LAUNCHER = "from memvault.cli.app import app\napp(prog_name='memvault')\n"


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p * (len(values) - 1))))]


def bench(size: int, runs: int, base: Path, user_py: str, existing: Path | None = None, fts5: bool = False,
          quick: bool = False, rg_too: bool = True) -> dict:
    root = existing or base / f"v{size}"
    t = time.perf_counter()
    if existing is None:
        make_vault(root, size)
    gen = time.perf_counter() - t
    out: dict = {"size": size, "generate_s": gen}
    if not quick:
        shutil.rmtree(root / ".memvault", ignore_errors=True)  # build from nothing, also on an --existing vault
        out["build_s"], out["build_mib"] = timed_rss([
            user_py, "-c", "import sys; from pathlib import Path; from memvault.search.index import Index; "
            "Index(Path(sys.argv[1])).refresh(full=True)", str(root)])
        # the whole command a person runs after a clone: index from nothing plus every entity page
        shutil.rmtree(root / ".memvault", ignore_errors=True)
        out["reindex_s"], out["reindex_mib"] = timed_rss([str(base / "memvault-typer"), "--vault", str(root),
                                                          "reindex"])
    typer_cmd = [str(base / "memvault-typer"), "--vault", str(root), "search"]
    cmd = [str(base / "memvault-fast"), "--vault", str(root), "search"]
    fts5_env = {**ENV, "MEMVAULT_SEARCH_ENGINE": "fts5"}
    for q in QUERIES:  # warm: settings cache, page cache, byte-code cache
        timed(cmd + q.split(), ENV)
        timed(typer_cmd + q.split(), ENV)
    search_t: dict[str, list[float]] = {q: [] for q in QUERIES}
    fts5_t: dict[str, list[float]] = {q: [] for q in QUERIES}
    rg_t: dict[str, list[float]] = {q: [] for q in QUERIES}
    typer_t: list[float] = []
    for _ in range(runs):
        for q in QUERIES:  # interleaved: a burst of load on the shared machine hits all of them alike
            search_t[q].append(timed(cmd + q.split(), ENV, what=f"search {size}"))
            if fts5:
                fts5_t[q].append(timed(cmd + q.split(), fts5_env, what=f"fts5 {size}"))
            if not quick:
                typer_t.append(timed(typer_cmd + q.split(), ENV))
            if rg_too:
                rg = ["rg", "-l", "-i"]
                for w in q.split():
                    rg += ["-e", w]
                rg_t[q].append(timed(rg + [str(root / "cards")], what=f"rg {size}"))
    # per query: the median of its runs; the ratio rg / search of each query, then their median and worst
    med = {q: pct(v, .5) for q, v in search_t.items()}
    ratios = sorted((pct(rg_t[q], .5) / med[q], q) for q in QUERIES) if rg_too else [(float("nan"), "-")]
    out.update(search_p50=pct([x for v in search_t.values() for x in v], .5),
               search_p95=pct([x for v in search_t.values() for x in v], .95),
               slowest=max((m, q) for q, m in med.items()),
               rg_p50=pct([x for v in rg_t.values() for x in v], .5) if rg_too else float("nan"),
               ratio_median=pct([r for r, _ in ratios], .5), ratio_worst=ratios[0],
               typer_p50=pct(typer_t, .5) if typer_t else float("nan"))
    if fts5:
        out["fts5_wall_p50"] = pct([x for v in fts5_t.values() for x in v], .5)
    if fts5 and rg_too:
        fmed = {q: pct(v, .5) for q, v in fts5_t.items()}
        out.update(fts5_p50=pct([x for v in fts5_t.values() for x in v], .5),
                   fts5_ratio_median=pct([pct(rg_t[q], .5) / fmed[q] for q in QUERIES], .5),
                   fts5_ratio_worst=min(pct(rg_t[q], .5) / fmed[q] for q in QUERIES))
    out["same_top10"] = same_top10(root, user_py)
    out["new_card_p50"] = new_card(root)
    if existing is None:
        shutil.rmtree(root)
    return out


SAME_TOP10 = """import json, os, sys
from pathlib import Path
from memvault.errors import NoMatch
from memvault.search import service
root, queries = Path(sys.argv[1]), json.loads(sys.argv[2])
opts = service.options_from({})
out = []
for q in queries:
    try:
        out.append([h.id for h in service.run_search(root, q, opts).hits])
    except NoMatch:
        out.append([])
print(json.dumps(out))
"""


def same_top10(root: Path, user_py: str) -> int:
    """On how many of the queries the first 10 hits (ids, in order) are the same with tantivy's candidates as
    with FTS5's (both re-scored by memvault's BM25F)."""
    got = []
    for engine in ("auto", "fts5"):
        done = subprocess.run([user_py, "-c", SAME_TOP10, str(root), json.dumps(QUERIES)], capture_output=True,
                              text=True, check=True, env={**ENV, "MEMVAULT_SEARCH_ENGINE": engine})
        got.append(json.loads(done.stdout))
    return sum(a == b for a, b in zip(*got))


def new_card(root: Path) -> float:
    """One new card, in process: what a search pays the first time after a card arrives (p50 of 10)."""
    from memvault.search.index import Index

    new_t = []
    with Index(root) as idx:
        idx.refresh()
        for k in range(10):
            card = Card(id=f"c-20260101-n{k:05d}", kind="fact", title=f"New card {k} about zanfo",
                        body="fresh text 新的卡片", created="2026-01-01T00:00:00Z")
            folder = root / "cards" / "2026-01"
            folder.mkdir(exist_ok=True)
            (folder / f"{card.id}.md").write_text(codec.card_to_text(card), encoding="utf-8")
            t = time.perf_counter()
            report = idx.refresh()
            new_t.append(time.perf_counter() - t)
            assert report.cards_added == 1
        for k in range(10):  # leave a --existing vault as it was
            (root / "cards" / "2026-01" / f"c-20260101-n{k:05d}.md").unlink()
        idx.refresh()
    return pct(new_t, .5)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--existing", type=Path, default=None,
                    help="a vault make_vault generated before (e.g. for 1M cards, ~4 GB): measure it instead of "
                         "generating one; --sizes then names its size")
    ap.add_argument("--fts5", action="store_true", help="also time every search with MEMVAULT_SEARCH_ENGINE=fts5 "
                    "(the fallback without tantivy, and memvault before it) in the same run")
    ap.add_argument("--quick", action="store_true", help="no build, reindex or Typer path (an --existing vault's index "
                    "is used as it is): searches, rg and one new card")
    ap.add_argument("--no-rg", action="store_true", help="no rg runs (at 1M cards one rg takes 30-60 s on a loaded "
                    "machine; the 1M goals name no ratio)")
    args = ap.parse_args()
    if shutil.which("rg") is None and not args.no_rg:
        print("ripgrep (rg) is missing: install it with `apt-get install -y ripgrep` and run again", file=sys.stderr)
        return 2
    print(f"{len(QUERIES)} queries, {args.runs} runs each, interleaved; whole-process times (ms); rg/search: per "
          f"query rg -l p50 / search p50, median and worst over the queries")
    with tempfile.TemporaryDirectory() as tmp:
        user_py = user_install(Path(tmp))
        for name, body in (("memvault-fast", FAST_LAUNCHER), ("memvault-typer", TYPER_LAUNCHER)):
            script = Path(tmp) / name
            script.write_text(f"#!{user_py}\n{body}")
            script.chmod(0o755)
        for size in (int(s) for s in args.sizes.split(",")):
            r = bench(size, args.runs, Path(tmp), user_py, args.existing, args.fts5, args.quick, not args.no_rg)
            print(f"\n{r['size']} cards")
            if not args.quick:
                print(f"  build {r['build_s']:.1f} s (peak {r['build_mib']:.0f} MiB); reindex {r['reindex_s']:.1f} s "
                      f"(peak {r['reindex_mib']:.0f} MiB)")
            print(f"  one new card {r['new_card_p50'] * 1000:.1f} ms")
            print(f"  search p50 {r['search_p50'] * 1000:.1f}, p95 {r['search_p95'] * 1000:.1f}, slowest query "
                  f"{r['slowest'][0] * 1000:.1f} ({r['slowest'][1]}); typer p50 {r['typer_p50'] * 1000:.1f}; "
                  f"rg -l p50 {r['rg_p50'] * 1000:.1f}")
            print(f"  rg/search: median {r['ratio_median']:.1f}x, worst {r['ratio_worst'][0]:.1f}x "
                  f"({r['ratio_worst'][1]}); same top-10 with FTS5's candidates: {r['same_top10']}/{len(QUERIES)}")
            cpu = {k.split()[0]: pct(v, .5) * 1000 for k, v in CPU.items() if k.endswith(f" {size}")}
            if args.fts5 and args.no_rg:
                print(f"  FTS5 (no tantivy): search p50 {r['fts5_wall_p50'] * 1000:.1f}")
            print(f"  CPU time (user + system) p50: search {cpu['search']:.1f}, rg -l {cpu.get('rg', float('nan')):.1f}"
                  + (f", FTS5 search {cpu['fts5']:.1f}" if "fts5" in cpu else ""))
            if args.fts5 and not args.no_rg:
                print(f"  FTS5 (no tantivy): search p50 {r['fts5_p50'] * 1000:.1f}; rg/search median "
                      f"{r['fts5_ratio_median']:.1f}x, worst {r['fts5_ratio_worst']:.1f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
