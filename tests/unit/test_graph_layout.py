"""graph_layout and graph_page without a browser: deterministic positions, clusters that never overlap, the pick
past the limit, and JSON that cannot end its <script> block."""

from __future__ import annotations

import json
import math
import random

from memvault.views import graph_layout, graph_page


def cards(n: int, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    names = [f"e{i}" for i in range(max(3, n // 10))]
    out = []
    for i in range(n):
        ents = sorted({names[min(len(names) - 1, int(rng.paretovariate(1.0)) - 1)] for _ in range(rng.randrange(4))})
        out.append({"id": f"c-2025{i % 12 + 1:02d}01-{i:04x}", "project": f"p{i % 3}", "entities": ents,
                    "created": f"2025-{i % 12 + 1:02d}-01T00:00:00Z", "supersedes": [], "superseded_by": []})
    return out


def test_layout_is_deterministic_and_dots_do_not_pile_up():
    cs = cards(400)
    a, b = graph_layout.layout(cs), graph_layout.layout(list(reversed(cs)))
    assert a == b
    pts = sorted(a["cards"].values())
    assert len(pts) == 400
    close = sum(1 for i in range(len(pts) - 1) for j in range(i + 1, min(i + 40, len(pts)))
                if math.dist(pts[i], pts[j]) < 3.0)
    assert close == 0
    for name, (x, y, r, m) in a["entities"].items():  # no card sits on a hub it is not drawn around
        assert r == graph_layout.hub_radius(m)
        assert all(math.dist((x, y), p) >= r for p in pts)
    x0, y0, x1, y1 = a["bounds"]
    assert all(x0 <= x <= x1 and y0 <= y <= y1 for x, y in pts)


def test_pick_keeps_the_newest_and_the_most_connected():
    cs = cards(300)
    hub = cs[5]  # old, but naming the biggest entity
    hub["entities"] = ["e0", "e1", "e2"]
    got = graph_layout.pick(cs, 100)
    ids = {c["id"] for c in got}
    assert len(got) == 100 and [c["id"] for c in got] == sorted(ids, key=[c["id"] for c in cs].index)
    newest = sorted(cs, key=lambda c: (c["created"], c["id"]), reverse=True)[:50]
    assert {c["id"] for c in newest} <= ids and hub["id"] in ids
    assert graph_layout.pick(cs, 1000) == cs


def test_empty_and_single_layouts():
    assert graph_layout.layout([])["cards"] == {}
    one = graph_layout.layout([{"id": "c-1", "project": "", "entities": []}])
    assert list(one["cards"]) == ["c-1"]


def test_script_json_cannot_close_the_script_block():
    data = {"t": "</script><script>alert(1)</script> & <!-- \u2028"}
    text = graph_page.script_json(data)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == data
