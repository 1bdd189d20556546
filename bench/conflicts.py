"""Conflict detector on a generated vault: `python bench/conflicts.py [--cards 20000] [--doctor]`.

Builds (deterministically, under a temporary folder) two vaults of `--cards` cards in 3 projects, a third of them
`state` cards (subject + field + value), half Chinese, with supersede history:
- clean: no two active cards that cannot both be true. It still holds the hard negatives: the same subject with
  other fields, older superseded values of a state, the same subject and field in another project, titles that
  swap a content word (`Use Postgres …` / `Use SQLite …`: a change, not a duplicate);
- planted: the clean vault plus PLANTED pairs (>= 40, zh and en) of three sorts: the same state key with another
  value (`state`), the same subject and field written differently (`restated`), near-duplicate titles in one
  project that should have merged (`duplicate`).
It prints the detector's recall and precision on the planted pairs, its time on each vault, and the number of
conflicts on the clean vault (must be 0); with `--doctor` also the conflicts `memvault doctor` reports on the clean
vault (a real process). Goal (issue 14): recall >= 0.95, precision >= 0.90, clean vault 0.

The generator and the planted pairs were frozen (committed) before the detector was tuned against them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memvault.vault import codec  # noqa: E402
from memvault.model import Card  # noqa: E402

PROJECTS = ("shop", "blog", "novel")
ZH = ("数据库备份迁移服务器容器配置网络端口证书域名日志监控告警磁盘内存缓存队列任务调度用户订单支付"
      "价格运费库存商品图片搜索索引小说章节人物线索结局视角码头灯塔雾港警察记者编辑平台连载读者")
SYLL = ["ka", "lo", "mi", "ter", "sun", "ber", "dol", "vex", "pra", "qui", "zan", "fo", "rin", "tas", "mor"]
VOCAB = [a + b + c for a in SYLL for b in SYLL for c in ("", "n", "s", "ter")]
FIELDS_EN = ["version", "owner", "port", "region", "deploy target", "database", "status", "budget", "runtime",
             "release day", "backup policy", "retention"]
FIELDS_ZH = ["版本", "负责人", "端口", "地区", "部署目标", "数据库", "状态", "预算", "运行时", "发布日", "备份策略",
             "保留期限"]


def _zh(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(ZH) for _ in range(n))


def _en(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


class Gen:
    """Cards in memory, by id; `write` puts them in a vault folder."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.cards: dict[str, Card] = {}
        self.n = 0

    def new_id(self, day: str) -> str:
        self.n += 1
        return f"c-{day.replace('-', '')}-{self.n:08x}"

    def day(self) -> str:
        r = self.rng
        return f"{r.choice((2024, 2025, 2026))}-{r.randrange(1, 13):02d}-{r.randrange(1, 29):02d}"

    def add(self, **kw) -> Card:
        day = kw.pop("day", None) or self.day()
        cid = self.new_id(day)
        kw.setdefault("body", kw["title"])
        card = Card(id=cid, created=f"{day}T10:00:00Z", valid_from=day,
                    source={"kind": "distill", "run": "r-bench", "episodes": [f"ep-{self.n:08x}"]}, **kw)
        self.cards[cid] = card
        return card

    def supersede(self, old: Card, new: Card) -> None:
        from memvault.model import supersede

        a, b = supersede(old, new)
        self.cards[a.id], self.cards[b.id] = a, b

    def write(self, root: Path) -> None:
        shutil.copytree(ROOT / "vault-template", root)
        for card in self.cards.values():
            folder = root / "cards" / card.created[:7]
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{card.id}.md").write_text(codec.card_to_text(card), encoding="utf-8")


def clean_cards(gen: Gen, n: int) -> None:
    """`n` cards, none of them in conflict with another active card."""
    rng = gen.rng
    subjects_done = 0
    while len(gen.cards) < n:
        project = PROJECTS[len(gen.cards) % 3]
        zh = rng.random() < 0.5
        if rng.random() < 0.34:
            # A subject with several fields (different fields never conflict), some with a superseded history,
            # and the same subject and field in another project with another value (projects never conflict).
            subjects_done += 1
            subject = f"{_zh(rng, 3)}{subjects_done}号" if zh else f"svc-{rng.choice(VOCAB)}-{subjects_done}"
            fields = rng.sample(FIELDS_ZH if zh else FIELDS_EN, 3)
            for f in fields:
                value = _zh(rng, 4) if zh else _en(rng, 2)
                card = gen.add(kind="state", title=f"{subject} {f}: {value}", project=project, subject=subject,
                               field=f, value=value)
                if rng.random() < 0.3:
                    newer = _zh(rng, 4) if zh else _en(rng, 2)
                    later = f"2027-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
                    gen.supersede(card, gen.add(kind="state", title=f"{subject} {f}: {newer}", project=project,
                                                subject=subject, field=f, value=newer, day=later))
                if rng.random() < 0.1:
                    other = PROJECTS[(PROJECTS.index(project) + 1) % 3]
                    value2 = _zh(rng, 4) if zh else _en(rng, 2)
                    gen.add(kind="state", title=f"{subject} {f}: {value2}", project=other, subject=subject,
                            field=f, value=value2)
        elif rng.random() < 0.03:
            # A swapped content word: a change of mind, which must not be taken for a duplicate.
            tail = _zh(rng, 6) if zh else _en(rng, 4)
            a, b = rng.sample(["Postgres", "SQLite", "MySQL", "Redis", "Caddy", "Nginx"], 2)
            if zh:
                gen.add(kind="decision", title=f"{tail}用{a}", project=project)
                gen.add(kind="decision", title=f"{tail}用{b}", project=project)
            else:
                gen.add(kind="decision", title=f"Use {a} for {tail}", project=project)
                gen.add(kind="decision", title=f"Use {b} for {tail}", project=project)
        else:
            kind = rng.choice(("fact", "decision", "rule", "preference", "event"))
            title = _zh(rng, 10) if zh else _en(rng, 6).capitalize()
            gen.add(kind=kind, title=title, project=project, body=(_zh(rng, 60) if zh else _en(rng, 30)))


def plant(gen: Gen, per_sort: int = 16) -> list[dict]:
    """Conflict pairs added to a clean vault: `per_sort` of each sort, half zh and half en."""
    rng = gen.rng
    pairs = []
    for i in range(per_sort):  # state: same key, another value
        zh, project = i % 2 == 0, PROJECTS[i % 3]
        subject = f"冲突{_zh(rng, 2)}{i}" if zh else f"clash-{rng.choice(VOCAB)}-{i}"
        f = rng.choice(FIELDS_ZH if zh else FIELDS_EN)
        v1, v2 = (_zh(rng, 4), _zh(rng, 4)) if zh else (_en(rng, 2), _en(rng, 2))
        a = gen.add(kind="state", title=f"{subject} {f}: {v1}", project=project, subject=subject, field=f, value=v1)
        b = gen.add(kind="state", title=f"{subject} {f}: {v2}", project=project, subject=subject, field=f, value=v2)
        pairs.append({"sort": "state", "lang": "zh" if zh else "en", "ids": [a.id, b.id]})
    for i in range(per_sort):  # restated: same subject and field, written differently
        zh, project = i % 2 == 0, PROJECTS[i % 3]
        if zh:
            subject, f = f"重述{_zh(rng, 2)}{i}", rng.choice(FIELDS_ZH)
            subject2, f2 = subject + " ", " ".join(f)  # 部署目标 / 部 署 目 标
            v1, v2 = _zh(rng, 4), _zh(rng, 4)
        else:
            word = rng.choice(VOCAB)
            subject, f = f"Api {word} Gateway {i}", rng.choice([x for x in FIELDS_EN if " " in x] or FIELDS_EN)
            subject2, f2 = f"api-{word}-gateway-{i}", f.title().replace(" ", "")  # Deploy Target / DeployTarget
            v1, v2 = _en(rng, 2), _en(rng, 2)
        a = gen.add(kind="state", title=f"{subject} {f}: {v1}", project=project, subject=subject, field=f, value=v1)
        kind2 = "state" if i % 4 < 2 else "fact"  # half are a fact card carrying subject, field and value
        b = gen.add(kind=kind2, title=f"{subject2} {f2} is {v2}", project=project, subject=subject2, field=f2,
                    value=v2)
        pairs.append({"sort": "restated", "lang": "zh" if zh else "en", "ids": [a.id, b.id]})
    for i in range(per_sort):  # duplicate: a reworded title in the same project and kind
        zh, project = i % 2 == 0, PROJECTS[i % 3]
        kind = rng.choice(("fact", "decision", "rule"))
        if zh:
            base = _zh(rng, 12)
            t1, t2 = base, base[:6] + "的" + base[6:] + "。"
        else:
            ws = [rng.choice(VOCAB) + "ka" for _ in range(6)]
            t1 = " ".join(ws).capitalize()
            t2 = ("The " + " ".join(ws[:3] + [ws[3] + "s"] + ws[4:])).replace("  ", " ")
        a = gen.add(kind=kind, title=t1, project=project)
        b = gen.add(kind=kind, title=t2, project=project)
        pairs.append({"sort": "duplicate", "lang": "zh" if zh else "en", "ids": [a.id, b.id]})
    return pairs


def build(root: Path, n: int, planted: bool, seed: int = 14) -> list[dict]:
    gen = Gen(seed)
    clean_cards(gen, n)
    pairs = plant(gen) if planted else []
    gen.write(root)
    return pairs


def detect(root: Path) -> tuple[list, float]:
    from memvault.distill import conflicts
    from memvault.vault.store import Vault

    vault = Vault.open(root, {})
    cards = vault.cards()
    t0 = time.perf_counter()
    found = conflicts.detect(cards, threshold=float(vault.config.section("distill").get("merge_threshold", 85)))
    return found, time.perf_counter() - t0


@contextlib.contextmanager
def workdir(keep: str | None, prefix: str) -> Iterator[Path]:
    """The folder a bench builds its vaults in: --keep DIR (kept), else a temporary one removed at the end."""
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield base
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=20000)
    ap.add_argument("--doctor", action="store_true", help="also run `memvault doctor` on the clean vault")
    ap.add_argument("--keep", help="build the vaults in this folder and keep them")
    args = ap.parse_args()
    with workdir(args.keep, "mv-conflicts-") as base:
        clean, dirty = base / "clean", base / "planted"
        for p in (clean, dirty):
            shutil.rmtree(p, ignore_errors=True)
        build(clean, args.cards, planted=False)
        pairs = build(dirty, args.cards, planted=True)
        truth = {frozenset(p["ids"]) for p in pairs}
        found, secs = detect(dirty)
        got = {frozenset((c.a, c.b)) for c in found}
        hit = truth & got
        by_sort = {s: sum(frozenset(p["ids"]) in got for p in pairs if p["sort"] == s) for s in
                   ("state", "restated", "duplicate")}
        clean_found, clean_secs = detect(clean)
        out = {"cards": args.cards, "planted": len(truth), "found": len(got),
               "recall": round(len(hit) / len(truth), 3), "precision": round(len(hit) / len(got), 3) if got else 0,
               "found_by_sort": by_sort, "seconds": round(secs, 3), "clean_found": len(clean_found),
               "clean_seconds": round(clean_secs, 3),
               "false": [sorted(x) for x in sorted(got - truth, key=sorted)][:10]}
        if args.doctor:
            env = dict(os.environ, MEMVAULT_DIR=str(clean))
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "memvault", "doctor", "--json"], capture_output=True,
                                  text=True, env=env)
            report = json.loads(proc.stdout or "{}")
            out["doctor_clean"] = {"exit": proc.returncode, "seconds": round(time.perf_counter() - t0, 2),
                                   "conflicts": len(report.get("conflicts", []))}
        print(json.dumps(out, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
