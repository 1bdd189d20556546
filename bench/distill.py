"""Benchmark: LLM calls and tokens for distilling 200 mixed zh/en episodes against the fake server.

    .venv/bin/python bench/distill.py [--episodes 200]

Prints calls, prompt and completion tokens (as the fake server counts them: len(json(messages)) // 4), calls
per 100 episodes, and the prompt overhead per batch (prompt tokens minus the episodes' own share, estimated
with llm.estimate_tokens). Goals (issue 4): <= 15 calls per 100 episodes, <= 1,500 overhead tokens a batch.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fake_llm import fake_llm_server  # noqa: E402

from memvault.vault import codec  # noqa: E402
from memvault.distill.service import distill, format_episode  # noqa: E402
from memvault.distill.llm import estimate_tokens  # noqa: E402
from memvault.model import Episode  # noqa: E402
from memvault.vault.store import Vault, append_lines  # noqa: E402

EN = [
    ("Should the vault use SQLite or plain files?", "Plain files: they diff, grep and merge in git."),
    ("Let's pin Python to 3.11 for the CLI.", "Agreed; 3.11 has tomllib and faster startup."),
    ("I prefer short answers without bullet lists.", "Understood, I'll keep replies short."),
    ("What's the rate limit of the API again?", "60 requests per minute per key, bursts of 10."),
    ("Can you fix the failing test in test_search.py?", "The fixture used a stale path; fixed it."),
]
ZH = [
    ("周报工具要不要支持导出 PDF？", "先只做 Markdown，PDF 以后用 pandoc 转。"),
    ("数据库还是用 PostgreSQL 吧。", "好的，迁移脚本我来写，周五前完成。"),
    ("我不喜欢太长的回答。", "明白，以后回答简短一些。"),
    ("部署只在工作日进行。", "记下了：周末不部署。"),
    ("这个 bug 是怎么回事？", "缓存没有失效，重启后就好了。"),
]


def reply(body: dict) -> str:
    user = body["messages"][1]["content"]
    cards = []
    for n, text in re.findall(r"^\[e(\d+)\] .*\nUSER: (.*)$", user, re.M):
        if int(n) % 3 == 0:  # a third of turns give a card, as real distillation roughly does
            cards.append({"action": "create", "kind": "decision", "title": text[:60], "body": text,
                          "entities": ["vault"], "valid_from": None, "confidence": "user_stated",
                          "episodes": [f"e{n}"]})
    return json.dumps({"cards": cards}, ensure_ascii=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=200)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    root = tmp / "vault"
    shutil.copytree(ROOT / "vault-template", root)
    lines, eps = [], []
    for i in range(args.episodes):
        user, assistant = (ZH if i % 2 else EN)[i % 5]
        user = f"{user} ({i})"
        ep = Episode(id=f"ep-20261102T{i // 60:02d}{i % 60:02d}00Z-{i:06x}", at=f"2026-11-02T{i // 60:02d}:{i % 60:02d}:00Z",
                     project="bench", session="s", turn=i + 1, user=user, assistant=assistant, hash=f"sha256:{i}")
        lines.append(codec.episode_to_line(ep))
        eps.append(ep)
    append_lines(root / "episodes/2026/11/2026-11-02.jsonl", lines)
    with fake_llm_server() as fake:
        fake.set_default(reply)
        vault = Vault.open(root, {"MEMVAULT_LLM_BASE_URL": fake.base_url})
        s = distill(vault, {"MEMVAULT_NOW": "2026-11-03T08:00:00Z"})
        by_id = {e.id: e for e in eps}
        journal = vault.journal()
        ep_share = []
        for rec in journal:
            own = sum(estimate_tokens(format_episode(i, by_id[e], 4000)) for i, e in enumerate(rec["episodes"]))
            ep_share.append(rec["usage"]["prompt_tokens"] - own)
    shutil.rmtree(tmp)
    n = args.episodes
    print(f"episodes            {n} (half Chinese)")
    print(f"LLM calls           {s.calls}  ({s.calls * 100 / n:.1f} per 100 episodes; goal <= 15)")
    print(f"prompt tokens       {s.prompt_tokens}")
    print(f"completion tokens   {s.completion_tokens}")
    print(f"batches             {s.batches}; cards created {s.created}, merged {s.merged}")
    print(f"prompt overhead     max {max(ep_share)}, mean {sum(ep_share) / len(ep_share):.0f} tokens a batch "
          "(prompt tokens minus the episodes' estimated share; goal <= 1500)")


if __name__ == "__main__":
    main()
