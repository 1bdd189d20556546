"""Issue 33, real processes: an empty answer is not success when the offline engine finds facts in the same
turns (suspect.py). The batch is sent again in halves; a half still empty gets the offline cards, journaled as
an offline batch (so `distill --upgrade` sends it again) and tagged; every step is a `distill_suspect` journal
line and an entry of `suspect` in --json. When the model answers for one half, it reads those turns: the other
half's "nothing" stands (recorded). Small talk the offline engine finds nothing in stays a plain empty."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_distill_small_model import journal, make_vault, served, vault_cards  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-03T08:00:00Z"


def run(vault: Path, url: str, *args: str, tokens: str = "640") -> tuple[int, dict, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "OPENAI_"))}
    env.update({"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_NOW": NOW, "MEMVAULT_LLM_MAX_RETRIES": "0",
                "MEMVAULT_LLM_MAX_OUTPUT_TOKENS": tokens})  # 640: two episodes a call
    proc = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "distill", "--json", *args],
                          env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def test_an_empty_answer_where_the_offline_engine_finds_facts_is_split_then_falls_back(tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", [("We moved the NAS from TrueNAS to Unraid.", "ok"),
                                             ("The staging box runs Debian 12.", "ok")])
    url = served([], default="empty")  # {"cards": []} to everything
    code, out, err = run(vault, url)
    assert code == 0, err
    assert out["calls"] == 3  # the batch of two, then each half
    assert [s["outcome"] for s in out["suspect"]] == ["split", "offline", "offline"]
    assert out["suspect"][0]["episodes"] == ids and out["suspect"][0]["offline_cards"] >= 2
    assert out["episodes_distilled"] == 2 and out["pending_after"] == 0 and out["cards"]["created"] >= 2
    assert "the model found nothing in 2 episodes where the offline engine finds facts" in err
    records = journal(vault)
    assert [r["type"] for r in records] == ["distill_suspect", "distill_suspect", "distill",
                                            "distill_suspect", "distill"]
    assert [r["engine"] for r in records if r["type"] == "distill"] == ["offline", "offline"]
    assert all("offline-fallback" in c.tags and c.confidence == "extracted" for c in vault_cards(vault))
    # Those turns are what `--upgrade` sends to the model again; this time it answers.
    reply = '{"cards": [["e0", "state", "The NAS now runs Unraid instead of TrueNAS", "NAS OS", "Unraid", "TrueNAS"]]}'
    code, out, err = run(vault, served([reply, '{"cards": [["e0", "fact", "The staging box runs Debian 12"]]}']),
                         "--upgrade", tokens="320")
    assert code == 0, err
    assert out["episodes_distilled"] == 2 and out["suspect"] == [] and out["cards"]["created"] == 2
    active = [c for c in vault_cards(vault) if c.status == "active"]
    assert {c.title for c in active} == {"The NAS now runs Unraid instead of TrueNAS", "The staging box runs Debian 12"}


def test_an_empty_answer_to_small_talk_stands(tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", [("haha thanks, have a nice weekend!", "you too"), ("ok", "bye")])
    code, out, err = run(vault, served([], default="empty"))
    assert code == 0, err
    assert out["calls"] == 1 and out["suspect"] == [] and out["empty"] == 1 and out["pending_after"] == 0
    assert [r["type"] for r in journal(vault)] == ["distill"] and not vault_cards(vault)


def test_when_the_model_answers_for_one_half_the_other_halfs_nothing_stands(tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", [("We moved the NAS from TrueNAS to Unraid.", "ok"),
                                             ("The staging box runs Debian 12.", "ok")])
    url = served(['{"cards": []}', '{"cards": [["e0", "state", "The NAS now runs Unraid instead of TrueNAS", '
                  '"NAS OS", "Unraid", "TrueNAS"]]}', '{"cards": []}'])
    code, out, err = run(vault, url)
    assert code == 0, err
    assert [(s["outcome"], s["episodes"]) for s in out["suspect"]] == [("split", ids), ("empty", ids[1:])]
    assert out["episodes_distilled"] == 2 and out["cards"]["created"] == 1 and "warning" not in err
    assert [r["type"] for r in journal(vault)] == ["distill_suspect", "distill", "distill_suspect", "distill"]
    assert [c.title for c in vault_cards(vault)] == ["The NAS now runs Unraid instead of TrueNAS"]


def test_a_single_turn_answered_empty_is_recorded_and_stands(tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", [("The staging box runs Debian 12.", "ok")])
    code, out, err = run(vault, served([], default="empty"), tokens="320")
    assert code == 0, err
    assert [(s["outcome"], s["episodes"]) for s in out["suspect"]] == [("empty", ids)]
    assert out["episodes_distilled"] == 1 and out["empty"] == 1 and not vault_cards(vault)
    assert [r["type"] for r in journal(vault)] == ["distill_suspect", "distill"]
