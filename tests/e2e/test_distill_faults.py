"""Issue 33, real processes: every way the endpoint can fail a batch gives exit 5, a `distill_failed` journal
line, the episodes pending, and the same counts in stderr and `--json` (the batches not sent after the endpoint
failed are pending too, and counted). `memvault distill` is a subprocess; tests/fake_llm.py is a server process
that answers badly, slowly, or is killed with SIGKILL in the middle of a call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_llm import stop_process

from test_distill_small_model import journal, make_vault, served  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-03T08:00:00Z"
TURNS = [("We moved the NAS to Unraid last week.", "ok"), ("The staging box runs Debian 12.", "ok")]


@pytest.fixture(params=["review", "write"])
def protocol(request) -> str:
    """Every fault under both protocols of the model (distill.llm_protocol)."""
    return request.param


def _env(url: str, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "OPENAI_"))}
    env.update({"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_NOW": NOW, "MEMVAULT_LLM_MAX_RETRIES": "0",
                "MEMVAULT_LLM_MAX_OUTPUT_TOKENS": "320", **extra})  # one episode a call: two batches
    return env


def _cmd(vault: Path) -> list[str]:
    return [sys.executable, "-m", "memvault", "--vault", str(vault), "distill", "--json"]


def check_failed(vault: Path, ids: list[str], code: int, out: dict, err: str, *, failure: str,
                 failed: int, untried: int) -> dict:
    """Exit 5; `failed` episodes in failed batches and `untried` not sent, the same in --json and stderr; one
    journal line per failed batch naming its episodes; nothing marked distilled."""
    assert code == 5, err
    assert out["failures"][failure] == failed and out["episodes_distilled"] == 0
    assert out["failed_episodes"] == ids[:failed] and out["untried_episodes"] == ids[failed:failed + untried]
    assert out["pending_after"] == len(ids) == failed + untried
    assert f"{failed + untried} episodes not distilled" in err
    if untried:
        assert f"{failed} in failed batches, {untried} not sent after the endpoint failed" in err
    records = journal(vault)
    assert [r["type"] for r in records] == ["distill_failed"] * failed
    for rec, ep in zip(records, ids):
        assert rec["episodes"] == [ep] and rec["failure"] == failure and rec["engine"] == "llm"
        assert "Unraid" not in json.dumps(rec)  # the journal names the batch, never the turn
    return records[0]


@pytest.mark.parametrize("reply,failure,says", [
    ({"raw_body": ""}, "llm_error", "not JSON"),  # an empty body
    ({"raw_body": "<!doctype html><html><body>502 Bad Gateway</body></html>",
      "headers": {"Content-Type": "text/html"}}, "llm_error", "not JSON"),  # a proxy's HTML page
    ({"raw_body": '{"choices": [{"message": {"content": "{\\"cards\\": [['}, "llm_error", "not JSON"),  # body cut
])
def test_an_unusable_reply_stops_the_run_with_every_episode_pending(protocol, tmp_path, served, reply, failure, says):
    vault, ids = make_vault(tmp_path / "v", TURNS, protocol=protocol)
    url = served([reply])
    proc = subprocess.run(_cmd(vault), env=_env(url), capture_output=True, text=True, cwd=ROOT, timeout=120)
    out = json.loads(proc.stdout)
    rec = check_failed(vault, ids, proc.returncode, out, proc.stderr, failure=failure, failed=1, untried=1)
    assert says in rec["reason"] and out["stopped"] == "llm_error"


def test_a_cut_off_answer_fails_its_batch_and_the_run_goes_on(protocol, tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", TURNS, protocol=protocol)
    good = '{"keep": ["c0"], "add": []}' if protocol == "review" else \
        '{"cards": [["e0", "fact", "The staging box runs Debian 12"]]}'
    url = served([{"content": '{"cards": [["e0", "state", "The NAS now runs Unr', "finish_reason": "stop"},
                  {"content": good}])
    proc = subprocess.run(_cmd(vault), env=_env(url), capture_output=True, text=True, cwd=ROOT, timeout=120)
    out = json.loads(proc.stdout)
    assert proc.returncode == 5 and out["failures"]["truncated"] == 1 and out["failed_episodes"] == ids[:1]
    assert out["episodes_distilled"] == 1 and out["pending_after"] == 1 and out["untried_episodes"] == []
    assert "1 episodes not distilled (their batches failed)" in proc.stderr
    assert [r["type"] for r in journal(vault)] == ["distill_failed", "distill"]


def test_a_timeout_is_not_retried_and_leaves_the_episodes_pending(protocol, tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", TURNS, protocol=protocol)
    url = served([{"content": '{"cards": []}', "delay": 30.0}])
    env = _env(url, MEMVAULT_LLM_TIMEOUT="1", MEMVAULT_LLM_PER_TOKEN_TIMEOUT="0", MEMVAULT_LLM_MAX_RETRIES="3")
    proc = subprocess.run(_cmd(vault), env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)
    out = json.loads(proc.stdout)
    rec = check_failed(vault, ids, proc.returncode, out, proc.stderr, failure="llm_error", failed=1, untried=1)
    assert "did not answer within 1 s" in rec["reason"] and "not retried" in rec["reason"]
    assert len(served.log.read_text().splitlines()) == 1  # max_retries 3, yet one request


def test_the_server_killed_in_the_middle_of_a_call(protocol, tmp_path):
    vault, ids = make_vault(tmp_path / "v", TURNS, protocol=protocol)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": '{"cards": []}', "delay": 60.0}]), encoding="utf-8")
    log = tmp_path / "requests.jsonl"
    server = subprocess.Popen([sys.executable, str(ROOT / "tests/fake_llm.py"), "--port", "0", "--script",
                               str(script), "--log", str(log)], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[1]
        run = subprocess.Popen(_cmd(vault), env=_env(url), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=ROOT)
        deadline = time.monotonic() + 60
        while not (log.exists() and log.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert log.read_text().strip(), "the call never reached the server"
        server.send_signal(signal.SIGKILL)  # mid-call: the request is read, the answer never comes
        server.wait(timeout=30)
        stdout, stderr = run.communicate(timeout=120)
    finally:
        stop_process(server)
    rec = check_failed(vault, ids, run.returncode, json.loads(stdout), stderr, failure="llm_error", failed=1,
                       untried=1)
    assert "connection" in rec["reason"]
    # The next run, with a server that answers, distils both.
    replies = [{"content": '{"keep": ["c0"], "add": []}'}] * 2 if protocol == "review" else \
        [{"content": '{"cards": [["e0", "state", "The NAS now runs Unraid", "NAS OS", "Unraid", null]]}'},
         {"content": '{"cards": [["e0", "fact", "The staging box runs Debian 12"]]}'}]
    script.write_text(json.dumps(replies))
    again = subprocess.Popen([sys.executable, str(ROOT / "tests/fake_llm.py"), "--port", "0", "--script",
                              str(script)], stdout=subprocess.PIPE, text=True)
    try:
        url = again.stdout.readline().split()[1]
        proc = subprocess.run(_cmd(vault), env=_env(url), capture_output=True, text=True, cwd=ROOT, timeout=120)
    finally:
        stop_process(again)
    out = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert out["episodes_distilled"] == 2 and out["cards"]["created"] == 2 and out["pending_after"] == 0


def test_a_call_asks_for_the_answer_its_turns_can_need_and_its_timeout_follows(protocol, tmp_path, served):
    vault, ids = make_vault(tmp_path / "v", TURNS, protocol=protocol)
    url = served([], default="empty")
    env = _env(url, MEMVAULT_LLM_MAX_OUTPUT_TOKENS="4096")  # 12 turns a batch by tokens_per_episode: both here
    proc = subprocess.run(_cmd(vault), env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    [body] = [json.loads(x)["body"] for x in served.log.read_text().splitlines()][:1]
    if protocol == "write":
        assert body["max_tokens"] == 2 * 160 + 64  # 4 compact cards a turn, not the server's 4096
    else:  # a review: an id a draft and room for a card a turn
        drafts = body["messages"][1]["content"].count("\nc")
        assert drafts >= 2 and body["max_tokens"] == 10 * drafts + 40 * 2 + 32
