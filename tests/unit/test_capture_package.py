"""The shape of memvault/capture: the formats sub-package stays a pure leaf, capture never reaches up a layer,
and every module is small and says what it is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CAPTURE = Path(__file__).resolve().parents[2] / "memvault" / "capture"
MODULES = sorted(CAPTURE.rglob("*.py"))
HEAVY = {"jieba", "httpx", "typer", "rich", "yaml", "frontmatter", "rapidfuzz", "snowballstemmer"}


def _imports(path: Path) -> set[str]:
    """Absolute names of everything a module imports (relative imports resolved against its package)."""
    package = ".".join(path.relative_to(CAPTURE.parents[1]).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found.add(module)
            if not node.module:  # `from . import codex`
                found |= {f"{module}.{a.name}" for a in node.names}
    return found


def test_there_are_modules_to_check():
    names = {p.relative_to(CAPTURE).as_posix() for p in MODULES}
    assert {"formats/__init__.py", "formats/claude_code.py", "formats/sniff.py", "service.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(CAPTURE).as_posix())
def test_module_is_small_and_documented(path):
    source = path.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 400
    assert ast.get_docstring(ast.parse(source))


@pytest.mark.parametrize("path", sorted((CAPTURE / "formats").glob("*.py")), ids=lambda p: p.name)
def test_formats_modules_import_only_stdlib_model_errors_and_each_other(path):
    for name in _imports(path):
        if name.split(".")[0] == "memvault":
            assert name in {"memvault.model", "memvault.errors"} or name.startswith(
                "memvault.capture.formats"), f"{path.name} imports {name}"
        assert name.split(".")[0] not in HEAVY, f"{path.name} imports {name}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(CAPTURE).as_posix())
def test_capture_never_imports_a_higher_layer(path):
    for name in _imports(path):
        parts = name.split(".")
        assert not (parts[0] == "memvault" and len(parts) > 1 and parts[1] in {
            "search", "distill", "views", "cli"}), f"{path.name} imports {name}"
