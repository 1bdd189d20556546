"""Hops reach more cards than a search shows; only the best `limit` of them become hits (the hops stage's
`keep`). What is shown must be what the whole list would have shown: the same ids, scores, order and reasons."""

import pytest

from memvault.search import service as search

from search_helpers import card, write


@pytest.fixture
def hub_vault(vault):
    cards = [
        # Seeds: the query's words are in these; each names entities that many other cards name too.
        card("c-20250301-0001", "Caddy certificate renewal failed", "The ACME challenge timed out.",
             entities=("caddy", "vps")),
        card("c-20250302-0002", "Certificate pinning on the mobile app", "Pinned the leaf certificate.",
             entities=("mobile", "vps")),
        card("c-20250303-0003", "证书 renewal 提醒", "证书 到期前 七天 提醒。", entities=("caddy", "提醒")),
    ]
    # Hop neighbours: several dates, some the same date (ties broken by id), some superseded by a newer card.
    for i in range(30):
        day = 1 + i % 9
        ents = [("caddy", "vps", "mobile", "提醒")[i % 4]] + (["vps"] if i % 3 == 0 else [])
        extra = {}
        if i % 5 == 0:
            extra = {"status": "superseded", "superseded_by": (f"c-20250420-{i:04d}",)}
            cards.append(card(f"c-20250420-{i:04d}", f"Newer note {i}", "Replaces an older one.",
                              entities=tuple(ents), supersedes=(f"c-202502{day:02d}-{i:04d}",)))
        cards.append(card(f"c-202502{day:02d}-{i:04d}", f"Routine note {i}", "Nothing about the query.",
                          entities=tuple(ents), **extra))
    write(vault, *cards)
    return vault


def _shown(root, query, limit):
    res = search.run_search(root, query, search.options_from({}, limit=limit, episodes=False))
    return [(h.id, round(h.score, 9), h.why, h.status) for h in res.hits]


@pytest.mark.parametrize("query", [
    "caddy certificate renewal",  # a question about things as they are: newest first among equals
    "what was the certificate renewal before",  # a history question: oldest first, superseded at full weight
    "证书 renewal",
])
def test_a_short_list_is_the_head_of_the_long_one(hub_vault, query):
    whole = _shown(hub_vault, query, 200)
    hop_only = [h for h in whole if any(w.startswith("via entity") for w in h[2])]
    assert len(hop_only) > 12  # the hops reached more cards than the short lists below show
    for limit in (1, 3, 5, 8, 12, 20, 30):
        assert _shown(hub_vault, query, limit) == whole[:limit]


def test_ties_are_broken_as_the_long_list_breaks_them(hub_vault):
    whole = _shown(hub_vault, "caddy certificate renewal", 200)
    scores = [s for _i, s, _w, _st in whole]
    # The fixture holds hop neighbours that tie on score: the short list must cut inside such a run.
    cut = next(i for i in range(1, len(scores)) if scores[i] == scores[i - 1] and i < len(scores) - 1)
    assert _shown(hub_vault, "caddy certificate renewal", cut) == whole[:cut]


def test_the_recency_prior_still_sees_every_neighbour(hub_vault):
    # "now" questions get the recency prior, whose weights depend on the newest hit: nothing is left out.
    whole = _shown(hub_vault, "caddy certificate renewal now", 200)
    assert any("recency prior" in w for h in whole for w in h[2])
    for limit in (1, 4, 10):
        assert _shown(hub_vault, "caddy certificate renewal now", limit) == whole[:limit]
