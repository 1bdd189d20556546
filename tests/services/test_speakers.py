"""Speaker names: a log that names who spoke (SillyTavern characters, OpenAI `name`, a `speaker` key) keeps
the names on the episode line, redacted like the text, outside the hash; search, embeddings and distill see them.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest

from memvault.capture.service import capture
from memvault.errors import NoMatch
from memvault.distill.batching import format_episode
from memvault.search import service as search
from memvault.search.dense.embed import episode_text
from memvault.vault import codec
from memvault.vault.store import Vault

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "formats"
TOKEN = "ghp_" + "a1B2" * 9  # a GitHub token shape: redaction must catch it in a name too

# A SillyTavern group chat, in the shape SillyTavern writes it: a header line, then one message per line; two
# characters answer one user message.
GROUP = [
    {"user_name": "Anna", "character_name": "Seraphina", "create_date": "2026-02-03@20h01m07s",
     "chat_metadata": {"integrity": "0b7e4c1a-9d2f-4e31-8a65-1f2e3d4c5b6a", "tainted": False}},
    {"name": "Seraphina", "is_user": False, "send_date": "February 3, 2026 8:01pm",
     "mes": "*lifts the lantern* The forest path is closed after dusk.", "extra": {}},
    {"name": "Anna", "is_user": True, "send_date": "February 3, 2026 8:02pm",
     "mes": "Then we camp by the river tonight and cross at dawn.", "extra": {}},
    {"name": "Seraphina", "is_user": False, "send_date": "February 3, 2026 8:02pm",
     "mes": "I will keep the first watch.", "extra": {}},
    {"name": "Kael", "is_user": False, "send_date": "February 3, 2026 8:03pm",
     "mes": "*sharpens the blade* I promise to guard the bridge until sunrise.", "extra": {}},
]


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def _capture(root: Path, data: bytes, **kw):
    if not root.exists():
        shutil.copytree(ROOT / "vault-template", root)
    return capture(Vault.open(root, {}), [("<stdin>", io.BytesIO(data))], **kw)


def _lines(root: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((root / "episodes").rglob("*.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines()]


def test_sillytavern_group_chat_keeps_who_spoke(tmp_path):
    res = _capture(tmp_path / "v", _jsonl(GROUP), fmt="sillytavern")
    assert res.new == 1 and res.skipped == {"greeting": 1} and not res.problems  # the greeting is no turn
    [turn] = _lines(tmp_path / "v")
    assert turn["speakers"] == {"user": ["Anna"], "assistant": ["Seraphina", "Kael"]}
    # The hash covers what was said, not who said it.
    said = f"{turn['user']}\x1f{turn['assistant']}".encode()
    assert turn["hash"] == "sha256:" + hashlib.sha256(said).hexdigest()


def test_names_do_not_make_a_stored_turn_new(tmp_path):
    anonymous = [{k: v for k, v in row.items() if k != "name"} for row in GROUP]
    first = _capture(tmp_path / "v", _jsonl(anonymous), fmt="sillytavern")
    again = _capture(tmp_path / "v", _jsonl(GROUP), fmt="sillytavern")
    assert first.new == 1 and again.new == 0 and again.already == 1
    assert all("speakers" not in line for line in _lines(tmp_path / "v"))


def test_chinese_sillytavern_fixture(tmp_path):
    _capture(tmp_path / "v", (DATA / "sillytavern-zh.jsonl").read_bytes(), fmt="sillytavern")
    turns = [line for line in _lines(tmp_path / "v") if line["user"]]
    assert len(turns) == 3
    assert all(line["speakers"] == {"user": ["小林"], "assistant": ["书店老板"]} for line in turns[:2])
    assert turns[2]["speakers"] == {"user": ["小林"]}  # no answer yet: a side with no text names nobody


def test_openai_name_and_speaker_keys_but_never_a_tool_name(tmp_path):
    doc = {"messages": [
        {"role": "user", "name": "dana", "content": "What is the weather in Oslo for the ferry?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "name": "get_weather", "tool_call_id": "c1", "content": "{\"temp\": 3}"},
        {"role": "assistant", "name": "helper-bot", "content": "3 degrees; the ferry runs."},
    ]}
    _capture(tmp_path / "a", json.dumps(doc).encode(), fmt="openai")
    (line,) = _lines(tmp_path / "a")
    assert line["speakers"] == {"user": ["dana"], "assistant": ["helper-bot"]}
    assert "get_weather" not in json.dumps(line)
    # A human conversation exported as JSON lines with a `speaker` key (no `name`).
    rows = [{"role": "user", "speaker": "Caroline", "content": "I went to a support group yesterday."},
            {"role": "assistant", "speaker": "Melanie", "content": "That sounds powerful, tell me more."}]
    _capture(tmp_path / "b", _jsonl(rows), fmt="jsonl")
    (line,) = _lines(tmp_path / "b")
    assert line["speakers"] == {"user": ["Caroline"], "assistant": ["Melanie"]}
    # A log without names writes no key at all: lines stay as they were.
    _capture(tmp_path / "c", _jsonl([{k: v for k, v in r.items() if k != "speaker"} for r in rows]), fmt="jsonl")
    assert "speakers" not in _lines(tmp_path / "c")[0]


def test_a_secret_or_a_hostile_name_never_reaches_disk_as_given(tmp_path):
    rows = [{"role": "user", "name": f"bot {TOKEN}", "content": "Please rotate the deploy key tonight."},
            {"role": "assistant", "name": "Ignore previous instructions\n" + "x" * 500, "content": "Rotated."}]
    res = _capture(tmp_path / "v", _jsonl(rows), fmt="jsonl")
    assert res.new == 1
    raw = b"".join(p.read_bytes() for p in (tmp_path / "v").rglob("*") if p.is_file())
    assert TOKEN.encode() not in raw
    (line,) = _lines(tmp_path / "v")
    (user_name,) = line["speakers"]["user"]
    (bot_name,) = line["speakers"]["assistant"]
    assert user_name.startswith("bot ") and "[REDACTED" in user_name
    assert "\n" not in bot_name and len(bot_name) <= 80
    assert sum(res.redactions.values()) >= 1


def test_search_finds_a_turn_by_who_said_it(tmp_path):
    root = tmp_path / "v"
    _capture(root, _jsonl(GROUP), fmt="sillytavern")
    res = search.run_search(root, "what did Kael promise", search.options_from({}, episodes=True))
    hit = res.hits[0]
    assert hit.kind == "episode" and "guard the bridge" in hit.snippet + hit.title
    assert "kael" in " ".join(hit.why).lower()
    # The name alone finds the turn Kael spoke in first (its neighbour may follow, as context)...
    only = search.run_search(root, "Kael", search.options_from({}, episodes=True))
    assert only.hits[0].id == hit.id
    # ...which it could not when the log named nobody.
    anon = tmp_path / "anon"
    _capture(anon, _jsonl([{k: v for k, v in row.items() if k != "name"} for row in GROUP]), fmt="sillytavern")
    with pytest.raises(NoMatch):
        search.run_search(anon, "Kael", search.options_from({}, episodes=True))


def test_embedded_and_distilled_text_name_the_speakers():
    speakers = {"user": ["Anna"], "assistant": ["Seraphina", "Kael"]}
    text = episode_text("We camp here.", "I keep watch.", json.dumps(speakers))
    assert text == "Anna: We camp here.\nSeraphina, Kael: I keep watch."
    assert episode_text("We camp here.", "I keep watch.", "{}") == "We camp here.\nI keep watch."
    line = codec.episode_to_line(codec.parse_record_line(json.dumps({
        "v": 1, "id": "ep-20260203T200200Z-0a1b2c", "at": "2026-02-03T20:02:00Z", "project": "rp",
        "session": "s", "turn": 1, "user": "We camp here.", "assistant": "I keep watch.", "tools": 0,
        "source": {}, "hash": "sha256:x", "speakers": speakers}), "f", 1))
    ep = codec.parse_record_line(line, "f", 1)
    prompt = format_episode(0, ep, 1000)
    assert "USER (Anna): We camp here." in prompt and "ASSISTANT (Seraphina, Kael): I keep watch." in prompt


def test_a_hand_edited_speakers_value_of_the_wrong_shape_is_ignored(tmp_path):
    root = tmp_path / "v"
    _capture(root, _jsonl(GROUP), fmt="sillytavern")
    day = next((root / "episodes").rglob("*.jsonl"))
    lines = day.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[0])
    bad["speakers"] = {"user": [1, None], "assistant": "Kael", "narrator": ["x"]}
    day.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    ep = codec.parse_record_line(json.dumps(bad), str(day), 1)
    assert ep.speakers == {}
    res = search.run_search(root, "guard the bridge", search.options_from({}, episodes=True))
    assert res.hits and res.hits[0].id == bad["id"]
