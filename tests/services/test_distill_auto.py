"""`distill --auto` cron rules: arithmetic only, quiet hours across midnight, min_gap checked first."""

from __future__ import annotations

import json
import time

import pytest

from memvault.distill.auto import decide, in_quiet_hours, parse_quiet_hours

# Their fake models write every card: the write protocol (tests/write_protocol.py).
pytestmark = pytest.mark.usefixtures("write_protocol")

RULES = {"min_episodes": 20, "every_minutes": 240, "min_gap_minutes": 30, "quiet_hours": "23:00-07:00"}


def d(local_hhmm: str, *, pending=25, last_attempt=None, last_success=None, oldest=None, now="2026-11-03T12:00:00Z",
      **rules):
    h, m = map(int, local_hhmm.split(":"))
    return decide({**RULES, **rules}, now_utc=now, local_minute=h * 60 + m, pending=pending,
                  last_attempt=last_attempt, last_success=last_success, oldest_pending=oldest)


@pytest.mark.parametrize("hhmm,quiet", [("22:59", False), ("23:00", True), ("23:59", True), ("00:00", True),
                                         ("03:30", True), ("06:59", True), ("07:00", False), ("12:00", False)])
def test_quiet_hours_wrap_midnight(hhmm, quiet):
    assert d(hhmm).run is not quiet
    assert ("quiet_hours" in d(hhmm).reason) is quiet


def test_quiet_hours_within_one_day_and_empty():
    assert in_quiet_hours(13 * 60, parse_quiet_hours("12:00-14:00"))
    assert not in_quiet_hours(14 * 60, parse_quiet_hours("12:00-14:00"))
    assert parse_quiet_hours("") is None


@pytest.mark.parametrize("bad", ["night", "25:00-07:00", "23:00", "11pm-7am"])
def test_unparseable_quiet_hours_are_ignored_with_a_warning(bad):
    result = d("03:00", quiet_hours=bad)
    assert result.run and result.warnings and "ignored" in result.warnings[0]


def test_min_gap_is_checked_first_even_in_quiet_hours():
    result = d("03:00", last_attempt="2026-11-03T11:45:00Z")
    assert not result.run and "min_gap_minutes" in result.reason
    assert d("12:00", last_attempt="2026-11-03T11:29:00Z").run


def test_min_episodes_and_every_minutes():
    assert d("12:00", pending=0).reason == "no episodes waiting"
    assert d("12:00", pending=20).run
    few = d("12:00", pending=3, last_success="2026-11-03T10:00:00Z")
    assert not few.run and "min_episodes" in few.reason
    assert d("12:00", pending=3, last_success="2026-11-03T08:00:00Z").run  # 240 min since the last distill
    assert not d("12:00", pending=3, oldest="2026-11-03T11:00:00Z").run  # never distilled: oldest waiting one
    assert d("12:00", pending=3, oldest="2026-11-03T07:59:00Z").run


def test_auto_cli_explains_and_records_the_attempt_before_the_call(vault, run, fake_llm, monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_distill import add_episodes, one_card_each

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        env = {"MEMVAULT_LLM_BASE_URL": fake_llm.base_url, "MEMVAULT_NOW": "2026-11-03T03:00:00Z"}
        add_episodes(vault, [(f"Decision {i} about tool{i}", "ok") for i in range(3)])
        (vault / "memvault.yaml").write_text((vault / "memvault.yaml").read_text().replace(
            'quiet_hours: ""', 'quiet_hours: "23:00-07:00"'))
        out = run("distill", "--auto", "--explain", env=env)
        assert out.stdout.startswith("would not run: inside quiet_hours")
        env["MEMVAULT_NOW"] = "2026-11-03T12:00:00Z"
        data = run.json("distill", "--auto", "--explain", env=env)
        assert data["auto"]["run"] and not data["ran"] and fake_llm.requests == []
        fake_llm.set_default(lambda body: {"status": 500})
        env["MEMVAULT_LLM_MAX_RETRIES"] = "0"
        run("distill", "--auto", code=5, env=env)  # the attempt failed …
        state = json.loads((vault / ".memvault/distill.json").read_text())
        assert state["last_attempt"] == "2026-11-03T12:00:00Z"
        env["MEMVAULT_NOW"] = "2026-11-03T12:10:00Z"
        fake_llm.set_default(one_card_each)
        out = run("distill", "--auto", env=env)  # … and min_gap keeps the next cron tick quiet
        assert out.stdout == "" and out.stderr == "" and len(fake_llm.requests) == 1
        env["MEMVAULT_NOW"] = "2026-11-03T12:40:00Z"
        run("distill", "--auto", env=env)
        assert len(fake_llm.requests) == 2 and list((vault / "cards").glob("*/*.md"))
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
