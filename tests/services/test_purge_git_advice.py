"""`forget --purge` speaks of git history only when git history holds the purged text (issue 21, item 4): a
card written after the last commit leaves nothing in history, so no `git filter-repo` advice; a committed card,
or committed turns it came from, is named with the advice. Real git, real commits."""

from __future__ import annotations

import pytest
import json
import subprocess

from test_distill import NOW, add_episodes  # noqa: E402

# Their fake models write every card: the write protocol (tests/write_protocol.py).
pytestmark = pytest.mark.usefixtures("write_protocol")


def git(vault, *args: str) -> str:
    return subprocess.run(["git", "-C", str(vault), *args], check=True, capture_output=True, text=True).stdout


def commit_all(vault, message: str = "snapshot") -> None:
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", message)


def remember(run, title: str, entity: str = "nas") -> str:
    return run.json("remember", title, "--kind", "fact", "-e", entity, "--project", "home")["id"]


def test_a_card_never_committed_gets_no_git_advice(vault, run):
    subprocess.run(["git", "init", "-q", str(vault)], check=True)
    remember(run, "The NAS has four bays")  # the entity page exists in history, without the new card
    commit_all(vault)
    cid = remember(run, "The NAS answers on 10.0.0.5")
    out = run("forget", cid, "--purge")
    assert "purged" in out.stdout
    assert "git" not in out.stderr and "filter-repo" not in out.stderr, out.stderr
    cid2 = remember(run, "The NAS admin page is on port 5001")
    data = run.json("forget", cid2, "--purge")
    assert data["git_history"] == [] and data["files"]


def test_a_committed_card_is_named_with_the_advice(vault, run):
    subprocess.run(["git", "init", "-q", str(vault)], check=True)
    kept = remember(run, "The NAS has four bays")
    cid = remember(run, "The NAS answers on 10.0.0.5")
    commit_all(vault)
    data = run.json("forget", cid, "--purge")
    advice = "\n".join(data["git_history"])
    path = next(f for f in data["files"] if f.startswith("cards/"))
    assert "git filter-repo" in advice and path in advice and "entities/nas.md" in advice
    assert kept not in advice
    out = run("forget", kept, "--purge")
    assert "git filter-repo" in out.stderr  # the text form says it too


def test_only_the_files_history_holds_are_named(vault, run, fake_llm):
    """Turns committed, the card distilled from them after the commit: history holds the turns, not the card."""
    subprocess.run(["git", "init", "-q", str(vault)], check=True)
    add_episodes(vault, [("The NAS answers on 10.0.0.5 now", "noted")])
    commit_all(vault)
    fake_llm.queue(json.dumps({"cards": [{"action": "create", "kind": "fact", "title": "The NAS answers on 10.0.0.5",
                                          "body": "", "entities": ["nas"], "valid_from": None,
                                          "confidence": "user_stated", "episodes": ["e0"]}]}))
    run("distill", env={"MEMVAULT_LLM_BASE_URL": fake_llm.base_url, "MEMVAULT_NOW": NOW})
    [cid] = [p.stem for p in (vault / "cards").glob("*/*.md")]
    data = run.json("forget", cid, "--purge", "--with-episodes", env={"MEMVAULT_NOW": "2026-11-07T08:00:00Z"})
    advice = "\n".join(data["git_history"])
    assert "episodes/2026/11/2026-11-02.jsonl" in advice
    assert "cards/" not in advice and "--invert-paths" not in advice and "journal/" not in advice
