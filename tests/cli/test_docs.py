"""The documentation keeps up with the program: README.md is the short introduction, docs/ (an mkdocs site, nav in
mkdocs.yml) the reference.

- every command and every option that `--help` shows (the Typer app and any sub-command group) has its row in
  docs/commands.md, and that page lists nothing `--help` lacks;
- every setting of vault-template/memvault.yaml is in docs/configuration.md with its default;
- every relative link and #anchor of README.md and docs/*.md resolves, with anchors as both GitHub and mkdocs
  make them, and docs/ links stay inside docs/ (the site holds nothing else);
- every page is in the nav; `mkdocs build --strict` passes when mkdocs is installed (the `docs` extra).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from memvault.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")

# What a newcomer meets first: README names these; the commands reference names all.
MAIN_COMMANDS = ("init", "capture", "stats", "search", "distill", "show", "timeline", "context", "mcp")


# --- what --help says ------------------------------------------------------------------------------------------

def help_text(path: list[str]) -> str:
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    assert res.exit_code == 0, (path, res.output)
    return res.output


def help_section(text: str, title: str) -> list[str]:
    """The rows of one section of click's help ("Options:", "Commands:"): each row's first column."""
    lines = text.splitlines()
    if f"{title}:" not in lines:
        return []
    rows = []
    for line in lines[lines.index(f"{title}:") + 1:]:
        if not line.strip() or not line.startswith(" "):
            break  # a section ends at a blank line (the epilog follows)
        m = re.match(r"^  (\S.*?)(?:\s{2,}|$)", line)
        if m:
            rows.append(m.group(1))
    return rows


def help_options(text: str) -> set[str]:
    return {opt for row in help_section(text, "Options") for opt in OPTION.findall(row)}


def every_command() -> dict[tuple[str, ...], set[str]]:
    """(command path) -> its options, read from --help, walking any sub-command group."""
    found: dict[tuple[str, ...], set[str]] = {}

    def walk(path: list[str]) -> None:
        text = help_text(path)
        found[tuple(path)] = help_options(text)
        for row in help_section(text, "Commands"):
            walk([*path, row.split()[0]])

    walk([])
    return found


COMMANDS = every_command()


# --- what the docs say -----------------------------------------------------------------------------------------

def strip_code(md: str) -> str:
    """Markdown without fenced blocks and code spans (links and headings inside them are not links or headings)."""
    md = re.sub(r"(?ms)^(```|~~~).*?^\1[^\n]*$", "", md)
    return re.sub(r"`[^`\n]*`", "", md)


def sections(md: str, level: int = 2) -> dict[str, str]:
    """Heading text (level `level`, outside code) -> the text up to the next heading of that level or higher."""
    out: dict[str, str] = {}
    current, buf, fenced = None, [], False
    for line in md.splitlines():
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else re.match(r"^(#{1,%d}) (.*)$" % level, line)
        if m:
            if current is not None:
                out[current] = "\n".join(buf)
            current, buf = m.group(2).strip(), []
        else:
            buf.append(line)
    if current is not None:
        out[current] = "\n".join(buf)
    return out


def table_first_cells(section: str) -> list[str]:
    rows = [line for line in section.splitlines() if line.startswith("|") and not re.match(r"^\|[-| :]+\|$", line)]
    return [row.split("|")[1].strip() for row in rows[1:]]  # rows[0] is the header


def documented_options(section: str) -> set[str]:
    return {opt for cell in table_first_cells(section) for code in re.findall(r"`([^`]*)`", cell)
            for opt in OPTION.findall(code)}


REFERENCE = sections((DOCS / "commands.md").read_text(encoding="utf-8"))


def test_help_was_read_for_every_command():
    # guards the help parser itself: a parser that found nothing would pass everything below
    names = {path[0] for path in COMMANDS if path}
    assert len(names) >= 20 and {"capture", "search", "distill", "show", "embed-server"} <= names
    assert {"--vault", "-V", "--debug", "--version", "--help"} <= COMMANDS[()]
    assert {"--limit", "-n", "--episodes", "-e", "--snippet-chars", "--json"} <= COMMANDS[("search",)]
    assert {"--no-sources", "--json"} <= COMMANDS[("show",)]


@pytest.mark.parametrize("path", [p for p in COMMANDS if p], ids=" ".join)
def test_every_command_and_option_is_in_the_commands_reference(path):
    heading = "memvault " + " ".join(path)
    assert heading in REFERENCE, f"docs/commands.md has no `## {heading}` section"
    listed = documented_options(REFERENCE[heading])
    wanted = COMMANDS[path] - {"--help"}
    assert not wanted - listed, f"{heading}: options of --help missing in docs/commands.md: {sorted(wanted - listed)}"
    assert not listed - wanted, f"{heading}: docs/commands.md lists options --help lacks: {sorted(listed - wanted)}"


def test_global_options_are_in_the_commands_reference():
    listed = documented_options(REFERENCE["Global options"])
    assert listed == COMMANDS[()], (sorted(listed), sorted(COMMANDS[()]))


def test_the_commands_reference_lists_no_command_that_does_not_exist():
    documented = {h.removeprefix("memvault ") for h in REFERENCE if h.startswith("memvault ")}
    assert documented == {" ".join(p) for p in COMMANDS if p}


def test_every_command_is_explained_on_a_topic_page():
    topics = "\n".join(p.read_text(encoding="utf-8") for p in PAGES if p.name != "commands.md")
    for path in (p for p in COMMANDS if p):
        assert re.search(rf"memvault {re.escape(' '.join(path))}(?![\w-])", topics), \
            f"no page besides commands.md explains `memvault {' '.join(path)}`"


def test_readme_is_the_short_introduction():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < 12 * 1024, f"README.md is {len(text.encode())} bytes; the reference goes in docs/"
    for name in MAIN_COMMANDS:
        assert f"memvault {name}" in text, f"README does not mention `memvault {name}`"
    for words in ("make demo", "make test", "pipx install .", "uv tool install .", "distill --auto", "*/30 * * * *",
                  "claude mcp add memvault", "docs/commands.md"):
        assert words in text, words


# --- settings --------------------------------------------------------------------------------------------------

def leaves(tree: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(leaves(value, name + "."))
        else:
            out[name] = value
    return out


def test_every_setting_is_documented_with_its_default():
    template = yaml.safe_load((ROOT / "vault-template" / "memvault.yaml").read_text(encoding="utf-8"))
    rows = {}
    for line in (DOCS / "configuration.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) == 3 and re.fullmatch(r"`[\w.]+`", cells[0]):
            rows[cells[0].strip("`")] = cells[1]
    settings = leaves(template)
    assert len(settings) > 60
    missing = sorted(set(settings) - set(rows))
    assert not missing, f"settings of vault-template/memvault.yaml missing in docs/configuration.md: {missing}"
    assert not set(rows) - set(settings), sorted(set(rows) - set(settings))
    checked = 0
    for name, value in settings.items():
        cell = rows[name]
        if re.fullmatch(r"`[^`]*`", cell):  # a literal default; prose ("the four patterns …") is not compared
            assert yaml.safe_load(cell.strip("`")) == value, f"{name}: docs say {cell}, the template {value!r}"
            checked += 1
    assert checked >= len(settings) - 2


# --- links -----------------------------------------------------------------------------------------------------

def heading_texts(md: str) -> list[str]:
    """Each heading's text as rendered: code spans lose their backticks, links keep their text."""
    out = []
    fenced = False
    for line in md.splitlines():
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else re.match(r"^#{1,6} (.*?)\s*#*\s*$", line)
        if m:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
            out.append(re.sub(r"[`*]", "", text))
    return out


def github_slugs(md: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for text in heading_texts(md):
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def mkdocs_slugs(md: str) -> set[str]:
    # python-markdown's toc.slugify with mkdocs' defaults
    seen: dict[str, int] = {}
    out = set()
    for text in heading_texts(md):
        value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        slug = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", value).strip().lower())
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}_{n}")
    return out


LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def links(md: str) -> list[str]:
    return LINK.findall(strip_code(md))


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page):
    text = page.read_text(encoding="utf-8")
    found = links(text)
    if page == README:
        assert len(found) >= 10  # guards the link parser
    for target in found:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto:: not checked here (no network in tests)
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: link to {target}: no such file"
        if page.parent == DOCS:
            assert dest.is_relative_to(DOCS), f"{page.name}: {target} leaves docs/ (the site would not hold it)"
        if anchor:
            assert dest.suffix == ".md", f"{page.name}: {target}: an anchor into a file that is not markdown"
            md = dest.read_text(encoding="utf-8")
            assert anchor in github_slugs(md), f"{page.name}: {target}: no such heading on GitHub"
            assert anchor in mkdocs_slugs(md), f"{page.name}: {target}: no such heading in the mkdocs site"


def test_slugs_are_computed_as_github_and_mkdocs_make_them():
    md = "# memvault\n## `memvault show ID`\n## Agents (MCP)\n## `memvault resolve A --over B`\n## Agents (MCP)\n"
    assert {"memvault-show-id", "agents-mcp", "agents-mcp-1", "memvault-resolve-a---over-b"} <= github_slugs(md)
    assert {"memvault-show-id", "agents-mcp", "agents-mcp_1", "memvault-resolve-a-over-b"} <= mkdocs_slugs(md)


def test_a_broken_link_or_anchor_is_found(tmp_path):
    # the link checker must be able to fail: one good and two bad links in a page beside a real one
    (tmp_path / "a.md").write_text("# Title\n\n## Part two\n", encoding="utf-8")
    page = "see [a](a.md#part-two), [b](b.md) and [c](a.md#part-three); `[x](nowhere.md)` is code\n"
    found = links(page)
    assert found == ["a.md#part-two", "b.md", "a.md#part-three"]
    assert "part-two" in github_slugs((tmp_path / "a.md").read_text()) and not (tmp_path / "b.md").exists()
    assert "part-three" not in mkdocs_slugs((tmp_path / "a.md").read_text())


# --- the site --------------------------------------------------------------------------------------------------

def nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        for value in (item.values() if isinstance(item, dict) else [item]):
            out.extend(nav_pages(value) if isinstance(value, list) else [value])
    return out


def test_every_page_is_in_the_nav_and_the_nav_names_only_pages():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config.get("docs_dir", "docs") == "docs"
    listed = nav_pages(config["nav"])
    assert len(listed) == len(set(listed))
    assert set(listed) == {p.name for p in PAGES}
    assert listed[0] == "index.md" and "commands.md" in listed


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (the docs extra)")
def test_mkdocs_builds_the_site_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    html = (tmp_path / "site" / "commands" / "index.html").read_text(encoding="utf-8")
    assert 'id="memvault-embed-server"' in html
