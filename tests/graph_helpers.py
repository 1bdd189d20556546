"""A generated vault for graph.html's browser tests, its screenshots and bench/graph.py; and headless Chromium.

make_vault(root, n) writes n cards (deterministic for a given n): 4 projects and some personal cards, every kind,
entities of very unequal popularity (a few hubs, a long tail, some shared by several projects, a few cards with
none), supersede chains with valid_to set, a few retracted cards, a third of the titles in Chinese.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from memvault.model import Card
from memvault.vault import codec

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
KINDS = ["decision", "fact", "preference", "question", "event", "state", "rule", "thread", "reflection"]
PROJECTS = ["shop", "blog", "novel", "infra", None]
TOPICS = ["postgres", "caddy", "docker", "stripe", "redis", "nginx", "backups", "ci", "tls", "kubernetes",
          "sqlite", "cron", "s3", "grafana", "deploy", "queue", "cache", "search", "auth", "billing"]
ZH = ["数据库迁移", "证书续期", "备份策略", "小说章节", "订单支付", "缓存失效", "日志监控", "部署流程"]
WORDS = "the shop uses a small queue for orders and backs up nightly; renewals run from cron at night".split()


def make_vault(root: Path, n: int) -> Path:
    """A vault at `root` (copied from vault-template) holding `n` generated cards; returns root."""
    rng = random.Random(n)
    shutil.copytree(ROOT / "vault-template", root)
    n_ents = max(3, n // 12)
    names = TOPICS + [f"{rng.choice(TOPICS)}-{i}" for i in range(max(0, n_ents - len(TOPICS)))]
    by_ent: dict[str, list[int]] = {}
    cards: list[dict] = []
    for i in range(n):
        day = 1 + (i * 7) % 28
        month = 1 + (i * 5) % 12
        year = 2024 + (i * 3) // max(1, n) % 3
        date = f"{year}-{month:02d}-{day:02d}"
        cid = f"c-{date.replace('-', '')}-{i:06x}"
        k = 0 if i % 17 == 0 else 1 + min(2, int(rng.paretovariate(2.0)) - 1)
        ents = sorted({names[min(len(names) - 1, int(rng.paretovariate(0.9)) - 1 + rng.randrange(3))
                             if rng.random() < .6 else rng.randrange(len(names))] for _ in range(k)})
        title = (rng.choice(ZH) + "：" + rng.choice(ZH)) if i % 3 == 0 else \
            " ".join(rng.choice(WORDS) for _ in range(6)).capitalize()
        cards.append({"id": cid, "kind": KINDS[i % len(KINDS)], "title": f"{title} #{i}", "date": date,
                      "project": PROJECTS[i % len(PROJECTS)], "entities": tuple(ents), "supersedes": (),
                      "superseded_by": (), "status": "retracted" if i % 41 == 40 else "active", "valid_to": None})
        for e in ents:
            by_ent.setdefault(e, []).append(i)
    for i, c in enumerate(cards):  # every 13th card replaces an earlier card about the same entity
        if i % 13 != 12 or not c["entities"]:
            continue
        older = [j for j in by_ent[c["entities"][0]] if j < i and cards[j]["status"] == "active"
                 and cards[j]["date"] < c["date"]]
        if older:
            old = cards[older[-1]]
            old.update(status="superseded", superseded_by=(c["id"],), valid_to=c["date"])
            c["supersedes"] = (old["id"],)
    for i, c in enumerate(cards):
        card = Card(id=c["id"], kind=c["kind"], title=c["title"],
                    body=" ".join(rng.choice(WORDS) for _ in range(30)) + ".", project=c["project"],
                    entities=c["entities"], created=f"{c['date']}T10:00:00Z", valid_from=c["date"],
                    valid_to=c["valid_to"], status=c["status"], supersedes=c["supersedes"],
                    superseded_by=c["superseded_by"],
                    source={"kind": "distill", "run": "r-1", "episodes": [f"ep-{i:08d}"]} if i % 4 else {})
        folder = root / "cards" / c["date"][:7]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{c['id']}.md").write_text(codec.card_to_text(card), encoding="utf-8")
    return root


def launch(playwright):
    """Debian's Chromium, headless; a clear failure (never a skip) when it is not installed."""
    if not Path(CHROMIUM).exists():
        raise AssertionError(f"{CHROMIUM} is missing: graph.html's tests need Debian's chromium package "
                             "(`apt-get install -y chromium`; .ci/run installs it)")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
