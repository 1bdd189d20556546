"""Layers of memvault.redact and memvault.vault (issue 9): redact is a pure leaf; vault imports no higher layer."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "memvault"
CORE = {"memvault.errors", "memvault.model", "memvault.choices"}
ABOVE_VAULT = ("memvault.search", "memvault.capture", "memvault.distill", "memvault.views", "memvault.cli")
KNOWN_UPWARD: set[tuple[str, str]] = set()  # supersede moved down to memvault.model


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if node.module == "memvault")
    return found


def test_redact_imports_only_stdlib_core_and_itself():
    for path in sorted((PKG / "redact").glob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "memvault":
                assert name in CORE or name.startswith("memvault.redact"), f"{path.name} imports {name}"
            else:
                assert top in sys.stdlib_module_names or top == "__future__", f"{path.name} imports {name}"


def test_vault_imports_no_higher_layer():
    upward = set()
    for path in sorted((PKG / "vault").glob("*.py")):
        for name in _imports(path):
            for layer in ABOVE_VAULT:
                if name == layer or name.startswith(layer + "."):
                    upward.add((path.name, layer))
    assert upward == KNOWN_UPWARD


def test_every_redact_and_vault_module_is_small_and_documented():
    for package in ("redact", "vault"):
        for path in sorted((PKG / package).glob("*.py")):
            text = path.read_text(encoding="utf-8")
            assert len(text.splitlines()) <= 400, path.name
            assert ast.get_docstring(ast.parse(text)), path.name
