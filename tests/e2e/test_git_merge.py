"""Two machines, one vault, real git: same-day captures and distills merge without conflicts (merge=union),
duplicate lines from the same log are harmless, and nothing is distilled twice after the merge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from write_protocol import use_write

MEMVAULT = [sys.executable, "-m", "memvault"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def mv(vault: Path, *args: str, stdin: str | None = None, env: dict | None = None) -> str:
    done = subprocess.run([*MEMVAULT, "--vault", str(vault), *args], input=stdin, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def chat(session: str, topic: str, n: int = 3) -> str:
    lines = []
    for i in range(n):
        ts = f"2026-11-02T{9 + i:02d}:{len(session):02d}:00Z"
        lines.append({"role": "user", "content": f"{topic}: question {i} about the {topic} setup", "session": session,
                      "ts": ts})
        lines.append({"role": "assistant", "content": f"{topic}: answer {i}, we keep the {topic} plan",
                      "session": session})
    return "".join(json.dumps(m) + "\n" for m in lines)


def one_card_each(body: dict) -> str:
    import re

    prompt = body["messages"][1]["content"]
    cards = [{"action": "create", "kind": "fact", "title": text[:100], "body": "noted", "entities": ["setup"],
              "project": "demo", "valid_from": None, "confidence": "user_stated", "episodes": [f"e{n}"]}
             for n, text in re.findall(r"^\[e(\d+)\] .*\nUSER: (.*)$", prompt, re.M)]
    return json.dumps({"cards": cards})


def test_two_machines_merge_without_conflict_and_distill_once(tmp_path, fake_llm):
    a, b = tmp_path / "laptop", tmp_path / "desktop"
    subprocess.run([*MEMVAULT, "init", str(a), "--git"], check=True, capture_output=True)
    use_write(a)  # its fake model writes every card (tests/write_protocol.py)
    git(a, "commit", "-q", "-am", "distill with the write protocol")
    git(tmp_path, "clone", "-q", str(a), str(b))
    shared = chat("shared", "backup")  # the same log captured on both machines
    mv(a, "capture", "--project", "demo", stdin=chat("on-a", "postgres") + shared)
    mv(b, "capture", "--project", "demo", stdin=chat("on-b", "redis") + shared)

    fake_llm.set_default(one_card_each)
    env = {"MEMVAULT_LLM_BASE_URL": fake_llm.base_url, "MEMVAULT_NOW": "2026-11-03T08:00:00Z"}
    mv(a, "distill", env=env)
    mv(b, "distill", env={**env, "MEMVAULT_NOW": "2026-11-03T09:00:00Z"})
    for side in (a, b):
        git(side, "add", "-A")
        git(side, "commit", "-q", "-m", f"memory from {side.name}")
    git(b, "pull", "-q", "--no-rebase", "--no-edit", str(a), "HEAD")

    assert "<<<<<<<" not in "".join(p.read_text(encoding="utf-8") for p in b.rglob("*.*") if ".git" not in p.parts
                                    and p.suffix in (".jsonl", ".md", ".log"))
    # The union-merged entity page holds both sides' mention lines; `doctor --fix` makes the block exact.
    mv(b, "doctor", "--fix")
    page_path = b / "entities" / "setup.md"
    page = page_path.read_text(encoding="utf-8")
    mentions = [line for line in page.splitlines() if line.startswith("- [[")]
    assert len(mentions) == 12
    page_path.write_text(page.replace(mentions[3] + "\n", ""), encoding="utf-8")  # a block left stale
    stale = subprocess.run([*MEMVAULT, "--vault", str(b), "doctor"], capture_output=True, text=True)
    assert stale.returncode == 3 and "entities/setup.md: generated block is out of date" in stale.stdout
    mv(b, "doctor", "--fix")
    assert page_path.read_text(encoding="utf-8") == page
    day = b / "episodes" / "2026" / "11" / "2026-11-02.jsonl"
    raw = [json.loads(line) for line in day.read_text(encoding="utf-8").splitlines()]
    stats = json.loads(mv(b, "stats", "--json"))
    # 3 turns from each machine plus 3 shared turns (a union merge may keep their identical lines twice;
    # readers count each id once)
    assert len({r["id"] for r in raw}) == 9 and len(raw) in (9, 12) and stats["episodes"] == 9
    assert json.loads(mv(b, "doctor", "--json"))["ok"] is True
    again = json.loads(mv(b, "capture", "--json", "--project", "demo", stdin=shared + chat("on-a", "postgres")))
    assert again["new"] == 0

    calls_before = len(fake_llm.requests)
    summary = json.loads(mv(b, "distill", "--json", env={**env, "MEMVAULT_NOW": "2026-11-03T10:00:00Z"}))
    assert summary["pending_before"] == 0 and len(fake_llm.requests) == calls_before
    assert json.loads(mv(b, "stats", "--json"))["pending_episodes"] == 0
    journal = "".join(p.read_text(encoding="utf-8") for p in (b / "journal").glob("*.jsonl"))
    assert journal.count('"type":"distill"') >= 2
    hits = json.loads(mv(b, "search", "postgres", "--json"))["hits"]
    assert hits and all(Path(b / h["path"]).is_file() for h in hits)
