"""The index's own front-matter reader keeps per-process caches of lines and list items: a second card with the
same item must get the same answer as the first, a bad item included, and every answer must be the codec's."""

from __future__ import annotations

from memvault.model import Card
from memvault.search.index.parse import parse_card_fast, parse_card_slow
from memvault.vault import codec


def _text(entities: str) -> str:
    return f"---\nid: c-20250101-0001\nkind: fact\ntitle: Hello\nentities: {entities}\nstatus: active\n---\nbody\n"


def test_a_cached_list_item_gives_the_same_answer_every_time():
    for _ in range(3):
        assert parse_card_fast(_text("[alpha, beta-2, 雾港]"))["entities"] == ["alpha", "beta-2", "雾港"]
        assert parse_card_fast(_text("[alpha, 'it''s']")) is None  # quoted inside a flow list: the codec reads it
        assert parse_card_fast(_text("[alpha, a: b]")) is None  # ": " is YAML structure, never a plain item
        assert parse_card_fast(_text("[alpha, null]"))["entities"] == ["alpha"]


def test_fast_and_codec_agree_on_cards_memvault_writes():
    cards = [Card(id=f"c-20250101-{i:04x}", kind="fact", title=title, body="text 数据库", entities=ents,
                  tags=("t_1", "x-y"), created="2025-01-01T10:00:00Z", project="p-1",
                  source={"kind": "distill", "run": "r-1", "episodes": [f"ep-{i}", "ep-x"]})
             for i, (title, ents) in enumerate([("Plain", ("a", "b")), ("Colon: here", ("a",)),
                                                ("Hash # here", ()), ("雾港 码头", ("雾港", "ent-4")),
                                                ("'quoted'", ("x y",))])]
    read_fast = 0
    for card in cards * 2:  # twice: the second pass reads from the caches
        text = codec.card_to_text(card)
        fast = parse_card_fast(text)
        slow = parse_card_slow(text, "x.md")
        if fast is not None:
            read_fast += 1
            assert {k: fast.get(k) for k in slow if k in fast} == {k: slow[k] for k in slow if k in fast}
            assert fast["entities"] == list(card.entities)
            assert fast["episodes"] == list(card.source["episodes"])
    assert read_fast >= 6  # most of them in the fast layout (the rest fell back to the codec, as they should)
