"""Issue 8, item 5: `show` prints the redacted, capped text of a card's source turns (JSON too), marks revoked
and missing ones, hides them with --no-sources, and reads only the day files the episode ids name."""

from __future__ import annotations

import json
import random
import string
import sys
from pathlib import Path

from memvault.vault import codec
from memvault.model import Card, Episode, Revoke
from memvault.vault.store import Vault, append_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "services"))
from search_helpers import write  # noqa: E402

CID = "c-20261103-5a5a5a"
OLD_KEYS = {"type", "id", "kind", "title", "project", "status", "confidence", "entities", "created", "valid_from",
            "valid_to", "subject", "field", "value", "tags", "path", "body", "source", "sources", "supersedes",
            "superseded_by", "chain"}


def _key() -> str:
    """A GitHub-token-shaped secret, built at run time."""
    return "ghp_" + "".join(random.choice(string.ascii_letters + string.digits) for _ in range(36))


def _ep(day: str, n: int, user: str, assistant: str, session: str = "s1") -> Episode:
    return Episode(id=f"ep-{day.replace('-', '')}T07{n:02d}00Z-{n:06x}", at=f"{day}T07:{n:02d}:00Z",
                   project="shop", session=session, turn=n + 1, user=user, assistant=assistant, hash=f"sha256:{n}")


def _append(root: Path, day: str, *records) -> None:
    v = Vault.open(root, {})
    lines = [codec.episode_to_line(r) if isinstance(r, Episode) else codec.revoke_to_line(r) for r in records]
    append_lines(v.day_file(f"{day}T00:00:00Z"), lines)


def _setup(vault: Path, key: str) -> dict[str, Episode]:
    long_user = "why postgres? " + "we need row locks for the order queue. " * 20
    eps = {
        "long": _ep("2026-11-02", 0, long_user, "Postgres, with SKIP LOCKED."),
        "zh": _ep("2026-11-02", 1, "订单表用什么数据库？", "用 Postgres，" + "支持行锁。" * 80),
        # A secret right where the cap falls: it must be redacted whole, never shown in part.
        "secret": _ep("2026-11-02", 2, "x" * 290 + " token " + key + " for deploys", "noted"),
        "edited": _ep("2026-11-02", 3, "first wording of the question", "an answer"),
    }
    _append(vault, "2026-11-02", *eps.values())
    # Revokes come later than the turns they withdraw: one history edit, one purge (its line is gone).
    purged = "ep-20261102T070400Z-000004"
    _append(vault, "2026-11-03", Revoke(ids=(eps["edited"].id,), reason="history-edit", at="2026-11-03T08:00:00Z"))
    _append(vault, "2026-11-04", Revoke(ids=(purged,), reason="purge", at="2026-11-04T08:00:00Z"))
    sources = [e.id for e in eps.values()] + [purged, "ep-20261102T070500Z-ffffff", "ep-bogus"]
    write(vault, Card(id=CID, kind="decision", title="Use Postgres for the order queue", project="shop",
                      created="2026-11-03T08:00:00Z", valid_from="2026-11-02",
                      source={"kind": "distill", "run": "r-1", "episodes": sources}))
    return eps


def test_show_json_lists_each_source_turn_redacted_and_capped(run, vault):
    key = _key()
    eps = _setup(vault, key)
    data = run.json("show", CID)
    assert OLD_KEYS <= set(data)  # the keys that were there stay, with the same values
    assert data["sources"][:4] == [e.id for e in eps.values()]
    got = {s["id"]: s for s in data["source_episodes"]}
    assert [s["id"] for s in data["source_episodes"]] == data["sources"]
    long = got[eps["long"].id]
    assert long["status"] == "live" and long["revoked_reason"] is None
    assert (long["at"], long["project"], long["session"], long["turn"]) == ("2026-11-02T07:00:00Z", "shop", "s1", 1)
    assert long["cut"] and long["user"].endswith("[…]") and len(long["user"]) <= 300 + 4
    assert long["user"].startswith("why postgres? we need row locks")
    assert long["assistant"] == "Postgres, with SKIP LOCKED."
    zh = got[eps["zh"].id]
    assert zh["user"] == "订单表用什么数据库？" and zh["cut"] and zh["assistant"].startswith("用 Postgres，支持行锁。")
    secret = got[eps["secret"].id]
    assert "[REDACTED:" in secret["user"] and secret["cut"]
    assert key[:10] not in json.dumps(data) and key[4:14] not in json.dumps(data)
    edited = got[eps["edited"].id]
    assert edited["status"] == "revoked" and edited["revoked_reason"] == "history-edit"
    assert edited["user"] == "first wording of the question"  # still shown, marked
    purged = got["ep-20261102T070400Z-000004"]
    assert purged["status"] == "revoked" and purged["revoked_reason"] == "purge" and purged["user"] is None
    assert got["ep-20261102T070500Z-ffffff"]["status"] == "missing"
    assert got["ep-bogus"]["status"] == "missing" and got["ep-bogus"]["user"] is None


def test_show_text_prints_source_turns_and_no_sources_hides_them(run, vault):
    key = _key()
    eps = _setup(vault, key)
    out = run("show", CID).stdout
    assert "user: why postgres? we need row locks" in out and "[…]" in out
    assert "assistant: Postgres, with SKIP LOCKED." in out
    assert "user: 订单表用什么数据库？" in out
    assert f"{eps['edited'].id}  2026-11-02T07:03:00Z  shop/s1 turn 4  (revoked: history-edit)" in out
    assert "ep-20261102T070400Z-000004  (revoked: purge)" in out
    assert "ep-20261102T070500Z-ffffff  (not found)" in out
    assert key not in out and key[:10] not in out
    hidden = run("show", CID, "--no-sources").stdout
    assert "user:" not in hidden and "why postgres" not in hidden
    assert "sources: " + ", ".join([e.id for e in eps.values()]) in hidden
    data = run.json("show", CID, "--no-sources")
    assert "source_episodes" not in data and data["sources"][0] == eps["long"].id


def test_show_reads_only_the_day_files_the_ids_name(run, vault):
    eps = _setup(vault, _key())
    # Decoys in an earlier day file: an episode line with the same id and a revoke naming it. A lookup that
    # scanned the whole history in order would take them; the id says the turn lives in 2026-11-02.
    decoy = Episode(**{**eps["long"].__dict__, "user": "DECOY TEXT"})
    _append(vault, "2026-11-01", decoy, Revoke(ids=(eps["zh"].id,), reason="history-edit",
                                                at="2026-11-01T08:00:00Z"))
    got = {s["id"]: s for s in run.json("show", CID)["source_episodes"]}
    assert got[eps["long"].id]["user"].startswith("why postgres?")
    assert got[eps["zh"].id]["status"] == "live"


def test_show_of_a_hand_written_card_says_so(run):
    cid = run.json("remember", "Deploys only on weekdays", "--kind", "rule")["id"]
    assert "sources: (written by hand)" in run("show", cid).stdout
    assert run.json("show", cid)["source_episodes"] == []


def test_show_of_a_folded_card_does_not_call_it_hand_written(run, vault):
    from memvault.mcp import tools

    for i in range(1, 5):
        run("remember", f"Redis keeps the session store, note {i}", "--kind", "fact", "-e", "Redis",
            "--project", "shop", "--valid-from", f"2025-0{i}-01")
    folded = run.json("consolidate", "--fold-only")["folded"][0]["id"]
    out = run("show", folded).stdout
    assert "written by hand" not in out
    assert "sources: (none: folded from the cards it lists)" in out
    mcp_text = tools.show(tools.Ctx(vault, {}), folded).text  # MCP `show` renders the same way
    assert "written by hand" not in mcp_text and "(none: folded from the cards it lists)" in mcp_text


def test_show_names_the_speakers_of_a_source_turn(run, vault):
    ep = Episode(id="ep-20261102T070000Z-00aa01", at="2026-11-02T07:00:00Z", project="rp", session="s9", turn=1,
                 user="今晚在河边扎营。", assistant="I keep the first watch.", hash="sha256:aa",
                 speakers={"user": ["林晚"], "assistant": ["Seraphina", "Kael"]})
    plain = Episode(id="ep-20261102T070100Z-00aa02", at="2026-11-02T07:01:00Z", project="rp", session="s9", turn=2,
                    user="and at dawn?", assistant="We cross the bridge.", hash="sha256:ab")
    _append(vault, "2026-11-02", ep, plain)
    write(vault, Card(id=CID, kind="event", title="Camp by the river", project="rp", created="2026-11-03T08:00:00Z",
                      source={"kind": "distill", "run": "r-1", "episodes": [ep.id, plain.id]}))
    out = run("show", CID).stdout
    assert "user (林晚): 今晚在河边扎营。" in out and "assistant (Seraphina, Kael): I keep the first watch." in out
    assert "user: and at dawn?" in out and "assistant: We cross the bridge." in out
    got = {s["id"]: s for s in run.json("show", CID)["source_episodes"]}
    assert got[ep.id]["speakers"] == {"user": ["林晚"], "assistant": ["Seraphina", "Kael"]}
    assert got[plain.id]["speakers"] == {}
