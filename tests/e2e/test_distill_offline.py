"""The offline distill engine (issue 10) through the real CLI in real processes: no endpoint configured, zh and
en episodes become `confidence: extracted` cards; hedges and questions become nothing; a state change
supersedes the card with the old value; the journal names the engine; a rerun is a no-op; a held lock exits 4;
kill -9 at any commit point then a rerun gives the tree an uninterrupted run gives; no secret reaches a card."""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import signal
import string
import subprocess
import sys
from pathlib import Path

import pytest
from fake_llm import stop_process

from memvault.vault import codec
from write_protocol import use_write  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-03T08:00:00Z"

# (user, assistant) turns of one session; the comment says what each should yield.
TURNS = [
    ("Quick context: the NAS IP is 192.168.1.40 and it runs TrueNAS Scale.", "Noted."),  # 2 facts
    ("should we put Jellyfin on the NAS or on the mini PC?", "The mini PC: it can transcode."),  # question
    ("Let's go with the mini PC for Jellyfin.", "Done."),  # decision
    ("maybe we should switch the backups to restic at some point, not sure yet", "Sure."),  # hedge
    ("what if we used Proxmox instead?", "Possible."),  # hypothetical
    ("I prefer short answers with the exact commands.", "OK."),  # preference
    ("小账本的后端我们决定用 FastAPI，Django 太重了。", "好的。"),  # decision
    ("如果以后要多人同时记账，用 Postgres 呢？", "可以考虑。"),  # hypothetical
    ("金额必须用整数存，单位是分。", "明白。"),  # rule
    ("记住：服务器端口是 8080。", "记下了。"),  # fact (memory request)
    ("Update: we moved the NAS from TrueNAS Scale to Unraid over the weekend.", "Nice."),  # state, supersedes
    ("不用 FastAPI 了，后端改用 Flask。", "好。"),  # state, supersedes the FastAPI decision
]


def rand(n: int) -> str:
    return "".join(random.choice(string.ascii_letters + string.digits) for _ in range(n))


def episode_lines(turns, day="2026-11-02", project="demo", session="s1", start=0) -> list[str]:
    from memvault.model import Episode

    lines = []
    for i, (user, assistant) in enumerate(turns):
        n = start + i
        ep = Episode(id=f"ep-{day.replace('-', '')}T07{n // 60:02d}{n % 60:02d}-{n:06x}", at=f"{day}T07:{n:02d}:00Z",
                     project=project, session=session, turn=n + 1, user=user, assistant=assistant,
                     hash=f"sha256:{n}")
        lines.append(codec.episode_to_line(ep))
    return lines


def make_vault(path: Path, turns=TURNS) -> Path:
    shutil.copytree(ROOT / "vault-template", path)
    use_write(path)  # its fake models write every card (tests/write_protocol.py)
    (path / "episodes/2026/11").mkdir(parents=True)
    (path / "episodes/2026/11/2026-11-02.jsonl").write_text("\n".join(episode_lines(turns)) + "\n", encoding="utf-8")
    return path


def memvault(vault: Path, *args: str, extra_env: dict | None = None, **kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["MEMVAULT_NOW"] = NOW
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), *args],
                          env=env, capture_output=True, text=True, cwd=ROOT, timeout=120, **kw)


def cards(vault: Path) -> list:
    return [codec.parse_card(p.read_text(encoding="utf-8"), str(p)) for p in sorted((vault / "cards").rglob("*.md"))]


def journal(vault: Path) -> list[dict]:
    return [json.loads(line) for p in sorted((vault / "journal").glob("*.jsonl"))
            for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(root).parts}


def test_offline_distill_with_no_endpoint_zh_and_en(tmp_path):
    vault = make_vault(tmp_path / "v")
    done = memvault(vault, "distill", "--json")
    assert done.returncode == 0, done.stderr
    got = cards(vault)
    active = [c for c in got if c.status == "active"]
    summary = json.loads(done.stdout)
    assert (summary["engine"], summary["cards"]["created"], summary["episodes_distilled"]) == (
        "offline", len(got), len(TURNS))
    assert {c.confidence for c in got} == {"extracted"}
    by_title = {c.title: c for c in got}
    kinds = sorted((c.kind, c.status) for c in got)
    assert kinds == sorted([
        ("fact", "active"), ("fact", "superseded"), ("decision", "active"), ("preference", "active"),
        ("decision", "superseded"), ("rule", "active"), ("fact", "active"), ("state", "active"), ("state", "active"),
    ]), [(c.kind, c.title) for c in got]
    # Each card cites exactly the episode its words come from, and its body quotes them, naming who said them.
    eps = {json.loads(line)["user"]: json.loads(line)["id"]
           for line in (vault / "episodes/2026/11/2026-11-02.jsonl").read_text(encoding="utf-8").splitlines()}
    for c in got:
        (ep,) = c.episodes
        user = next(u for u, i in eps.items() if i == ep)
        assert c.body.startswith("The user said: ") and c.body.split(": ", 1)[1].split("，")[0][:12] in user
        assert c.kind == "state" or c.title.split("，")[0].split(", ")[0] in user
    assert any("192.168.1.40" in t for t in by_title) and any("8080" in t for t in by_title)
    # Nothing from the question, the hedge or the hypotheticals.
    silent = {eps[u] for u, _ in TURNS if u.endswith(("?", "？")) or u.startswith("maybe")}
    assert len(silent) == 4 and not silent & {e for c in got for e in c.episodes}
    assert any("FastAPI" in c.entities or "fastapi" in c.entities for c in active + got)


def test_state_change_supersedes_the_card_with_the_old_value(tmp_path):
    vault = make_vault(tmp_path / "v")
    assert memvault(vault, "distill").returncode == 0
    got = {c.id: c for c in cards(vault)}
    nas = next(c for c in got.values() if c.kind == "state" and c.value.startswith("Unraid"))
    (old,) = nas.supersedes
    assert "TrueNAS Scale" in got[old].title and got[old].status == "superseded"
    assert got[old].superseded_by == (nas.id,)
    flask = next(c for c in got.values() if c.kind == "state" and "Flask" in c.value)
    assert "FastAPI" in got[flask.supersedes[0]].title
    # A later run: the next change supersedes the state card (same subject), not the older fact.
    more = episode_lines([("我们不用 Flask 了，后端改用 Litestar。", "好。")], day="2026-11-02", start=40)
    with open(vault / "episodes/2026/11/2026-11-02.jsonl", "a", encoding="utf-8") as f:
        f.write(more[0] + "\n")
    done = memvault(vault, "distill", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["engine"] == "offline" and summary["cards"]["superseded"] == 1 and summary["calls"] == 0
    after = {c.id: c for c in cards(vault)}
    newest = next(c for c in after.values() if c.kind == "state" and "Litestar" in c.value)
    assert newest.supersedes == (flask.id,) and after[flask.id].status == "superseded"


def test_journal_line_names_the_engine_and_rerun_is_a_noop(tmp_path):
    vault = make_vault(tmp_path / "v")
    assert memvault(vault, "distill").returncode == 0
    lines = journal(vault)
    assert lines and all(r["engine"] == "offline" and r["model"] == "offline" for r in lines)
    assert all(r["usage"] == {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0} for r in lines)
    assert sorted(e for r in lines for e in r["episodes"]) == sorted(
        json.loads(x)["id"] for x in (vault / "episodes/2026/11/2026-11-02.jsonl").read_text().splitlines())
    before = tree(vault)
    again = memvault(vault, "distill", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["episodes_distilled"] == 0
    assert tree(vault) == before


def test_a_held_lock_exits_4(tmp_path):
    vault = make_vault(tmp_path / "v")
    (vault / ".memvault").mkdir(exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, json, os, sys, time\n"
         f"fd = os.open({str(vault / '.memvault/distill.lock')!r}, os.O_RDWR | os.O_CREAT)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "os.write(fd, json.dumps({'pid': os.getpid(), 'since': 'now'}).encode())\n"
         "print('HELD', flush=True)\n"
         "time.sleep(600)\n"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "HELD"
        done = memvault(vault, "distill")
        assert done.returncode == 4
        assert f"pid {holder.pid}" in done.stderr
        assert not list((vault / "cards").rglob("*.md")) and not journal(vault)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    assert fcntl  # the holder uses a real flock, as memvault does


@pytest.mark.parametrize("point", ["after-card:1", "before-journal:2", "after-journal:2", "after-card:3"])
def test_kill_9_mid_run_then_rerun_gives_the_uninterrupted_tree(tmp_path, point):
    ref = make_vault(tmp_path / "ref")
    assert memvault(ref, "distill").returncode == 0
    assert len(journal(ref)) >= 3  # the state changes cut the run into batches
    vault = make_vault(tmp_path / "crash")
    crashed = memvault(vault, "distill", extra_env={"MEMVAULT_CRASH_AT": point})
    assert crashed.returncode == -signal.SIGKILL
    rerun = memvault(vault, "distill")
    assert rerun.returncode == 0, rerun.stderr
    assert tree(vault) == tree(ref)
    episodes = [e for r in journal(vault) for e in r["episodes"]]
    assert len(episodes) == len(set(episodes)) == len(TURNS)


def test_no_secret_reaches_a_card(tmp_path):
    secret = "sk-" + "proj-" + rand(48)
    turns = [(f"Remember that the staging API key is {secret} and the port is 9000.", "ok"),
             (f"we'll go with token {secret} for the deploy bot", "ok")]
    vault = make_vault(tmp_path / "v", turns)  # written by hand: the engine's output is redacted on its own
    done = memvault(vault, "distill")
    assert done.returncode == 0, done.stderr
    assert cards(vault), done.stdout
    for p in (vault / "cards").rglob("*"):
        if p.is_file():
            assert secret not in p.read_text(encoding="utf-8")
    for p in (vault / "journal").glob("*"):
        assert secret not in p.read_text(encoding="utf-8")
    assert secret[:20] not in done.stdout + done.stderr


def test_engine_setting(tmp_path):
    vault = make_vault(tmp_path / "v")
    stats = memvault(vault, "stats")
    assert stats.returncode == 0 and "distill uses the offline engine" in stats.stdout
    yaml = vault / "memvault.yaml"
    text = yaml.read_text(encoding="utf-8")
    yaml.write_text(text.replace("  engine: auto ", "  engine: llm  "), encoding="utf-8")
    done = memvault(vault, "distill")
    assert done.returncode == 2 and "no endpoint is configured" in done.stderr
    yaml.write_text(text.replace("  engine: auto ", "  engine: magic"), encoding="utf-8")
    done = memvault(vault, "distill")
    assert done.returncode == 2 and "distill.engine must be one of" in done.stderr
    # auto with an endpoint is the LLM: a dead endpoint is an llm_error (exit 5), never an offline run.
    yaml.write_text(text, encoding="utf-8")
    done = memvault(vault, "distill", "--json", extra_env={"MEMVAULT_LLM_BASE_URL": "http://127.0.0.1:9/v1",
                                                          "MEMVAULT_LLM_MAX_RETRIES": "0"})
    assert done.returncode == 5 and json.loads(done.stdout)["engine"] == "llm"
    # The failed batch has its journal line (issue 33: every failed batch), and nothing is marked distilled.
    assert [(r["type"], r["failure"]) for r in journal(vault)] == [("distill_failed", "llm_error")]
    # --engine chooses for one run: offline with the endpoint still configured, llm over distill.engine offline.
    done = memvault(vault, "distill", "--json", "--engine", "offline",
                    extra_env={"MEMVAULT_LLM_BASE_URL": "http://127.0.0.1:9/v1"})
    assert done.returncode == 0 and json.loads(done.stdout)["engine"] == "offline"
    assert json.loads(done.stdout)["episodes_distilled"] > 0
    done = memvault(vault, "distill", "--engine", "llm")
    assert done.returncode == 2 and "no endpoint is configured" in done.stderr


# ---------------------------------------------------------------- distill --upgrade (issue 10 item 2)


def model_reply(body: dict) -> str:
    """Fake model (runs inside the fake server process): one card per turn that states something, kind chosen
    from the words as a model would; nothing for questions, hedges and hypotheticals."""
    import re as _re

    user = body["messages"][1]["content"]
    cards = []
    for n, text in _re.findall(r"^\[e(\d+)\] .*\nUSER: (.*)$", user, _re.M):
        if text.rstrip().endswith(("?", "？")) or text.startswith(("maybe", "what if")):
            continue
        kind = ("state" if "moved" in text or "改用" in text else "preference" if "prefer" in text
                else "rule" if "必须" in text else "decision" if "go with" in text or "决定" in text else "fact")
        card = {"action": "create", "kind": kind, "title": "model: " + text[:60], "body": "from the model",
                "entities": [], "valid_from": None, "confidence": "user_stated", "episodes": [f"e{n}"]}
        if kind == "state":
            card.update(subject="model subject " + n, field="value", value=text[-20:])
        cards.append(card)
    return json.dumps({"cards": cards}, ensure_ascii=False)


def start_fake(tmp_path: Path):
    from fake_llm import start_process

    return start_process(tmp_path / "requests.jsonl", f"{__file__}:model_reply")


def test_upgrade_sends_offline_turns_to_the_model_once(tmp_path):
    vault = make_vault(tmp_path / "v")
    assert memvault(vault, "distill").returncode == 0
    extracted = {c.id: c for c in cards(vault)}
    assert memvault(vault, "distill", "--upgrade").returncode == 2  # no endpoint: nothing to upgrade with
    proc, url, log = start_fake(tmp_path)
    try:
        env = {"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_LLM_MAX_RETRIES": "0"}
        plain = memvault(vault, "distill", "--json", extra_env=env)
        assert plain.returncode == 0 and json.loads(plain.stdout)["calls"] == 0  # nothing distilled twice
        done = memvault(vault, "distill", "--upgrade", "--json", extra_env=env)
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["engine"] == "llm" and summary["calls"] >= 1 and summary["pending_after"] == 0
        assert summary["episodes_distilled"] == len(TURNS)
        after = {c.id: c for c in cards(vault)}
        model = [c for c in after.values() if c.confidence == "user_stated"]
        assert len(model) == 7  # one per stating turn, but the FastAPI one merged (below)
        # Every extracted card is still there (nothing lost); those the model restated are superseded by it.
        assert set(extracted) <= set(after)
        replaced = [c for c in after.values() if c.id in extracted and c.status == "superseded"
                    and any(after[n].confidence == "user_stated" for n in c.superseded_by)]
        assert len(replaced) == 7  # each model card replaced the extracted card of its turn …
        for old in replaced:
            (new,) = old.superseded_by
            assert set(after[new].episodes) & set(old.episodes)
        # … except the FastAPI decision, which a later turn had changed: the model's wording merged into the
        # extracted card, which stays superseded by the change (the old value does not come back as current).
        fastapi = next(c for c in after.values() if c.id in extracted and c.kind == "decision" and "FastAPI" in c.title)
        assert fastapi.title.startswith("model: ") and fastapi.status == "superseded"
        assert not [c for c in after.values() if c.status == "active" and c.kind == "decision" and "FastAPI" in c.title]
        assert not [c for c in after.values() if c.status == "active" and c.confidence == "extracted"]
        lines = journal(vault)
        assert {r["engine"] for r in lines} == {"offline", "llm"}
        requests = log.read_text().count("\n")
        before = tree(vault)
        again = memvault(vault, "distill", "--upgrade", "--json", extra_env=env)
        assert again.returncode == 0 and json.loads(again.stdout)["calls"] == 0
        assert log.read_text().count("\n") == requests and tree(vault) == before
    finally:
        stop_process(proc)


def test_auto_upgrades_when_the_config_says_so(tmp_path):
    vault = make_vault(tmp_path / "v")
    assert memvault(vault, "distill").returncode == 0  # offline, no endpoint
    proc, url, log = start_fake(tmp_path)
    try:
        env = {"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_LLM_MAX_RETRIES": "0"}
        settings = (vault / "memvault.yaml").read_text(encoding="utf-8")
        rules = settings.replace("min_episodes: 20", "min_episodes: 1").replace("min_gap_minutes: 30",
                                                                             "min_gap_minutes: 0")
        (vault / "memvault.yaml").write_text(rules, encoding="utf-8")
        off = memvault(vault, "distill", "--auto", "--json", extra_env=env)
        assert off.returncode == 0 and json.loads(off.stdout)["ran"] is False  # auto.upgrade is off: nothing waits
        (vault / "memvault.yaml").write_text(rules.replace("upgrade: false", "upgrade: true"), encoding="utf-8")
        on = memvault(vault, "distill", "--auto", extra_env=env)
        assert on.returncode == 0, on.stderr
        assert {r["engine"] for r in journal(vault)} == {"offline", "llm"}
        assert [r for r in journal(vault) if r["engine"] == "llm" and r["episodes"]]
        requests = log.read_text().count("\n")
        assert requests >= 1
        again = memvault(vault, "distill", "--auto", "--json", extra_env=env)
        assert again.returncode == 0 and json.loads(again.stdout)["ran"] is False
        assert log.read_text().count("\n") == requests
    finally:
        stop_process(proc)
