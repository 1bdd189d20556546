"""graph.html driven in a real headless Chromium (Debian's package, through Playwright), as a person would use it.

One browser for the module; the vaults are written through the real codec and drawn by the real CLI. A missing
Chromium fails these tests with a message (never a skip): .ci/run installs it.
"""

from __future__ import annotations

import random
import string
import sys
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "services"))

from graph_helpers import make_vault, launch  # noqa: E402
from search_helpers import card, write  # noqa: E402

from memvault.cli.app import app  # noqa: E402
from memvault.vault import codec  # noqa: E402
from memvault.views import graph_page  # noqa: E402

XSS = "<img src=x onerror=alert(1)>"


def draw(root: Path, *args: str) -> Path:
    result = CliRunner().invoke(app, ["--vault", str(root), "graph", "--html", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return root / "graph.html"


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture(scope="module")
def v75(tmp_path_factory):
    root = make_vault(tmp_path_factory.mktemp("g75") / "vault", 75)
    return root, draw(root)


def cards_of(root: Path) -> list:
    return [codec.parse_card(p.read_text(encoding="utf-8"), str(p)) for p in sorted((root / "cards").rglob("*.md"))]


def open_page(browser, path: Path, fragment: str = "", **ctx):
    context = browser.new_context(viewport={"width": 1200, "height": 800}, **ctx)
    # Hang guards, not speed limits: a loaded 2-core machine may take many seconds to lay out a page.
    context.set_default_timeout(300_000)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.goto(path.resolve().as_uri() + fragment)
    page.wait_for_selector("body[data-ready='1']")
    page.problems = problems  # type: ignore[attr-defined]
    return context, page


def shown(page, selector: str) -> int:
    return page.eval_on_selector_all(selector, "els => els.filter(e => getComputedStyle(e).display !== 'none').length")


def test_node_counts_equal_the_vaults_cards_and_entities(browser, v75):
    root, path = v75
    cards = cards_of(root)
    context, page = open_page(browser, path)
    try:
        assert page.locator("#nodes circle.card").count() == len(cards) == 75
        assert page.locator("#nodes circle.entity").count() == len({e for c in cards for e in c.entities})
        assert page.locator("#nodes circle.card.retracted").count() == sum(c.status == "retracted" for c in cards) > 0
        assert page.locator("#nodes circle.card.superseded").count() == sum(c.status == "superseded" for c in cards) > 0
        assert page.locator("#arrows line").count() == sum(len(c.supersedes) for c in cards) > 0
        assert "75 cards" in page.inner_text("#count")
        assert "decision" in page.inner_text("#legend") and page.locator("#hint").is_hidden()
        # fits the viewport at open: every node's box is inside the window
        box = page.evaluate("(() => { const b = document.getElementById('vp').getBoundingClientRect();"
                            " return [b.left, b.top, b.right, b.bottom]; })()")
        assert box[0] >= 0 and box[1] >= 0 and box[2] <= 1200 and box[3] <= 800, box
        assert page.problems == []
    finally:
        context.close()


def test_searching_an_id_focuses_it_and_esc_clears(browser, v75):
    root, path = v75
    target = cards_of(root)[40]
    context, page = open_page(browser, path)
    try:
        page.fill("#q", target.id)
        assert target.id in page.inner_text("#results")
        page.press("#q", "Enter")
        assert page.get_attribute("#details", "data-id") == target.id
        assert target.title in page.inner_text("#details h2")
        assert "sel" in page.get_attribute(f"circle[data-id='{target.id}']", "class")
        page.keyboard.press("Escape")
        assert page.locator("#details").is_hidden() and page.input_value("#q") == ""
        assert page.locator("circle.sel").count() == 0
        page.fill("#q", "postgres")  # an entity name finds the hub and the cards naming it
        assert "postgres" in page.inner_text("#results")
    finally:
        context.close()


def test_project_filter_hides_other_projects(browser, v75):
    root, path = v75
    shop = [c for c in cards_of(root) if c.project == "shop"]
    context, page = open_page(browser, path)
    try:
        page.select_option("#project", label="shop")
        assert shown(page, "#nodes circle.card") == len(shop) > 0
        ids = page.eval_on_selector_all(
            "#nodes circle.card", "els => els.filter(e => getComputedStyle(e).display !== 'none').map(e => e.dataset.id)")
        assert set(ids) == {c.id for c in shop}
        assert shown(page, "#nodes circle.entity") == len({e for c in shop for e in c.entities})
    finally:
        context.close()


def test_a_click_shows_the_details(browser, v75):
    root, path = v75
    target = next(c for c in cards_of(root) if c.status == "superseded" and c.episodes)
    context, page = open_page(browser, path)
    try:
        page.click(f"circle[data-id='{target.id}']", force=True)
        text = page.inner_text("#details")
        for piece in (target.title, target.id, "superseded", target.created, target.valid_from, target.valid_to,
                      target.episodes[0], target.superseded_by[0], target.body[:40]):
            assert piece in text, piece
        page.hover(f"circle[data-id='{target.id}']", force=True)  # one-hop neighbours stay lit, others dim
        lit = page.eval_on_selector_all("#nodes .hl", "els => els.map(e => e.dataset.id || e.dataset.entity)")
        assert set(lit) == {target.id, *target.entities, *target.superseded_by}
        page.mouse.move(2, 790)
        page.keyboard.press("Escape")
        assert page.locator("#details").is_hidden()
    finally:
        context.close()


def test_dark_and_light_from_the_fragment_and_the_system(browser, v75):
    _root, path = v75
    bg = "getComputedStyle(document.body).backgroundColor"
    for fragment, scheme, dark in (("#dark", "light", True), ("#light", "dark", False), ("", "dark", True),
                                   ("", "light", False)):
        context, page = open_page(browser, path, fragment, color_scheme=scheme)
        try:
            r, g, b = (int(x) for x in page.evaluate(bg)[4:-1].split(","))
            assert (r + g + b < 150) is dark, (fragment, scheme, r, g, b)
        finally:
            context.close()


def test_a_card_id_or_entity_in_the_fragment_is_focused(browser, v75):
    root, path = v75
    target = cards_of(root)[7]
    context, page = open_page(browser, path, "#" + target.id)
    try:
        assert page.get_attribute("#details", "data-id") == target.id
        page.evaluate("location.hash = 'caddy'")
        page.wait_for_function("document.getElementById('details').dataset.id === 'caddy'")
    finally:
        context.close()


def test_valid_at_a_date_shows_the_vault_as_it_stood(browser, tmp_path):
    root = tmp_path / "vault"
    make_vault(root, 0)
    write(root,
          card("c-20250101-aaaa", "Use SQLite", entities=("db",), status="superseded", valid_to="2025-06-01",
               superseded_by=("c-20250601-bbbb",)),
          card("c-20250601-bbbb", "Move to Postgres", entities=("db",), supersedes=("c-20250101-aaaa",)),
          card("c-20250301-cccc", "A wrong note", entities=("db",), status="retracted"))
    context, page = open_page(browser, draw(root))
    try:
        visible = "els => els.filter(e => getComputedStyle(e).display !== 'none').map(e => e.dataset.id)"
        page.fill("#at", "2025-03-15")
        assert page.eval_on_selector_all("#nodes circle.card", visible) == ["c-20250101-aaaa"]
        page.fill("#at", "2025-07-01")
        assert page.eval_on_selector_all("#nodes circle.card", visible) == ["c-20250601-bbbb"]
        page.fill("#at", "")
        assert len(page.eval_on_selector_all("#nodes circle.card", visible)) == 3
        assert page.locator("#arrows line").count() == 1
    finally:
        context.close()


def test_an_xss_title_stays_text_and_secrets_are_redacted(browser, tmp_path):
    root = tmp_path / "vault"
    make_vault(root, 0)
    secret = "sk-" + "proj-" + "".join(random.choices(string.ascii_letters + string.digits, k=40))
    write(root, card("c-20250101-dddd", XSS, f"</script><script>alert(2)</script> key {secret}",
                     entities=("<b>bold</b>", "x"), project="<i>p</i>"),
          card("c-20250102-eeee", "Second", "plain", entities=("x",)))
    path = draw(root)
    raw = path.read_text(encoding="utf-8")
    assert secret not in raw and "REDACTED" in raw
    assert XSS not in raw and "</script><script>alert(2)" not in raw
    context, page = open_page(browser, path)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.click("circle[data-id='c-20250101-dddd']", force=True)
        assert page.inner_text("#details h2") == XSS
        page.fill("#q", "<b>")
        assert "<b>bold</b>" in page.inner_text("#results")
        page.press("#q", "Enter")
        page.wait_for_timeout(100)
        assert page.locator("img, b, i").count() == 0
        assert dialogs == [] and page.problems == []
    finally:
        context.close()


def test_empty_and_one_card_vaults_show_a_hint(browser, tmp_path):
    empty = make_vault(tmp_path / "empty", 0)
    context, page = open_page(browser, draw(empty))
    try:
        assert page.locator("#hint").is_visible() and "no cards yet" in page.inner_text("#hint")
        assert "memvault distill" in page.inner_text("#hint code")
    finally:
        context.close()
    one = make_vault(tmp_path / "one", 1)
    context, page = open_page(browser, draw(one), locale="zh-CN")
    try:
        assert "只有一张卡片" in page.inner_text("#hint") and page.locator("#nodes circle.card").count() == 1
    finally:
        context.close()


def test_no_request_leaves_the_page(browser, v75):
    _root, path = v75
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(300_000)  # a hang guard, as in open_page
    seen: list[str] = []
    own = path.resolve().as_uri()

    def gate(route):  # the file itself may load; anything else is recorded and refused
        seen.append(route.request.url)
        route.continue_() if route.request.url == own else route.abort()

    context.route("**/*", gate)
    page = context.new_page()
    page.on("request", lambda r: seen.append(r.url))
    refused: list[str] = []  # a request the page's Content-Security-Policy stopped is reported on the console
    page.on("console", lambda m: refused.append(m.text) if m.type == "error" else None)
    try:
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("body[data-ready='1']")
        page.fill("#q", "c-")
        page.press("#q", "Enter")
        page.mouse.move(600, 400)
        page.mouse.wheel(0, -400)
        page.mouse.down()
        page.mouse.move(500, 300)
        page.mouse.up()
        page.select_option("#project", index=1)
        page.wait_for_timeout(200)
        assert seen and set(seen) == {own}, seen
        assert refused == []
    finally:
        context.close()


def test_past_the_limit_the_page_says_how_many_are_hidden(browser, tmp_path):
    root = make_vault(tmp_path / "vault", 60)
    from memvault.search.index import Index

    with Index(root) as idx:
        idx.refresh()
        rows = idx.graph_rows(None, None)
    data = graph_page.page_data(rows, [], {"project": None, "since": None}, limit=25)
    assert len(data["cards"]) == 25 and data["hidden"] == 35
    newest = sorted(rows, key=lambda r: (r[6], r[0]), reverse=True)[:12]
    assert {r[0] for r in newest} <= {c["id"] for c in data["cards"]}
    path = tmp_path / "page.html"
    path.write_text(graph_page.render(data), encoding="utf-8")
    context, page = open_page(browser, path)
    try:
        assert "35 more are hidden" in page.inner_text("#notice")
        assert page.locator("#nodes circle.card").count() == 25
    finally:
        context.close()
