"""Real processes: `memvault capture` of a log, `distill`, an edited turn captured again, then a `distill` killed
with SIGKILL in the middle of its rollback; the rerun leaves the tree a crash-free run leaves, and never rolls a
batch back twice."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fake_llm import stop_process
from write_protocol import use_write  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIRST, EDIT = "2026-11-03T08:00:00Z", "2026-11-04T08:00:00Z"


def reply(body: dict) -> str:
    """Fake model (runs inside the fake server process): a decision per answer; `SUPERSEDE: A -> B` proposes a
    change from A to B (memvault supersedes the card titled A)."""
    text = body["messages"][1]["content"]
    cards = []
    for n, answer in re.findall(r"^\[e(\d+)\] .*\nUSER: .*\nASSISTANT: (.*)$", text, re.M):
        card = {"action": "create", "kind": "decision", "title": answer, "body": "why: " + answer,
                "entities": [answer.split()[-1].lower(), "stack"], "project": "demo", "valid_from": None,
                "confidence": "user_stated", "episodes": [f"e{n}"]}
        m = re.match(r"SUPERSEDE: (.*?) -> (.*)$", answer)
        if m:  # a change: memvault finds the card that held the old title
            card.update(title=m.group(2), subject="stack", value=m.group(2), old=m.group(1),
                        entities=[m.group(2).split()[-1].lower(), "stack"])
        cards.append(card)
    return json.dumps({"cards": cards}, ensure_ascii=False)


def chat(session: str, turns: list[str], day: str) -> str:
    out = []
    for i, answer in enumerate(turns):
        ts = f"{day}T07:{i:02d}:00Z"
        edited = " (edited)" if turns is EDITED and i == 1 else ""  # a history edit changes the user's text
        out.append({"role": "user", "content": f"question {i + 1} 问题{edited}", "session": session,
                    "timestamp": ts})
        out.append({"role": "assistant", "content": answer, "session": session, "timestamp": ts})
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in out)


BASE = ["Index in SQLite", "Queue in Redis", "Docs in Markdown"]
TURNS = ["SUPERSEDE: Index in SQLite -> Index in Postgres", "Deploy with systemd", "Test with pytest",
         "Lint with ruff", "周报 in Markdown", "Cache in memcached"]
EDITED = [TURNS[0], "Deploy with Kubernetes", *TURNS[2:]]


@pytest.fixture
def fake_url(tmp_path):
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests/fake_llm.py"), "--port", "0",
                             "--default-fn", f"{__file__}:reply"], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("READY "), line
    yield line.split()[1]
    stop_process(proc)


def memvault(vault: Path, url: str, now: str, *args: str, stdin: str | None = None, crash: str | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update({"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_NOW": now, "MEMVAULT_LLM_MAX_RETRIES": "0",
                "MEMVAULT_LLM_MAX_OUTPUT_TOKENS": "960"})  # 3 episodes per batch
    if crash:
        env["MEMVAULT_CRASH_AT"] = crash
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), *args], input=stdin, env=env,
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(root).parts}


def edited_vault(path: Path, url: str) -> Path:
    """Two distills, then turn 2 of session s edited and captured again: three stale batches wait."""
    shutil.copytree(ROOT / "vault-template", path)
    use_write(path)  # its fake models write every card (tests/write_protocol.py)
    import yaml

    # The fake model reads its instructions from the assistant's answers: the prompt must show them.
    data = yaml.safe_load((path / "memvault.yaml").read_text(encoding="utf-8"))
    data.setdefault("distill", {})["assistant_chars"] = 4000
    (path / "memvault.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    assert memvault(path, url, FIRST, "capture", "--project", "demo", stdin=chat("a", BASE, "2026-11-01")).returncode == 0
    assert memvault(path, url, FIRST, "distill").returncode == 0
    assert memvault(path, url, FIRST, "capture", "--project", "demo", stdin=chat("s", TURNS, "2026-11-02")).returncode == 0
    done = memvault(path, url, FIRST, "distill", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["cards"]["superseded"] == 1
    out = memvault(path, url, EDIT, "capture", "--project", "demo", "--json", stdin=chat("s", EDITED, "2026-11-02"))
    assert out.returncode == 0 and json.loads(out.stdout)["revoked"] == 5
    return path


@pytest.fixture
def base(tmp_path, fake_url):
    # Capture stamps revoke lines with the wall clock, so every vault below is a copy of one capture.
    return edited_vault(tmp_path / "base", fake_url)


@pytest.fixture
def reference(tmp_path, fake_url, base):
    ref = shutil.copytree(base, tmp_path / "ref")
    done = memvault(ref, fake_url, EDIT, "distill", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["rolled_back"] == 2 and summary["rollback_fallback"] == []
    cards = [p.read_text() for p in (ref / "cards").rglob("*.md")]
    assert not any("Deploy with systemd" in c for c in cards)
    assert any("Deploy with Kubernetes" in c for c in cards)
    sqlite = next(c for c in cards if "title: Index in SQLite" in c)
    assert "superseded_by:\n- " in sqlite or "superseded_by: [c-" in sqlite  # re-distilled turn 1 supersedes again
    return fake_url, tree(ref)


@pytest.mark.parametrize("point", ["rollback-after-card:1", "rollback-before-journal:1", "rollback-after-journal:1",
                                   "rollback-after-card:2", "rollback-after-journal:2", "after-card:1"])
def test_kill_9_inside_a_rollback_then_rerun_gives_the_same_tree(tmp_path, base, reference, point):
    url, expected = reference
    vault = shutil.copytree(base, tmp_path / "crash")
    crashed = memvault(vault, url, EDIT, "distill", crash=point)
    assert crashed.returncode == -signal.SIGKILL
    rerun = memvault(vault, url, EDIT, "distill", "--json")
    assert rerun.returncode == 0, rerun.stderr
    assert tree(vault) == expected
    journal = [json.loads(x) for p in (vault / "journal").glob("*.jsonl") for x in p.read_text().splitlines()]
    undone = [b for r in journal if r["type"] == "rollback" for b in r["batches"]]
    assert len(undone) == len(set(undone)) == 2  # never rolled back twice
    again = memvault(vault, url, EDIT, "distill", "--json")
    assert json.loads(again.stdout)["rolled_back"] == 0 and tree(vault) == expected
