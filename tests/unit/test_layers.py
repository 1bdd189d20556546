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


def test_mcp_is_an_interface_layer_beside_cli():
    """memvault/mcp may import the service layers and core but never cli; only cli imports it; the SDK is
    imported by memvault/mcp/server.py alone (and, to check the extra is there, by the `mcp` command)."""
    sdk_users = {PKG / "mcp" / "server.py", PKG / "cli" / "commands" / "agent.py"}
    for path in sorted(PKG.rglob("*.py")):
        names = _imports(path, False)
        layer = path.relative_to(PKG).parts[0]
        if layer not in ("cli", "mcp"):
            assert not any(n == "memvault.mcp" or n.startswith("memvault.mcp.") for n in names), path
        if layer == "mcp":
            assert not any(n.startswith("memvault.cli") for n in names), path
        if path not in sdk_users:
            assert not any(n.split(".")[0] in ("mcp", "mcp_types") for n in names), path
    assert "memvault.mcp.server" not in _imports(PKG / "mcp" / "tools.py", False)
