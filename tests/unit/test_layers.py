"""The direction of dependencies (STYLE.md): cli -> services -> vault -> codec -> model -> errors.

Pure leaves import only the standard library and memvault.model/errors; nothing imports cli; only llm imports
httpx; jieba is never imported at module level.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "memvault"
PURE = {"redact", "redact_shapes", "tokenize", "bm25", "config", "model", "errors", "formats", "slug", "auto",
        "locate"}
# A pure leaf may lean on a pure helper of its own (redact's credential shapes; issue 9 makes them a package).
PURE_HELPERS = {"redact": {"memvault.redact.shapes"}}


def _imports(path: Path, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == "memvault":
                found.update(f"memvault.{a.name}" for a in node.names)
    return found


def modules():
    return sorted(p for p in PKG.glob("*.py"))


def test_nothing_imports_cli():
    for path in modules():
        if path.stem not in ("cli", "__main__", "fastcli"):  # entry points
            assert "memvault.cli.app" not in _imports(path, False), path.name


def test_pure_leaves_import_only_stdlib_model_errors():
    allowed_internal = {"memvault.model", "memvault.errors"}
    for path in modules():
        if path.stem not in PURE:
            continue
        for name in _imports(path, False):
            if name.startswith("memvault"):
                assert name in allowed_internal | PURE_HELPERS.get(path.stem, set()), f"{path.name} imports {name}"
            else:
                assert name.split(".")[0] not in {"typer", "rich", "httpx", "yaml", "frontmatter"}, \
                    f"{path.name} imports {name}"


def test_only_llm_imports_httpx_and_jieba_is_lazy():
    for path in modules():
        everywhere = _imports(path, False)
        if path.stem != "llm":
            assert not any(n.split(".")[0] == "httpx" for n in everywhere), path.name
        assert not any(n.split(".")[0] == "jieba" for n in _imports(path, True)), path.name


def test_services_do_not_import_render():
    for path in modules():
        if path.stem not in ("cli", "render"):
            assert "memvault.cli.render" not in _imports(path, False), path.name
