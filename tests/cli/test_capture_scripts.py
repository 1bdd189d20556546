"""Scripts can tell what capture did (issue 35, item 5): `capture DIR` reads the logs inside a folder and lists
what it skipped; a run in which an input was refused exits 2 after storing the others; `--source NAME` names
piped input in refs, and `show` prints that ref.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SHAPES = ROOT / "tests" / "data" / "shapes"


def episodes(vault: Path) -> list[dict]:
    return [json.loads(x) for f in sorted((vault / "episodes").rglob("*.jsonl"))
            for x in f.read_text(encoding="utf-8").splitlines() if '"type":"revoke"' not in x]


def _folder(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A folder as people keep them: logs in nested folders, and files that are no chat logs."""
    top = tmp_path / "chats"
    logs = [top / "claude" / "-home-ines-greenhouse" / "7c1e.jsonl", top / "codex" / "2026" / "02" / "rollout.jsonl",
            top / "notes" / "allotment.md", top / "角色扮演" / "Old Tom.jsonl"]
    sources = [SHAPES / "claude-code-unlinked.jsonl", SHAPES / "codex-events.jsonl", SHAPES / "text-dated.txt",
               EXAMPLES / "sillytavern-chat.jsonl"]
    for dst, src in zip(logs, sources):
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dst)
    (top / "notes" / "settings.json").write_text('{"theme": "dark", "fontSize": 14}\n', encoding="utf-8")
    (top / "notes" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (top / "notes" / "compose.yaml").write_text("services:\n  web:\n    user: root\n", encoding="utf-8")
    (top / ".git").mkdir()
    (top / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    return top, logs


def test_capture_a_folder_reads_the_logs_inside_it_recursively_and_lists_what_it_skipped(run, vault, tmp_path):
    top, logs = _folder(tmp_path)
    out = run.json("capture", str(top), "--project", "home")
    assert set(out["formats"]) == {str(p) for p in logs}
    assert set(out["formats"].values()) == {"claude-code", "codex", "text", "sillytavern"}
    skipped = {Path(x["input"]).name: x for x in out["inputs_skipped"]}
    assert set(skipped) == {"settings.json", "photo.png", "compose.yaml", ".git"}
    assert not any(x["refused"] for x in skipped.values())
    assert "unknown format" in skipped["settings.json"]["reason"] and skipped[".git"]["reason"] == "hidden folder"
    stored = episodes(vault)
    assert {e["source"]["kind"] for e in stored} == {"claude-code", "codex", "text", "sillytavern"}
    assert any(e["user"].startswith("番茄苗") for e in stored)  # a file two folders down
    again = run("capture", str(top), "-v")  # the text summary says what it skipped, on stderr; exit 0
    assert again.stdout.startswith("0 new, ") and "skipped 4 files in folders that are not chat logs" in again.stderr
    assert "settings.json" in again.stderr


def test_a_refused_input_makes_the_run_exit_2_after_the_others_are_stored(run, vault, tmp_path):
    good = tmp_path / "pottery.txt"
    good.write_text("User: The kiln is on a 32 A circuit.\nAssistant: Noted, 32 A for the kiln.\n",
                    encoding="utf-8")
    bad = tmp_path / "orders.csv"
    bad.write_text("name,qty\nclay,3\n", encoding="utf-8")
    res = run("capture", str(good), str(bad), "--project", "pot", code=2)
    assert res.stdout.startswith("1 new, ")
    assert f"warning: {bad}: unknown format" in res.stderr and "1 of 2 inputs refused" in res.stderr
    assert [e["user"] for e in episodes(vault)] == ["The kiln is on a 32 A circuit."]
    missing = tmp_path / "gone.jsonl"
    out = json.loads(run("capture", str(good), str(missing), "--json", code=2).stdout)
    assert out["already_stored"] == 1
    assert out["inputs_skipped"] == [{"input": str(missing), "reason": "cannot read (No such file or directory)",
                                      "refused": True}]


def test_an_unreadable_file_inside_a_folder_is_refused(run, vault, tmp_path):
    top, _logs = _folder(tmp_path)
    (top / "notes" / "lost.jsonl").symlink_to(tmp_path / "nowhere.jsonl")  # a link whose file is gone
    res = run("capture", str(top), "--json", code=2)
    out = json.loads(res.stdout)
    assert out["new"] > 0 and f"{top / 'notes' / 'lost.jsonl'}: cannot read" in res.stderr
    assert [x["input"] for x in out["inputs_skipped"] if x["refused"]] == [str(top / "notes" / "lost.jsonl")]


def test_a_folder_with_no_chat_log_stores_nothing_and_is_no_error(run, vault, tmp_path):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    (tmp_path / "empty" / "sub" / "todo.md").write_text("# todo\n- buy clay\n", encoding="utf-8")
    out = run.json("capture", str(tmp_path / "empty"))
    assert out["new"] == 0 and [x["refused"] for x in out["inputs_skipped"]] == [False]


def test_source_names_piped_input_in_refs_and_show_leads_back_to_it(run, vault):
    text = "User: 窑炉接在 32 A 的线路上。\nAssistant: 记下了：窑炉 32 A。\nUser: And the glaze shelf?\nAssistant: Left wall.\n"
    out = run.json("capture", "--source", "chats/陶艺 notes.txt", "--project", "pot", input=text.encode())
    assert out["formats"] == {"chats/陶艺 notes.txt": "text"}
    eps = episodes(vault)
    assert [e["source"]["ref"] for e in eps] == ["chats/陶艺 notes.txt:1", "chats/陶艺 notes.txt:3"]
    shown = run("show", eps[1]["id"]).stdout
    assert "from text chats/陶艺 notes.txt:3" in shown.splitlines()[1]
    again = run.json("capture", "--source", "chats/陶艺 notes.txt", "--project", "pot", input=text.encode())
    assert again["new"] == 0 and again["already_stored"] == 2


def test_source_is_for_piped_input_and_one_printable_line(run, vault, tmp_path):
    log = tmp_path / "a.txt"
    log.write_text("User: hi there, a question\nAssistant: yes?\n", encoding="utf-8")
    res = run("capture", str(log), "--source", "x", code=2)
    assert "--source names piped input" in res.stderr
    res = run("capture", "--source", "two\nlines", input=b"User: hello there\nAssistant: hi\n", code=2)
    assert "one printable line" in res.stderr
    assert episodes(vault) == []


def test_a_vault_inside_the_folder_is_never_read_back(run, vault, tmp_path):
    top, logs = _folder(tmp_path)
    run("capture", str(logs[2]), "--project", "home")
    shutil.copytree(vault, top / "memvault")  # the vault kept among the notes, its day files full of turns
    out = run.json("capture", str(top), "--project", "home")
    assert str(top / "memvault") in [x["input"] for x in out["inputs_skipped"]]
    assert not any("memvault" in name for name in out["formats"])
    assert out["already_stored"] == 3 and out["revoked"] == 0
