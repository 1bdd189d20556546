"""Reading commands redact their output again: a hand-written card holding a secret never prints it."""

from __future__ import annotations

KEY = "ghp_" + "Zq8Lm3Np5Rt7Vx9Bz2Cd4Fg6Hj8Kl0Mn2Pq4"
PASSWORD = "密码是Tr0ub4dor&3xyz"


def _hand_written_card(vault):
    card = vault / "cards" / "2026-11" / "c-20261101-beef.md"
    card.parent.mkdir(parents=True)
    card.write_text(
        "---\nid: c-20261101-beef\nkind: fact\ntitle: Deploy token for the staging box " + KEY + "\n"
        "project: shop\nentities: [staging]\ncreated: 2026-11-01T08:00:00Z\nvalid_from: 2026-11-01\n"
        "status: active\nsource: {kind: remember}\n---\n"
        f"The staging deploy uses {KEY}; 管理后台的{PASSWORD}。\n",
        encoding="utf-8",
    )


def test_show_timeline_graph_search_never_print_a_stored_secret(run, vault):
    _hand_written_card(vault)
    outputs = [
        run("show", "c-20261101-beef").stdout,
        run("show", "c-20261101-beef", "--json").stdout,
        run("timeline").stdout,
        run("timeline", "--json").stdout,
        run("graph", "staging").stdout,
        run("graph", "staging", "--json").stdout,
        run("search", "staging", "deploy", "token").stdout,
        run("search", "staging", "deploy", "token", "--json").stdout,
    ]
    for out in outputs:
        assert "c-20261101-beef" in out
        assert KEY not in out and "Tr0ub4dor" not in out
    assert "[REDACTED:" in outputs[0]
