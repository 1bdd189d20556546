"""The shape of memvault/search (issues 9, 37): only search/index holds SQL, a query flows service -> pipeline ->
the stages in turn -> index without coming back, every module is small and says what it owns, and the search
path stays light."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "memvault"
INDEX = PKG / "search" / "index"
_SQL = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|PRAGMA|BEGIN|COMMIT|ROLLBACK)\b")


def _outside_index():
    return sorted(p for p in PKG.rglob("*.py") if INDEX not in p.parents)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_only_search_index_runs_or_holds_sql():
    for path in _outside_index():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                assert node.attr not in ("execute", "executemany", "executescript"), \
                    f"{path.relative_to(PKG)}:{node.lineno} runs SQL"
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not _SQL.match(node.value), f"{path.relative_to(PKG)}:{node.lineno} holds SQL text"


STAGES = ("query", "candidates", "scoring", "hops", "order", "fuse", "snippets")  # pipeline.py's order


def test_query_flows_down_only():
    # The index never reaches back up into the search modules that call it; no stage calls the pipeline or the
    # service, and a stage imports no stage after it (the order stage's final_order, which the hops stage's cut
    # shares, aside).
    upper = {f"memvault.search.{m}" for m in ("service", "pipeline", "intent", "results", *STAGES)}
    for path in INDEX.glob("*.py"):
        assert not (_imports(path) & upper), f"index/{path.name} imports {_imports(path) & upper}"
    for i, name in enumerate(STAGES):
        found = _imports(PKG / "search" / f"{name}.py")
        assert not found & {"memvault.search.service", "memvault.search.pipeline"}, name
        later = {f"memvault.search.{m}" for m in STAGES[i + 1:]} - ({"memvault.search.order"} if name == "hops" else set())
        assert not found & later, f"{name} imports {found & later}"


def test_search_modules_are_small_and_documented():
    for path in sorted((PKG / "search").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 400, f"{path.name}: {len(text.splitlines())} lines"
        assert ast.get_docstring(ast.parse(text)), f"{path.relative_to(PKG)} has no docstring"
    init = ast.get_docstring(ast.parse((INDEX / "__init__.py").read_text(encoding="utf-8")))
    assert "Must not import" in init


def test_search_service_import_stays_light():
    # cli/fast.py imports the service on every `memvault search`: no heavy library, no card parser.
    code = ("import sys, memvault.search.service; print(' '.join(sorted(m for m in sys.modules if m.split('.')[0]"
            " in ('yaml', 'rapidfuzz', 'snowballstemmer', 'jieba', 'frontmatter', 'typer', 'rich', 'httpx')"
            " or m in ('memvault.search.index.parse', 'memvault.search.index.prepare', 'memvault.vault.store'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
