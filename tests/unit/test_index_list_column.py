"""reads.json_list: a JSON list column of the index, read without the JSON parser in the plain case; it must give
exactly what json.loads gives for anything the index may hold."""

from __future__ import annotations

import json
import random

from memvault.search.index.prepare import _json_list
from memvault.search.index.reads import json_list as _list

PIECES = ["a", "b c", "雾港", "ent-1", '"', "\\", ", ", '", "', "[", "]", "x,y", " ", "", "é", "\n", "1"]


def test_plain_and_hostile_lists_read_as_json_reads_them():
    rng = random.Random(7)
    for _ in range(3000):
        items = ["".join(rng.choice(PIECES) for _ in range(rng.randrange(4))) for _ in range(rng.randrange(5))]
        for text in (_json_list(items), json.dumps(items, ensure_ascii=False), json.dumps(items)):
            assert _list(text) == json.loads(text) == items, text
    for value in ([1, 2], ["a", 1, "b"], [1, "a"], ["a", None], [["a"]], ["a", {"b": "c"}]):
        text = json.dumps(value, ensure_ascii=False)
        assert _list(text) == value, text
