"""Issue 22, real processes: `memvault distill` (a subprocess) against tests/fake_llm.py (a server process on
127.0.0.1) replaying what a small local model really answered. A failure never looks like success (an empty
answer after a rejected reply fails the batch, exit 5, journaled, episodes pending); harmless mistakes are
repaired and counted; the model only proposes facts and code decides merge / supersede / update."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_llm import stop_process

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-03T08:00:00Z"


def fact(episode="e0", **kw) -> dict:
    return {"episode": episode, "quote": kw.pop("quote"), "kind": kw.pop("kind", "decision"),
            "subject": kw.pop("subject"), "value": kw.pop("value"), "old": kw.pop("old", None),
            "entities": kw.pop("entities", []), **kw}


def cards(*items: dict) -> str:
    return json.dumps({"cards": list(items)}, ensure_ascii=False)


@pytest.fixture
def served(tmp_path):
    """served([reply, ...], default="empty") -> base URL of a fake server process serving those replies."""
    procs = []

    def start(replies: list, default: str = "empty") -> str:
        script = tmp_path / f"script{len(procs)}.json"
        script.write_text(json.dumps([r if isinstance(r, dict) else {"content": r} for r in replies],
                                     ensure_ascii=False), encoding="utf-8")
        log = tmp_path / f"requests{len(procs)}.jsonl"
        proc = subprocess.Popen([sys.executable, str(ROOT / "tests/fake_llm.py"), "--port", "0", "--script",
                                 str(script), "--log", str(log), "--default", default],
                                stdout=subprocess.PIPE, text=True)
        line = proc.stdout.readline()
        assert line.startswith("READY "), line
        procs.append(proc)
        start.log = log
        return line.split()[1]

    yield start
    for proc in procs:
        stop_process(proc)


def requests(log: Path) -> list[dict]:
    return [json.loads(x)["body"] for x in log.read_text(encoding="utf-8").splitlines()]


def make_vault(path: Path, turns: list[tuple[str, str]], day: str = "2026-11-02",
               protocol: str = "write") -> tuple[Path, list[str]]:
    """A vault with these turns; its fake models write every card (`protocol` write) unless told review."""
    import shutil

    from write_protocol import use_write

    from memvault.model import Episode
    from memvault.vault import codec

    if not path.exists():
        shutil.copytree(ROOT / "vault-template", path)
        if protocol == "write":
            use_write(path)
    folder = path / "episodes" / day[:4] / day[5:7]
    folder.mkdir(parents=True, exist_ok=True)
    lines, ids = [], []
    for i, (user, assistant) in enumerate(turns):
        ep = Episode(id=f"ep-{day.replace('-', '')}T07{i:02d}00-{i:06x}", at=f"{day}T07:{i:02d}:00Z",
                     project="demo", session="s-" + day, turn=i + 1, user=user, assistant=assistant,
                     hash=f"sha256:{day}{i}")
        lines.append(codec.episode_to_line(ep))
        ids.append(ep.id)
    with (folder / f"{day}.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path, ids


def distill(vault: Path, url: str) -> tuple[int, dict, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "OPENAI_"))}
    env.update({"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_NOW": NOW, "MEMVAULT_LLM_MAX_RETRIES": "0",
                "MEMVAULT_LLM_MAX_OUTPUT_TOKENS": "320"})  # one episode a call, as with a small model
    proc = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "distill", "--json"],
                          env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout.strip() else {}), proc.stderr


def journal(vault: Path) -> list[dict]:
    return [json.loads(x) for p in sorted((vault / "journal").glob("*.jsonl"))
            for x in p.read_text(encoding="utf-8").splitlines()]


def vault_cards(vault: Path):
    from memvault.vault.store import Vault

    return sorted(Vault.open(vault, {}).cards(), key=lambda c: c.id)


# ---------------------------------------------------------------- honest outcomes

# A kind that is not even a string: a kind name the vault does not know is repaired to fact, this is not.
BAD_KIND = cards(fact(quote="Use Postgres for the index", kind=["gossip"], subject="index", value="Postgres"))


def test_empty_answer_after_a_rejected_reply_fails_the_batch_and_leaves_it_pending(tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", [("Use Postgres for the index", "ok")])
    url = served([BAD_KIND, '{"cards": []}'])
    code, out, err = distill(vault, url)
    assert code == 5, err
    assert out["failures"]["invalid_output"] == 1 and out["episodes_distilled"] == 0 and out["empty"] == 0
    assert out["failed_episodes"] == ids and out["pending_after"] == 1
    assert any(ids[0] in e and "no card after its reply was rejected" in e for e in out["errors"])
    [rec] = journal(vault)
    assert rec["type"] == "distill_failed" and rec["episodes"] == ids and rec["failure"] == "invalid_output"
    assert "Postgres" not in json.dumps(rec)  # the journal names the batch, never the turn's text
    # The retry showed the model its own reply and the exact fix.
    first, retry = requests(served.log)
    assert retry["messages"][:2] == first["messages"]
    assert retry["messages"][2]["role"] == "assistant" and '"gossip"' in retry["messages"][2]["content"]
    assert "kind" in retry["messages"][3]["content"] and "Fix: Use a kind from:" in retry["messages"][3]["content"]


def test_a_failed_batch_is_sent_again_and_distilled_by_the_next_run(tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", [("Use Postgres for the index", "ok")])
    assert distill(vault, served([BAD_KIND, '{"cards": []}']))[0] == 5
    good = cards(fact(quote="Use Postgres for the index", subject="index", value="Postgres"))
    code, out, err = distill(vault, served([good]))
    assert code == 0, err
    assert out["pending_before"] == 1 and out["episodes_distilled"] == 1 and out["cards"]["created"] == 1
    [card] = vault_cards(vault)
    assert card.title == "Use Postgres for the index" and card.episodes == tuple(ids)  # the user's words
    assert "index: Postgres" in card.body
    assert [r["type"] for r in journal(vault)] == ["distill_failed", "distill"]


def test_a_corrected_retry_is_accepted(tmp_path, served):
    vault, _ = make_vault(tmp_path / "v", [("Use Postgres for the index", "ok")])
    good = cards(fact(quote="Use Postgres for the index", subject="index", value="Postgres"))
    code, out, err = distill(vault, served(["Sure! Here are the cards: {\"cards\": [", good]))
    assert code == 0, err
    assert out["calls"] == 2 and out["cards"]["created"] == 1 and not out["failed_episodes"]


def test_an_empty_first_answer_is_nothing_found(tmp_path, served):
    vault, _ = make_vault(tmp_path / "v", [("thanks, that's all", "bye")])
    code, out, _ = distill(vault, served(['{"cards": []}']))
    assert code == 0 and out["empty"] == 1 and out["pending_after"] == 0 and out["calls"] == 1


# ---------------------------------------------------------------- harmless mistakes, repaired and counted


def test_a_stray_target_on_create_is_dropped_and_counted(tmp_path, served):
    vault, _ = make_vault(tmp_path / "v", [("Use Postgres for the index", "ok")])
    reply = cards({"action": "create", "target": 0, "kind": "decision", "title": "Use Postgres for the index",
                   "body": "", "entities": ["Postgres"], "episodes": ["e0"]})
    code, out, err = distill(vault, served([reply]))
    assert code == 0, err
    assert out["calls"] == 1 and out["cards"]["created"] == 1 and out["repairs"]["target_dropped"] == 1


def test_update_of_a_card_that_does_not_exist_becomes_create(tmp_path, served):
    vault, _ = make_vault(tmp_path / "v", [("我们的数据库就用 Postgres", "好的")])
    reply = cards({"action": "update", "target": 0, "kind": "decision", "title": "数据库：Postgres",
                   "body": "", "entities": ["Postgres"], "episodes": ["e0"]})
    code, out, err = distill(vault, served([reply]))
    assert code == 0, err
    assert out["cards"]["created"] == 1 and out["repairs"]["update_to_create"] == 1
    assert [c.title for c in vault_cards(vault)] == ["数据库：Postgres"]


def test_an_update_never_replaces_a_card_with_another_fact(tmp_path, served):
    vault, _ = make_vault(tmp_path / "v", [("The NAS runs TrueNAS Scale", "ok")], day="2026-11-01")
    make_vault(vault, [("The NAS sits behind our OpenWrt One router", "ok")], day="2026-11-02")
    first = cards(fact(quote="The NAS runs TrueNAS Scale", kind="fact", subject="NAS OS", value="TrueNAS Scale",
                       entities=["NAS"]))
    # The model "updates" the NAS card with the router: a different fact, so it becomes a card of its own.
    second = cards({"action": "update", "target": 0, "kind": "fact", "title": "Router: OpenWrt One",
                    "body": "", "entities": ["OpenWrt"], "episodes": ["e0"]})
    code, out, err = distill(vault, served([first, second], default="error"))
    assert code == 0, err
    assert out["repairs"]["update_as_new_fact"] == 1 and out["cards"]["updated"] == 0
    titles = sorted(c.title for c in vault_cards(vault) if c.status == "active")
    assert titles == ["Router: OpenWrt One", "The NAS runs TrueNAS Scale"]


# ---------------------------------------------------------------- facts protocol: code decides


@pytest.mark.parametrize("before,after,old_fact,new_fact", [
    ("The NAS runs TrueNAS Scale", "We moved the NAS from TrueNAS Scale to Unraid",
     dict(quote="The NAS runs TrueNAS Scale", kind="fact", subject="NAS OS", value="TrueNAS Scale"),
     dict(quote="moved the NAS from TrueNAS Scale to Unraid", kind="state", subject="NAS OS", value="Unraid",
          old="TrueNAS Scale")),
    ("宽带用的是电信 500M", "宽带从电信换成联通 1000M 了",
     dict(quote="宽带用的是电信 500M", kind="fact", subject="宽带", value="电信 500M"),
     dict(quote="宽带从电信换成联通 1000M 了", kind="state", subject="宽带", value="联通 1000M", old="电信 500M")),
])
def test_a_change_supersedes_the_card_that_held_the_old_value(tmp_path, served, before, after, old_fact,
                                                              new_fact):
    vault, _ = make_vault(tmp_path / "v", [(before, "ok")], day="2026-11-01")
    make_vault(vault, [(after, "ok")], day="2026-11-02")
    code, out, err = distill(vault, served([cards(fact(**old_fact)), cards(fact(**new_fact))], default="error"))
    assert code == 0, err
    assert out["cards"]["superseded"] == 1
    by_value = {c.value or c.title: c for c in vault_cards(vault)}
    old = next(c for c in by_value.values() if c.status == "superseded")
    new = by_value[new_fact["value"]]
    assert new.kind == "state" and new.status == "active" and old.superseded_by == (new.id,)
    assert old.title == old_fact["quote"] and new.title == f"{new_fact['subject']}: {new_fact['value']}"


def test_words_the_user_did_not_say_and_questions_give_no_card(tmp_path, served):
    vault, _ = make_vault(tmp_path / "v", [
        ("Which database should I use?", "I'd use Postgres 16 with pgvector."),
        ("Should we use Redis for the queue?", "Maybe."),
        ('The blog post says "we must support offline mode". thoughts?', "It depends."),
        ("这段代码为什么报错？\n```python\n# 必须等待网络空闲\nawait page.goto(url)\n```", "缺少 import。"),
    ])
    assistant_words = cards(fact(quote="I'd use Postgres 16 with pgvector", subject="database", value="Postgres 16"))
    question = cards(fact(quote="Should we use Redis for the queue?", subject="queue", value="Redis"))
    quoted = cards(fact(quote="we must support offline mode", kind="rule", subject="offline", value="must"))
    in_code = cards(fact(quote="必须等待网络空闲", kind="rule", subject="网络", value="等待空闲"))
    code, out, err = distill(vault, served([assistant_words, question, quoted, in_code]))
    assert code == 0, err
    assert out["cards"]["created"] == 0 and out["episodes_distilled"] == 4 and out["empty"] == 4
    assert out["repairs"]["ungrounded_dropped"] == 1 and out["repairs"]["question_dropped"] == 1
    assert out["repairs"]["quoted_dropped"] == 2


def test_a_near_duplicate_fact_merges_into_the_card_that_says_it(tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", [("以后回答都用中文", "好"), ("再说一次：以后回答都用中文", "好")])
    one = fact(quote="以后回答都用中文", kind="preference", subject="回答语言", value="中文")
    code, out, err = distill(vault, served([cards(one), cards({**one, "quote": "以后回答都用中文"})]))
    assert code == 0, err
    assert (out["cards"]["created"], out["cards"]["merged"]) == (1, 1)
    [card] = vault_cards(vault)
    assert card.episodes == tuple(ids) and card.title == "以后回答都用中文" and "回答语言: 中文" in card.body
