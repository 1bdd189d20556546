"""Real processes: two distills at once (one exits 4), and kill -9 between and inside batches followed by a
rerun that leaves a tree byte-identical to an uninterrupted run (no duplicate, nothing lost)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_llm import stop_process
from write_protocol import use_write  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-03T08:00:00Z"


def reply(body: dict) -> str:
    """Fake model (runs inside the fake server process): one card per even episode, merging-prone titles."""
    user = body["messages"][1]["content"]
    cards = []
    for n, text in re.findall(r"^\[e(\d+)\] .*\nUSER: (.*)$", user, re.M):
        if int(n) % 2 == 0:
            cards.append({"action": "create", "kind": "decision", "title": text[:80], "body": "because " + text,
                          "entities": ["vault", text.split()[-1]], "project": "demo", "valid_from": None,
                          "confidence": "user_stated", "episodes": [f"e{n}"]})
    return json.dumps({"cards": cards}, ensure_ascii=False)


def slow_reply(body: dict) -> dict:
    return {"content": reply(body), "delay": 1.5}


def gated_reply(body: dict) -> str:
    """Answers only once the file named by FAKE_LLM_GATE exists: a run holds its lock until the test lets it go,
    however slow the machine (no race between the two runs)."""
    gate = Path(os.environ["FAKE_LLM_GATE"])
    deadline = time.time() + 600  # a hang guard only
    while not gate.exists() and time.time() < deadline:
        time.sleep(0.05)
    return reply(body)


def start_fake(tmp_path: Path, fn: str):
    from fake_llm import start_process

    return start_process(tmp_path / "requests.jsonl", f"{__file__}:{fn}")


@pytest.fixture
def fake_proc(tmp_path):
    procs = []

    def start(fn="reply"):
        proc, url, log = start_fake(tmp_path, fn)
        procs.append(proc)
        return url, log

    yield start
    for proc in procs:
        stop_process(proc)


def make_vault(path: Path) -> Path:
    from memvault.vault import codec
    from memvault.model import Episode

    shutil.copytree(ROOT / "vault-template", path)
    use_write(path)  # its fake models write every card (tests/write_protocol.py)
    lines = []
    for i in range(36):
        topic = ["Postgres", "SQLite", "周报", "Markdown", "pytest", "ruff"][i % 6]
        user = f"Decision {i}: use {topic} for part {i}" if i % 3 else f"第{i}个决定：用 {topic}"
        ep = Episode(id=f"ep-20261102T07{i // 60:02d}{i % 60:02d}-{i:06x}", at=f"2026-11-02T07:{i:02d}:00Z",
                     project="demo", session="s1", turn=i + 1, user=user, assistant="ok", hash=f"sha256:{i}")
        lines.append(codec.episode_to_line(ep))
    (path / "episodes/2026/11").mkdir(parents=True)
    (path / "episodes/2026/11/2026-11-02.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def memvault(vault: Path, url: str, *args: str, extra_env: dict | None = None, **kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update({"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_NOW": NOW, "MEMVAULT_LLM_MAX_RETRIES": "0"})
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "distill", *args],
                          env=env, capture_output=True, text=True, cwd=ROOT, timeout=120, **kw)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(root).parts}


@pytest.fixture
def reference(tmp_path, fake_proc):
    url, _log = fake_proc()
    ref = make_vault(tmp_path / "ref")
    done = memvault(ref, url, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["batches"] == 3 and summary["cards"]["created"] > 0
    return url, tree(ref)


@pytest.mark.parametrize("point", ["after-journal:1", "after-card:2", "before-journal:2", "after-card:3"])
def test_kill_9_then_rerun_gives_the_same_tree(tmp_path, reference, point):
    url, expected = reference
    vault = make_vault(tmp_path / f"crash-{point.replace(':', '-')}")
    crashed = memvault(vault, url, extra_env={"MEMVAULT_CRASH_AT": point})
    assert crashed.returncode == -signal.SIGKILL
    rerun = memvault(vault, url, "--json")
    assert rerun.returncode == 0, rerun.stderr
    got = tree(vault)
    assert sorted(got) == sorted(expected)
    assert got == expected
    ids = [line for p in (vault / "journal").glob("*.jsonl") for line in p.read_text().splitlines()]
    episodes = [e for line in ids for e in json.loads(line)["episodes"]]
    assert len(episodes) == len(set(episodes)) == 36  # nothing lost, nothing distilled twice


def test_kill_9_from_outside_during_a_call_then_rerun(tmp_path, reference, fake_proc):
    _url, expected = reference
    slow_url, _log = fake_proc("slow_reply")
    vault = make_vault(tmp_path / "outside")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update({"MEMVAULT_LLM_BASE_URL": slow_url, "MEMVAULT_NOW": NOW})
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault), "distill"], env=env,
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = vault / "journal/2026-11.jsonl"
    deadline = time.time() + 300  # a hang guard: the loop ends as soon as the first batch is in the journal
    while time.time() < deadline and not (journal.exists() and journal.read_text().count("\n") >= 1):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # batch 1 committed, batch 2 waiting for the model
    proc.wait(timeout=10)
    assert journal.read_text().count("\n") == 1
    rerun = memvault(vault, slow_url)
    assert rerun.returncode == 0, rerun.stderr
    assert tree(vault) == expected


def test_two_distills_at_once_one_exits_4(tmp_path, fake_proc, monkeypatch):
    gate = tmp_path / "gate"
    monkeypatch.setenv("FAKE_LLM_GATE", str(gate))
    url, _log = fake_proc("gated_reply")
    vault = make_vault(tmp_path / "v")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update({"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_NOW": NOW})
    first = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault), "distill", "--json"],
                             env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = vault / ".memvault/distill.lock"
    deadline = time.time() + 300  # a hang guard: the loop ends as soon as the lock is taken
    while time.time() < deadline and not (lock.exists() and lock.read_text().strip()):
        time.sleep(0.05)
    second = memvault(vault, url)  # refused at once: it never waits for the lock (exit 4, not 0 after the first)
    assert second.returncode == 4
    assert "already running" in second.stderr and f"pid {first.pid}" in second.stderr
    gate.touch()  # the first run may go on now
    out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    assert json.loads(out)["pending_after"] == 0
