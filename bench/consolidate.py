"""Consolidation on a generated vault: `python bench/consolidate.py [--cards 20000] [--keep DIR]`.

Builds (deterministically, seed 14, under a temporary folder) a vault of `--cards` cards in 3 projects (shop,
blog, novel), half Chinese: 40 entities per project, each with 5 topic words; most cards are SMALL (a title naming
the entity and a topic word, a body of one or two sentences) of kind fact, event, decision, preference or rule, a
few are long notes or state cards, and their dates spread over the year before NOW (2026-12-01), so about three
quarters are older than 90 days. Then it measures, with the clock pinned at NOW:

(a) distinct facts per pack: `context --budget 2000 --project P` (in-process, views.context.build_context) for a
    fixed list of 36 queries (an entity and one of its topic words, "<name> <topic>", zh and en, 12 per project).
    A fact is a card that is neither a synopsis nor a folded card: the pack holds it when its id appears in the
    pack text, on its own line or cited on a line of a synopsis or of a folded card (a folded card's line may be
    cut by the pack's body cap: ids cut off are not counted). Reported: the median (and mean) over the queries.
(b) own eval R@5: eval/run.py's questions on eval/fixture (copied), before and after the same consolidate (clock at
    NOW, so every fixture card is older than 90 days). A hit on a folded card counts at its rank for every card it
    folds (it lists them, and `show` gives each one's full text); any other hit counts as itself.
(c) seconds of one full `consolidate` over the 20k-card vault, in-process (best of --repeat fresh copies; the
    machine is shared, so timings are noisy).
    Also reported (added with the folding, so not frozen before it): the median of ON-TOPIC facts, facts whose
    card title holds the query's topic word (a fold lists all the entity's cards of one kind, on topic or not).
Columns: `none` (the vault as generated), `no-fold` (`memvault consolidate --no-fold`: the synopsis only),
`consolidate` (what `memvault consolidate` does by default: fold, then the synopsis).
Targets (issue 14): median distinct facts >= +30 %, own eval R@5 not lower, consolidate <= 30 s.
The generator, the queries and the fact count were committed before the folding existed.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.conflicts import VOCAB, ZH, Gen, workdir  # noqa: E402  (the 20k-card generator of bench/conflicts.py)

NOW = "2026-12-01T12:00:00Z"
PROJECTS = ("shop", "blog", "novel")
TOPICS_EN = ["backup", "billing", "latency", "migration", "release", "pricing", "outage", "schema", "cache",
             "audit", "chapter", "plot", "review", "budget", "traffic"]
TOPICS_ZH = ["备份", "账单", "延迟", "迁移", "发布", "定价", "故障", "结构", "缓存", "审计", "章节", "情节", "评审",
             "预算", "流量"]
SMALL_KINDS = ("fact", "fact", "fact", "event", "event", "decision", "decision", "preference", "rule")
ID = re.compile(r"\bc-\d{8}-[0-9a-f]{6,64}\b")


def _day(gen: Gen, days_back: int) -> str:
    import datetime as dt

    return (dt.date(2026, 12, 1) - dt.timedelta(days=days_back)).isoformat()


def build(root: Path, n: int, seed: int = 14) -> list[tuple[str, str]]:
    """Write the vault; return the (project, query) list."""
    gen = Gen(seed)
    rng = gen.rng
    entities = []  # (project, slug, name, zh, topics)
    for p_i, project in enumerate(PROJECTS):
        for e in range(40):
            zh = e % 2 == 0
            if zh:
                name = "".join(rng.choice(ZH) for _ in range(3)) + f"{p_i}{e}号"
                slug = f"zh-{p_i}-{e}"
            else:
                name = f"{rng.choice(VOCAB)}-{rng.choice(VOCAB)}"
                slug = name
            topics = rng.sample(TOPICS_ZH if zh else TOPICS_EN, 5)
            entities.append((project, slug, name, zh, topics))
    while len(gen.cards) < n:
        project, slug, name, zh, topics = entities[rng.randrange(len(entities))]
        day = _day(gen, rng.randrange(0, 365))
        topic = rng.choice(topics)
        ents = (slug,)
        if rng.random() < 0.1:  # a card naming a second entity of its project
            other = rng.choice([e for e in entities if e[0] == project and e[1] != slug])
            ents = (slug, other[1])
        r = rng.random()
        if r < 0.06:  # a long note: never small
            kind = "fact"
            title = f"{name}{topic}长记录" if zh else f"{name} {topic} long note"
            body = ("".join(rng.choice(ZH) for _ in range(420)) if zh
                    else " ".join(rng.choice(VOCAB) for _ in range(160)))
            gen.add(kind=kind, title=title, body=body, project=project, entities=ents, day=day)
        elif r < 0.1:  # a state card (a current value, not folded)
            fld = rng.choice(("版本", "负责人", "端口") if zh else ("version", "owner", "port"))
            value = "".join(rng.choice(ZH) for _ in range(3)) if zh else rng.choice(VOCAB)
            gen.add(kind="state", title=f"{name} {fld}: {value}", project=project, entities=ents, subject=name,
                    field=fld, value=value, day=day)
        else:
            kind = rng.choice(SMALL_KINDS)
            if zh:
                title = f"{name}{topic}{''.join(rng.choice(ZH) for _ in range(rng.randrange(6, 12)))}"
                body = "".join(rng.choice(ZH) for _ in range(rng.randrange(20, 60))) + "。"
            else:
                words = " ".join(rng.choice(VOCAB) for _ in range(rng.randrange(3, 6)))
                title = f"{name} {topic} {words}"
                body = " ".join(rng.choice(VOCAB) for _ in range(rng.randrange(10, 25))).capitalize() + "."
            gen.add(kind=kind, title=title, body=body, project=project, entities=ents, day=day)
    gen.write(root)
    ents_dir = root / "entities"
    ents_dir.mkdir(exist_ok=True)
    for _project, slug, name, _zh, _topics in entities:
        (ents_dir / f"{slug}.md").write_text(f"---\nname: {json.dumps(name, ensure_ascii=False)}\n---\n",
                                             encoding="utf-8")
    queries = []
    for p_i, project in enumerate(PROJECTS):
        mine = [e for e in entities if e[0] == project]
        for k in range(12):
            _p, _slug, name, zh, topics = mine[(k * 3) % len(mine)]
            queries.append((project, f"{name}{topics[k % 5]}" if zh else f"{name} {topics[k % 5]}"))
    return queries


def facts_in(vault, pack_text: str, containers: set[str], known) -> set[str]:
    """Distinct fact cards whose id is in the pack text (module docstring)."""
    return {cid for cid in ID.findall(pack_text) if cid in known and cid not in containers}


def containers_of(vault) -> tuple[set[str], dict[str, str]]:
    """(ids of synopsis and folded cards, title of every card by id)."""
    cards = vault.cards(problems=[])
    boxes = {c.id for c in cards if c.kind == "synopsis" or c.source.get("kind") == "fold"}
    return boxes, {c.id: c.title for c in cards}


def topic_of(query: str) -> str:
    return next(t for t in [*TOPICS_EN, *TOPICS_ZH] if query.endswith(t))


def pack_facts(root: Path, queries: list[tuple[str, str]]) -> tuple[list[int], list[int]]:
    from memvault.errors import NoMatch
    from memvault.vault.store import Vault
    from memvault.views.context import build_context

    vault = Vault.open(root, {"MEMVAULT_NOW": NOW})
    boxes, known = containers_of(vault)
    out, on_topic = [], []
    for project, query in queries:
        try:
            pack = build_context(vault, query, budget=2000, project=project)
        except NoMatch:
            out.append(0)
            on_topic.append(0)
            continue
        facts = facts_in(vault, pack.pack, boxes, known)
        out.append(len(facts))
        on_topic.append(sum(topic_of(query) in known[cid] for cid in facts))
    return out, on_topic


def run_consolidate(root: Path, **kw) -> float:
    from memvault.distill.consolidate import consolidate
    from memvault.vault.store import Vault

    vault = Vault.open(root, {"MEMVAULT_NOW": NOW})
    t0 = time.perf_counter()
    consolidate(vault, now=lambda: NOW, **kw)
    return time.perf_counter() - t0


def eval_r5(root: Path) -> dict:
    """Own eval on a vault folder: R@1, R@5, MRR and negative false positives, where a hit on a folded card
    covers, at its rank, every card it folds."""
    sys.path.insert(0, str(ROOT / "eval"))
    import run as evalrun  # eval/run.py

    from memvault.vault.store import Vault

    folded = {c.id: set(c.supersedes) for c in Vault.open(root, {}).cards(problems=[])
              if c.source.get("kind") == "fold"}
    ask = evalrun.engine(root)
    rows = []  # (set, rank or None, false positive or None)
    for q in evalrun.load_questions(ROOT / "eval" / "questions.jsonl"):
        got = ask(q["query"])
        group = "hard" if q["type"] in evalrun.HARD_TYPES else "q01-q93"
        if not q["expect"]:
            rows.append((group, None, bool(got)))
            continue
        want = set(q["expect"])
        rows.append((group, next((i + 1 for i, cid in enumerate(got) if want & ({cid} | folded.get(cid, set()))),
                                 None), None))

    def figures(mine: list) -> dict:
        pos = [r for _g, r, f in mine if f is None]
        neg = [f for _g, _r, f in mine if f is not None]
        n = len(pos)
        return {"r1": round(sum(r == 1 for r in pos) / n, 3), "r5": round(sum(bool(r) and r <= 5 for r in pos) / n, 3),
                "mrr": round(sum(1 / r for r in pos if r) / n, 3), "neg_fp": round(sum(neg) / max(1, len(neg)), 3)}

    out = {"all": figures(rows), "folded_cards": len(folded)}
    for group in ("q01-q93", "hard"):
        out[group] = figures([r for r in rows if r[0] == group])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=1, help="best of N timings of the full consolidate")
    ap.add_argument("--keep", help="build the vaults in this folder and keep them")
    args = ap.parse_args()
    with workdir(args.keep, "mv-consolidate-") as base:
        gen_root = base / "none"
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        queries = build(gen_root, args.cards)
        out = {"cards": args.cards, "queries": len(queries), "now": NOW}
        names = ("none", "no-fold", "consolidate")
        columns: dict[str, dict] = {}
        facts, on_topic = {}, {}
        facts["none"], on_topic["none"] = pack_facts(gen_root, queries)
        nofold = base / "no-fold"
        shutil.copytree(gen_root, nofold)
        secs_nofold = run_consolidate(nofold, fold=False)
        facts["no-fold"], on_topic["no-fold"] = pack_facts(nofold, queries)
        secs = []
        for i in range(max(1, args.repeat)):
            dest = base / f"consolidate-{i}"
            shutil.copytree(gen_root, dest)
            secs.append(run_consolidate(dest))
        facts["consolidate"], on_topic["consolidate"] = pack_facts(base / "consolidate-0", queries)
        rerun = run_consolidate(base / "consolidate-0")
        for name in names:
            columns[name] = {"median_facts": statistics.median(facts[name]),
                             "mean_facts": round(statistics.mean(facts[name]), 1),
                             "median_on_topic": statistics.median(on_topic[name])}
        columns["no-fold"]["seconds"] = round(secs_nofold, 2)
        columns["consolidate"]["seconds"] = round(min(secs), 2)
        columns["consolidate"]["rerun_seconds"] = round(rerun, 2)
        for name in names:
            fx = base / f"fixture-{name}"
            shutil.copytree(ROOT / "eval" / "fixture", fx)
            if name != "none":
                run_consolidate(fx, fold=name == "consolidate")
            columns[name]["eval"] = eval_r5(fx)
        gain = columns["consolidate"]["median_facts"] / max(1, columns["none"]["median_facts"]) - 1
        out.update(columns=columns, median_gain=round(gain, 3), per_query=facts)
        print(json.dumps(out, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
