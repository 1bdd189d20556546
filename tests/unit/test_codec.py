"""Round trips of every record type (Chinese included) and clear errors for broken files."""

from __future__ import annotations

import pytest

from memvault.vault import codec
from memvault.errors import VaultFormatError
from memvault.model import Card, Entity, Episode, Revoke


def test_episode_round_trip_chinese():
    ep = Episode(id="ep-20261102T075301Z-3f9a1c", at="2026-11-02T07:53:01Z", project="长夜小说", session="s-7f2e",
                 turn=12, user="主角林晚的住址改成雾港", assistant="好的，已记录。\n第二行", tools=3,
                 source={"kind": "claude-code", "host": "laptop", "ref": "a1", "refs": ["a1", "b2"]},
                 hash="sha256:00")
    line = codec.episode_to_line(ep)
    assert "\n" not in line and "林晚" in line and ": " not in line.replace("ep-", "")[:0] + line[:1]
    assert codec.parse_record_line(line, "x.jsonl", 1) == ep
    assert codec.parse_record_line(line.encode("utf-8"), "x.jsonl", 1) == ep


def test_revoke_round_trip():
    rv = Revoke(ids=("ep-1", "ep-2"), reason="history-edit", at="2026-11-03T09:00:00Z", session="s")
    assert codec.parse_record_line(codec.revoke_to_line(rv), "x", 1) == rv


def test_card_round_trip_keeps_unknown_keys_and_order():
    card = Card(id="c-20261102-7f3a", kind="state", title="林晚搬到了雾港", body="她在第三章搬家。\n\nSecond para.",
                project="changye-novel", entities=("林晚", "雾港"), created="2026-11-02T07:40:12Z",
                valid_from="2026-11-02", status="active", confidence="inferred", subject="林晚", field="住址",
                value="雾港", source={"kind": "distill", "run": "r-1", "episodes": ["ep-1"]},
                supersedes=("c-20261001-aaaa",), tags=("plot",), extra={"my_note": "keep me", "z": [1, 2]})
    text = codec.card_to_text(card)
    assert text.splitlines()[1:4] == ["id: c-20261102-7f3a", "kind: state", "title: 林晚搬到了雾港"]
    assert "created: 2026-11-02T07:40:12Z" in text and "valid_from: 2026-11-02" in text
    assert codec.parse_card(text, "c.md") == card
    assert codec.card_to_text(codec.parse_card(text, "c.md")) == text  # byte-stable


def test_hand_written_card_with_odd_yaml_normalises():
    text = ("---\nid: c-1\nkind: fact\ntitle: 123\ncreated: 2026-11-02 07:40:12+02:00\nvalid_from: 2026-11-02\n"
            "entities: postgres\nstatus: active\n---\nbody\n")
    card = codec.parse_card(text, "c.md")
    assert card.title == "123" and card.created == "2026-11-02T05:40:12Z" and card.entities == ("postgres",)


@pytest.mark.parametrize("text, line, reason", [
    ("no front matter", 1, "missing front matter"),
    ("---\nid: c-1\nkind: fact\n", 1, "not closed"),
    ("---\nid: c-1\nkind: fact\ntitle: [oops\n---\n", 5, "broken YAML"),
    ("---\nid: ../../etc\nkind: fact\ntitle: t\n---\n", None, "card id"),
    ("---\nid: c-1\nkind: fact\ntitle: t\nstatus: maybe\n---\n", None, "status"),
    ("---\n- a\n- b\n---\n", 2, "mapping"),
])
def test_broken_cards_name_file_and_line(text, line, reason):
    with pytest.raises(VaultFormatError) as err:
        codec.parse_card(text, "cards/2026-11/c-1.md")
    assert err.value.path == "cards/2026-11/c-1.md" and err.value.line == line and reason in err.value.reason


def test_broken_episode_line_never_quotes_text():
    with pytest.raises(VaultFormatError) as err:
        codec.parse_record_line('{"user": "my secret hunter2", broken', "episodes/x.jsonl", 7)
    assert "episodes/x.jsonl:7" in str(err.value) and "hunter2" not in str(err.value)


def test_entity_round_trip_keeps_prose():
    ent = Entity(slug="postgres", name="Postgres", aliases=("pg", "postgresql"), kind="tool",
                 prose="我的笔记：生产库。", extra={"homepage": "https://www.postgresql.org"})
    text = codec.entity_to_text(ent, "- [[c-1]] decision · Use Postgres")
    back = codec.parse_entity(text, "entities/postgres.md", "postgres")
    assert back == ent
    assert text.endswith(f"{codec.BLOCK_BEGIN}\n- [[c-1]] decision · Use Postgres\n{codec.BLOCK_END}\n")
