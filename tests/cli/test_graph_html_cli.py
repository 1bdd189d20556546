"""`memvault graph --html`: --project/--since limit the page, --open opens it, and it is redrawn (with the
options it was drawn with) after remember, forget, distill, consolidate, resolve, import and reindex when a
graph.html exists."""

from __future__ import annotations

import pytest
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "services"))

from search_helpers import card, write  # noqa: E402



def page_cards(vault: Path) -> dict[str, dict]:
    """The cards graph.html embeds, by id."""
    text = (vault / "graph.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1))
    return {c["id"]: c for c in data["cards"]}


def seed(vault: Path) -> None:
    write(vault,
          card("c-20250101-aaaa", "Use SQLite", project="shop", entities=("sqlite",)),
          card("c-20250601-bbbb", "Move to Postgres", project="shop", entities=("postgres",)),
          card("c-20250701-cccc", "Blog on Hugo", project="blog", entities=("hugo",)))


def test_project_and_since_limit_the_page(vault, run):
    seed(vault)
    run("graph", "--html")
    assert set(page_cards(vault)) == {"c-20250101-aaaa", "c-20250601-bbbb", "c-20250701-cccc"}
    run("graph", "--html", "--project", "shop")
    assert set(page_cards(vault)) == {"c-20250101-aaaa", "c-20250601-bbbb"}
    run("graph", "--html", "--since", "2025-03-01")
    assert set(page_cards(vault)) == {"c-20250601-bbbb", "c-20250701-cccc"}
    assert "--since must be a date" in run("graph", "--html", "--since", "2025-3-1", code=2).stderr
    assert "go with --html" in run("graph", "--project", "shop", code=2).stderr


def test_redrawn_after_remember_forget_and_reindex_with_its_options(vault, run):
    seed(vault)
    new = run.json("remember", "No graph yet", "-p", "shop")["id"]
    assert not (vault / "graph.html").exists()  # never drawn unless a person asked for it once
    run("graph", "--html", "--project", "shop")
    assert new in page_cards(vault)
    shop = run.json("remember", "Cache carts in Redis", "-p", "shop", "-e", "redis")["id"]
    blog = run.json("remember", "Comments via email", "-p", "blog")["id"]
    cards = page_cards(vault)
    assert shop in cards and blog not in cards  # still limited to the project it was drawn for
    run("forget", shop, "--retract")
    assert page_cards(vault)[shop]["s"] == "retracted"
    run("forget", shop, "--purge")
    assert shop not in page_cards(vault)
    write(vault, card("c-20250801-dddd", "Written by hand", project="shop"))
    run("reindex")
    assert "c-20250801-dddd" in page_cards(vault)
    meta = re.search(r'<meta name="memvault-graph" content="([^"]*)">', (vault / "graph.html").read_text())
    assert json.loads(html.unescape(meta.group(1))) == {"project": "shop", "since": None}


def test_open_hands_the_file_to_the_web_browser(vault, tmp_path):
    seed(vault)
    log = tmp_path / "opened.txt"
    fake = tmp_path / "browser.py"
    fake.write_text(f"import sys\nopen({str(log)!r}, 'a').write(sys.argv[1] + '\\n')\n")
    env = {**os.environ, "BROWSER": f"{sys.executable} {fake} %s"}
    cmd = [sys.executable, "-m", "memvault", "--vault", str(vault), "graph", "--html"]
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    assert not log.exists()  # only when asked
    out = subprocess.run(cmd + ["--open"], env=env, check=True, capture_output=True, text=True)
    assert log.read_text().split() == [(vault / "graph.html").resolve().as_uri()]
    assert out.stdout.strip() == str(vault / "graph.html")


def test_a_graph_html_memvault_did_not_write_is_left_alone(vault, run):
    seed(vault)
    mine = "<!doctype html><title>my own notes</title>\n"
    (vault / "graph.html").write_text(mine, encoding="utf-8")
    run("remember", "Something new", "-p", "shop")
    assert (vault / "graph.html").read_text(encoding="utf-8") == mine
    old = '<!doctype html>\n<html><head><meta charset="utf-8"><title>memvault graph</title>\n'  # before options
    (vault / "graph.html").write_text(old, encoding="utf-8")
    run("remember", "Something else", "-p", "blog")
    assert len(page_cards(vault)) == 5


@pytest.mark.usefixtures("write_protocol")  # its fake model writes every card
def test_redrawn_after_distill(vault, run, fake_llm):
    from test_distill_rollback import capture, chat, distill

    run("graph", "--html")
    assert page_cards(vault) == {}
    fake_llm.set_default(lambda body: json.dumps({"cards": [{
        "action": "create", "kind": "decision", "title": "Queue on Redis streams", "body": "", "entities": ["redis"],
        "project": "demo", "valid_from": None, "confidence": "inferred", "episodes": ["e0"]}]}))
    capture(run, chat("s", [("which queue?", "Redis streams")]))
    distill(run, fake_llm, now="2026-11-03T08:00:00Z")
    assert [c["t"] for c in page_cards(vault).values()] == ["Queue on Redis streams"]


def test_same_cards_same_bytes_across_processes(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from graph_helpers import make_vault

    root = make_vault(tmp_path / "vault", 120)
    pages = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), "graph", "--html"], env=env,
                       check=True, capture_output=True)
        pages.append((root / "graph.html").read_bytes())
    assert pages[0] == pages[1] and len(page_cards(root)) == 120


def test_redrawn_after_consolidate_writes_a_synopsis(vault, run):
    seed(vault)
    run("graph", "--html")
    before = set(page_cards(vault))
    written = run.json("consolidate", "--project", "shop")["written"]
    assert written and written[0]["id"] not in before
    assert written[0]["id"] in page_cards(vault)


def test_redrawn_after_resolve_and_import(vault, run, tmp_path):
    seed(vault)
    run("graph", "--html")
    assert page_cards(vault)["c-20250101-aaaa"]["s"] == "active"
    run("resolve", "c-20250601-bbbb", "--over", "c-20250101-aaaa")
    assert page_cards(vault)["c-20250101-aaaa"]["s"] == "superseded"  # the page follows the resolve
    other = tmp_path / "other"
    run("init", str(other))
    made = run.json("remember", "Imported card", "-p", "shop", "-V", str(other))["id"]
    bundle = tmp_path / "b.json"
    run("export", "--output", str(bundle), "-V", str(other))
    run("import", str(bundle))
    assert made in page_cards(vault)  # and the import


def test_a_file_name_after_html_is_written_in_the_current_folder_not_the_vault(vault, run, tmp_path,
                                                                              monkeypatch):
    """`graph --html page.html` (issue 38): the page goes where the person stands, the vault is untouched and
    the page is not redrawn later (it is not the vault's graph.html)."""
    seed(vault)
    elsewhere = tmp_path / "here"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    out = run("graph", "--html", "graph.html").stdout.strip()
    assert Path(out).resolve() == (elsewhere / "graph.html").resolve()
    assert not (vault / "graph.html").exists()
    assert set(page_cards(elsewhere)) == {"c-20250101-aaaa", "c-20250601-bbbb", "c-20250701-cccc"}
    run("graph", "--html", "sub/shop.html", "--project", "shop")
    shop = (elsewhere / "sub/shop.html").read_text(encoding="utf-8")
    assert "c-20250101-aaaa" in shop and "c-20250701-cccc" not in shop
    before = (elsewhere / "graph.html").read_bytes()
    run("remember", "Blog moves to Zola", "--project", "blog")
    assert (elsewhere / "graph.html").read_bytes() == before and not (vault / "graph.html").exists()
