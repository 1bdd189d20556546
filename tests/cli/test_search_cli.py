import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "services"))

from search_helpers import card, entity_page, write  # noqa: E402


def seed(vault):
    entity_page(vault, "postgres", "postgres", ["postgresql", "pg"])
    write(vault,
          card("c-20250101-aaaa", "Use SQLite for the shop database", "One file.", project="shop",
               entities=("sqlite",), status="superseded", superseded_by=("c-20250601-bbbb",),
               source={"kind": "distill", "episodes": ["ep-1"]}),
          card("c-20250601-bbbb", "Move the shop database to Postgres", "Concurrent writes.", project="shop",
               entities=("postgres",), supersedes=("c-20250101-aaaa",)))


def test_search_json_shape(vault, run):
    seed(vault)
    data = run.json("search", "shop", "database")
    assert set(data) == {"query", "intent", "terms", "count", "hits", "closest"}
    assert data["query"] == "shop database" and data["intent"] == "current" and data["count"] == 2
    assert data["closest"] == []
    first = data["hits"][0]
    assert first["id"] == "c-20250601-bbbb"
    assert set(first) == {"id", "kind", "title", "project", "status", "score", "snippet", "why", "sources",
                          "refs", "created", "session", "path", "weak", "valid_from"}
    assert first["path"] == "cards/2025-06/c-20250601-bbbb.md"
    assert data["hits"][1]["sources"] == ["ep-1"]


def test_search_no_match_exits_1_and_text_output(vault, run):
    seed(vault)
    run("search", "kubernetes", code=1)
    out = run("search", "database", "--limit", "1").stdout
    assert "c-20250601-bbbb" in out and "why: matched:" in out
    run("search", "database", "--limit", "0", code=2)


def test_show_card_and_entity(vault, run):
    seed(vault)
    data = run.json("show", "c-20250101-aaaa")
    assert data["type"] == "card" and data["sources"] == ["ep-1"]
    assert [c["id"] for c in data["chain"]] == ["c-20250101-aaaa", "c-20250601-bbbb"]
    ent = run.json("show", "pg")
    assert ent["type"] == "entity" and ent["id"] == "postgres"
    assert [c["id"] for c in ent["cards"]] == ["c-20250601-bbbb"]
    run("show", "nothing-here", code=1)


def test_timeline_orders_oldest_first_and_filters(vault, run):
    seed(vault)
    data = run.json("timeline")
    assert [e["id"] for e in data["entries"]] == ["c-20250101-aaaa", "c-20250601-bbbb"]
    assert data["entries"][0]["superseded_by"] == ["c-20250601-bbbb"]
    assert [e["id"] for e in run.json("timeline", "postgres")["entries"]] == ["c-20250601-bbbb"]
    assert [e["id"] for e in run.json("timeline", "--since", "2025-03-01")["entries"]] == ["c-20250601-bbbb"]
    assert [e["id"] for e in run.json("timeline", "--limit", "1")["entries"]] == ["c-20250601-bbbb"]


def test_graph_json_and_deterministic_html(vault, run):
    seed(vault)
    write(vault, card("c-20250701-cccc", "Tune postgres autovacuum", "x", entities=("postgres",)))
    data = run.json("graph", "c-20250601-bbbb")
    assert data["center"]["id"] == "c-20250601-bbbb"
    assert [n["id"] for n in data["neighbours"]] == ["c-20250701-cccc"]
    assert data["neighbours"][0]["via"] == ["postgres"]
    run("graph", "--html")
    first = (vault / "graph.html").read_bytes()
    run("reindex")
    run("graph", "--html")
    assert (vault / "graph.html").read_bytes() == first
    assert b"c-20250701-cccc" in first


def test_reindex_json(vault, run):
    seed(vault)
    data = run.json("reindex")
    # pages are written first (sqlite gets a new page), then indexed
    assert data["cards"] == 2 and data["entities"] == 2 and data["episodes"] == 0
    assert "[[c-20250101-aaaa]]" in (vault / "entities" / "sqlite.md").read_text(encoding="utf-8")
    assert run.json("reindex")["pages"] == "written (0 changed)"


def test_hit_lines_carry_the_date(vault, run):
    seed(vault)
    lines = run("search", "shop", "database").stdout.splitlines()
    assert lines[0].startswith("c-20250601-bbbb  2025-06-01  [decision] Move the shop database to Postgres")


def test_no_answer_exits_1_and_lists_what_came_closest_apart(vault, run):
    seed(vault)
    q = ("shop", "database", "replica", "failover")  # the vault never says replica or failover
    piped = run("search", *q, code=1)
    assert piped.stdout == "" and "no match" in piped.stderr and "--json lists them" in piped.stderr
    data = json.loads(run("search", *q, "--json", code=1).stdout)
    assert data["hits"] == [] and data["count"] == 0
    assert data["closest"] and all(h["weak"] for h in data["closest"])


def test_no_answer_on_a_terminal_shows_closest_with_dates(vault):
    """A real process on a pseudo-terminal (the Typer-free fast path): "no match; closest:" then the hits."""
    import os
    import pty
    import subprocess
    import sys

    seed(vault)
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault), "search", "shop", "database",
                             "replica", "failover"], stdout=secondary, stderr=subprocess.PIPE,
                            env={**os.environ, "COLUMNS": "200"})
    os.close(secondary)
    out = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=60) == 1
    text = out.decode()
    assert text.startswith("no match; closest:")
    assert "c-20250601-bbbb  2025-06-01  [decision]" in text or "c-20250101-aaaa  2025-01-01  [decision]" in text
