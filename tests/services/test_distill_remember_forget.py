"""remember, forget --retract, forget --purge [--with-episodes], through the CLI on a real vault."""

from __future__ import annotations

import pytest
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_distill import NOW, add_episodes  # noqa: E402

# Their fake models write every card: the write protocol (tests/write_protocol.py).
pytestmark = pytest.mark.usefixtures("write_protocol")


def files_with(root: Path, needle: str) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and ".git" not in p.parts and needle.encode() in p.read_bytes())


def test_remember_writes_a_card_with_entity_pages_and_supersedes(vault, run):
    env = {"MEMVAULT_NOW": NOW}
    a = run.json("remember", "Deploys only on weekdays", "--kind", "rule", "-e", "CI,部署", "--project", "shop",
                 env=env)
    assert a["status"] == "active" and (vault / a["path"]).is_file()
    assert "[[" + a["id"] + "]]" in (vault / "entities/部署.md").read_text()
    b = run.json("remember", "Deploys any day but Friday", "--kind", "rule", "--supersedes", a["id"],
                 env={"MEMVAULT_NOW": "2026-11-04T08:00:00Z"})
    assert b["superseded"] == [a["id"]]
    old = (vault / a["path"]).read_text()
    assert "status: superseded" in old and b["id"] in old and "valid_to: 2026-11-04" in old
    run("remember", "x", "--kind", "gossip", code=2)
    run("remember", "x", "--supersedes", "c-nope", code=1)
    lines = (vault / "journal/2026-11.jsonl").read_text().splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["remember", "remember"]


def test_retract_keeps_a_trace(vault, run):
    card = run.json("remember", "Alice likes tea", "--kind", "preference", "-e", "alice",
                    env={"MEMVAULT_NOW": NOW})
    out = run.json("forget", card["id"], "--retract", "--reason", "wrong person")
    assert out["mode"] == "retract" and out["changed"]
    text = (vault / card["path"]).read_text()
    assert "status: retracted" in text and "reason: wrong person" in text and "Alice likes tea" in text
    assert "retracted" in (vault / "entities/alice.md").read_text()
    run("forget", card["id"], code=2)  # neither mode
    run("forget", "../../etc/passwd", "--purge", code=2)
    run("forget", "c-20261103-ffffff", "--purge", code=1)


def test_purge_removes_the_text_everywhere_and_says_what_git_still_holds(vault, run, fake_llm):
    secret = "Project Falcon launches on March 3"
    add_episodes(vault, [(secret, "noted"), ("unrelated chat about lunch", "ok")])
    subprocess.run(["git", "init", "-q", str(vault)], check=True)
    fake_llm.queue(json.dumps({"cards": [{"action": "create", "kind": "fact", "title": secret, "body": secret,
                                          "entities": ["Falcon"], "valid_from": None,
                                          "confidence": "user_stated", "episodes": ["e0"]}]}))
    fake_llm.queue(json.dumps({"cards": [{"action": "update", "target": 0, "kind": "fact",
                                          "title": secret + " (confirmed)", "body": secret + ", confirmed",
                                          "entities": [], "valid_from": None, "confidence": "user_stated",
                                          "episodes": ["e0"]}]}))
    env = {"MEMVAULT_LLM_BASE_URL": fake_llm.base_url, "MEMVAULT_NOW": NOW}
    run("distill", env=env)
    add_episodes(vault, [("Falcon launch confirmed", "ok")], day="2026-11-05", start=10)
    run("distill", env={**env, "MEMVAULT_NOW": "2026-11-06T08:00:00Z"})
    subprocess.run(["git", "-C", str(vault), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(vault), "commit", "-qm", "snapshot"], check=True)
    assert "journal/2026-11.jsonl" in files_with(vault, secret)  # the update kept a before-image
    [cid] = [p.stem for p in (vault / "cards").glob("*/*.md")]
    out = run("forget", cid, "--purge", "--with-episodes", "--json", env={"MEMVAULT_NOW": "2026-11-07T08:00:00Z"})
    data = json.loads(out.stdout)
    assert files_with(vault, secret) == []
    assert "unrelated chat about lunch" in (vault / "episodes/2026/11/2026-11-02.jsonl").read_text()
    assert data["episodes_purged"] and any("git filter-repo" in line for line in data["git_history"])
    assert any("git -C" in line and "log --all" in line for line in data["git_history"])
    revokes = [json.loads(x) for x in (vault / "episodes/2026/11/2026-11-07.jsonl").read_text().splitlines()]
    assert revokes[0]["type"] == "revoke" and revokes[0]["reason"] == "purge"
    stats = run.json("stats")
    assert stats["cards"] == 0 and stats["pending_episodes"] == 0


def test_remember_state_supersedes_only_the_same_subject_and_field(run):
    def state(subject, field, value):
        return run.json("remember", f"{subject} {field} {value}", "--kind", "state", "--subject", subject,
                        "--field", field, "--value", value, "-e", subject)

    berlin = state("alice", "city", "Berlin")
    paris = state("bob", "city", "Paris")
    quoted = state("O'Brien", "city", "Cork")
    chinese = state("林晚", "住址", "雾港")
    lisbon = state("alice", "city", "Lisbon")
    assert lisbon["superseded"] == [berlin["id"]]
    assert state("O'Brien", "city", "Dublin")["superseded"] == [quoted["id"]]
    assert state("林晚", "住址", "长夜城")["superseded"] == [chinese["id"]]
    shown = {c: run.json("show", c) for c in (berlin["id"], paris["id"], lisbon["id"])}
    assert shown[berlin["id"]]["status"] == "superseded" and shown[berlin["id"]]["superseded_by"] == [lisbon["id"]]
    assert shown[paris["id"]]["status"] == "active" and shown[lisbon["id"]]["status"] == "active"
