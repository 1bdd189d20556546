"""`memvault import-rules FILE…` through the CLI: the statements of agents' rule files (tests/data/rules, written
for these tests in the shapes CLAUDE.md, AGENTS.md, MEMORY.md, .cursorrules and .mdc rules have) become cards
sourced FILE:LINE; a re-import writes nothing, an edit supersedes, a removal retracts; secrets never land."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

RULES = Path(__file__).resolve().parents[1] / "data" / "rules"
SECRET = "sk-proj-Q7fL2mN9xR4tV8wY1zB3cD5eG6hJ0kP2sU4"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "harbor-api"
    (repo / ".cursor" / "rules").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copy(RULES / "CLAUDE.md", repo / "CLAUDE.md")
    shutil.copy(RULES / "AGENTS.zh.md", repo / "AGENTS.md")
    shutil.copy(RULES / "typescript.mdc", repo / ".cursor" / "rules" / "typescript.mdc")
    shutil.copy(RULES / ".cursorrules", repo / ".cursorrules")
    return repo


def _cards(vault: Path) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in (vault / "cards").rglob("*.md")}


def _bytes(vault: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file() and ".memvault" not in p.parts}


def _show(run, cid: str) -> dict:
    return run.json("show", cid, "--json")


def test_import_then_reimport_changes_nothing(run, vault, tmp_path):
    repo = _repo(tmp_path)
    files = [str(repo / "CLAUDE.md"), str(repo / "AGENTS.md"), str(repo / ".cursor/rules/typescript.mdc"),
             str(repo / ".cursorrules")]
    out = run.json("import-rules", *files, "--json")
    assert [f["statements"] for f in out["files"]] == [7, 4, 2, 4] and out["changed"] is True
    assert sum(len(f["new"]) for f in out["files"]) == 17
    cards = {cid: _show(run, cid) for f in out["files"] for cid in f["new"]}
    kinds = sorted(c["kind"] for c in cards.values())
    assert kinds.count("preference") == 3 and kinds.count("rule") == 14
    by_title = {c["title"]: c for c in cards.values()}
    zh = by_title["我喜欢简短的提交说明，一行说清楚改了什么。"]
    assert zh["kind"] == "preference" and zh["source"]["ref"] == f"{repo / 'AGENTS.md'}:5"
    assert zh["project"] == "harbor-api" and zh["confidence"] == "user_stated"
    assert by_title["Testing: use vitest, not jest"]["source"]["ref"].endswith("CLAUDE.md:13")
    assert "CLAUDE.md:13 (a rules file" in run("show", by_title["Testing: use vitest, not jest"]["id"]).stdout
    # The secret in CLAUDE.md was redacted before it became a title, an id or a hash.
    assert not any(SECRET.encode() in b for b in _bytes(vault).values())
    assert any("[REDACTED:" in c["title"] for c in cards.values())

    before = _bytes(vault)
    again = run.json("import-rules", *files, "--json")
    assert again["changed"] is False and [f["unchanged"] for f in again["files"]] == [7, 4, 2, 4]
    assert _bytes(vault) == before  # not a byte: no card, no journal line, no entity page


def test_edit_supersedes_and_removal_retracts(run, vault, tmp_path):
    repo = _repo(tmp_path)
    claude = repo / "CLAUDE.md"
    first = {run.json("show", cid, "--json")["title"]: cid
             for cid in run.json("import-rules", str(claude), "--json")["files"][0]["new"]}
    text = claude.read_text(encoding="utf-8")
    text = text.replace("- use vitest, not jest", "- use vitest 3, never jest or mocha")  # edited in place
    text = text.replace("- Prefer named exports over default exports.\n", "")  # removed
    text = "<!-- moved down a line -->\n" + text  # every line shifts: unchanged words stay unchanged
    claude.write_text(text, encoding="utf-8")

    dry = run.json("import-rules", str(claude), "--dry-run", "--json")
    assert dry["dry_run"] is True and len(dry["files"][0]["superseded"]) == 1
    assert _show(run, first["Testing: use vitest, not jest"])["status"] == "active"  # nothing written

    out = run.json("import-rules", str(claude), "--json")["files"][0]
    assert out["unchanged"] == 5 and len(out["new"]) == 1 and out["retracted"] == [first[
        "Prefer named exports over default exports."]]
    [pair] = out["superseded"]
    old, new = _show(run, pair["old"]), _show(run, pair["new"])
    assert old["status"] == "superseded" and new["title"] == "Testing: use vitest 3, never jest or mocha"
    assert new["supersedes"] == [old["id"]] and new["source"]["ref"] == f"{claude}:13"  # +1 above, -1
    gone = _show(run, first["Prefer named exports over default exports."])
    assert gone["status"] == "retracted" and f"reason: removed from {claude}" in _cards(vault)[gone["id"]]
    # The pack an agent gets holds the rule as it reads now, and neither the old one nor the removed one.
    pack = run("context", "how do we test", "--project", "harbor-api").stdout
    assert "vitest 3" in pack and "not jest" not in pack and "named exports" not in pack

    # A line put back brings its card back, now at its new line; again with nothing changed writes nothing.
    claude.write_text(text + "\n- Prefer named exports over default exports.\n", encoding="utf-8")
    back = run.json("import-rules", str(claude), "--json")["files"][0]
    named = first["Prefer named exports over default exports."]
    assert back["new"] == [] and back["restored"] == [named]
    assert _show(run, named)["status"] == "active" and "retracted:" not in _cards(vault)[named]
    assert _show(run, named)["source"]["ref"] == f"{claude}:{len(text.splitlines()) + 2}"
    assert run.json("import-rules", str(claude), "--json")["changed"] is False


def test_memory_md_and_home_files_are_personal(run, vault, tmp_path):
    home_rules = Path.home() / ".claude" / "CLAUDE.md"
    home_rules.parent.mkdir(parents=True)
    shutil.copy(RULES / "AGENTS.zh.md", home_rules)
    memory = Path.home() / ".claude" / "projects" / "-work-shop" / "memory" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    shutil.copy(RULES / "MEMORY.md", memory)
    out = run.json("import-rules", str(home_rules), "--json")
    assert {_show(run, cid)["project"] for cid in out["files"][0]["new"]} == {None}
    assert out["files"][0]["file"] == "~/.claude/CLAUDE.md"
    mem = run.json("import-rules", str(memory), "--project", "shop", "--json")["files"][0]
    titles = sorted(_show(run, cid)["title"] for cid in mem["new"])
    assert titles == ["Deploy window — deploys happen Tuesday to Thursday only",
                      "Prefers tabs in Go — the user wants tabs, not spaces, in Go files"]
    assert {_show(run, cid)["project"] for cid in mem["new"]} == {"shop"}


def test_bad_input_is_refused_before_anything_is_written(run, vault, tmp_path):
    repo = _repo(tmp_path)
    before = _bytes(vault)
    res = run("import-rules", str(repo / "CLAUDE.md"), str(repo / "missing.md"), code=2)
    assert "missing.md" in res.stderr and _bytes(vault) == before
    binary = repo / "logo.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    assert "logo.png" in run("import-rules", str(binary), code=2).stderr
    assert run("import-rules", str(repo / "CLAUDE.md"), "--project", "bad/name", code=2)
    assert _bytes(vault) == before


def test_a_hand_retraction_holds_and_a_linked_file_is_read_once(run, vault, tmp_path):
    repo = _repo(tmp_path)
    (repo / "CLAUDE.md").unlink()
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")  # many repositories keep one file under both names
    out = run.json("import-rules", str(repo / "AGENTS.md"), str(repo / "CLAUDE.md"), "--json")
    assert len(out["files"]) == 1 and len(out["files"][0]["new"]) == 4
    assert run.json("import-rules", str(repo / "CLAUDE.md"), "--json")["changed"] is False
    cid = out["files"][0]["new"][0]
    run("forget", cid, "--retract", "--reason", "we dropped this rule")
    again = run.json("import-rules", str(repo / "AGENTS.md"), "--json")
    assert again["changed"] is False and _show(run, cid)["status"] == "retracted"
