"""capture of several inputs and of inputs whose first line is huge (issue 21, items 1 and 2).

Item 1: `capture A B` where one file has an unknown shape captures the others and warns naming the file; it
exits 2 after storing them (issue 35: a script must see the refusal). When no input could be read at all the
usage error names the file.
Item 2: the format of a JSON-lines log whose first line is longer than the sniffing window (a 20 MB paste) is
found from a bounded prefix of that line and the lines after it; nothing else of such a log is lost.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def episodes(vault: Path) -> list[dict]:
    return [json.loads(x) for f in sorted((vault / "episodes").rglob("*.jsonl"))
            for x in f.read_text(encoding="utf-8").splitlines() if '"type":"revoke"' not in x]


def test_one_unknown_file_among_several_is_skipped_with_a_warning_naming_it(run, vault, tmp_path):
    odd = tmp_path / "notes.json"
    odd.write_text('{"title": "not a chat", "items": [1, 2, 3]}\n', encoding="utf-8")
    odd_zh = tmp_path / "笔记.yaml"
    odd_zh.write_text("标题: 不是聊天记录\n条目: [1, 2]\n", encoding="utf-8")
    good = [EXAMPLES / "claude-code-session.jsonl", EXAMPLES / "sillytavern-chat.jsonl"]
    res = run("capture", str(good[0]), str(odd), str(good[1]), str(odd_zh), "--json", code=2)  # refused: exit 2
    out = json.loads(res.stdout)
    assert out["new"] > 0 and set(out["formats"]) == {str(g) for g in good}
    assert {x["input"] for x in out["inputs_skipped"]} == {str(odd), str(odd_zh)}
    assert f"warning: {odd}: unknown format" in res.stderr and f"warning: {odd_zh}: unknown format" in res.stderr
    both = {e["source"]["kind"] for e in episodes(vault)}
    assert both == {"claude-code", "sillytavern"}
    assert all(x["refused"] for x in out["inputs_skipped"])
    text = run("capture", str(odd), str(good[0]), code=2)  # the text summary: the same warning
    assert "already stored" in text.stdout and f"{odd}: unknown format" in text.stderr


def test_when_no_input_can_be_read_it_is_a_usage_error_naming_the_file(run, vault, tmp_path):
    odd = tmp_path / "notes.json"
    odd.write_text('{"title": "not a chat"}\n', encoding="utf-8")
    res = run("capture", str(odd), code=2)
    assert f"{odd}: unknown format" in res.stderr and "--format" in res.stderr
    res = run("capture", str(odd), str(odd), code=2)
    assert res.stderr.count(f"{odd}: unknown format") >= 1
    res = run("capture", input='{"title": "not a chat"}\n', code=2)
    assert "<stdin>: unknown format" in res.stderr
    assert episodes(vault) == []


def _big_first_line(path: Path, shape: str, size: int) -> list[str]:
    """A log in `shape` whose first message is `size` bytes of pasted text; returns the short user texts."""
    paste = ("0123456789abcdef" * (size // 16 + 1))[:size]
    asks = ["Which port does the NAS admin page use?", "那备份盘挂在哪个目录？"]
    answers = ["Port 5001 over HTTPS.", "挂在 /volume2/backup。"]
    rows: list[dict] = []
    if shape == "jsonl":
        rows.append({"role": "user", "content": paste, "session": "big"})
        rows.append({"role": "assistant", "content": "That is a long paste.", "session": "big"})
        for q, a in zip(asks, answers):
            rows += [{"role": "user", "content": q, "session": "big"}, {"role": "assistant", "content": a,
                                                                          "session": "big"}]
    elif shape == "claude-code":
        base = {"sessionId": "5f0c2a9e-0000-4000-8000-00000000b19b", "cwd": "/home/dana/nas", "version": "2.0.31"}
        n = 0
        for role, text in [("user", paste), ("assistant", "That is a long paste."),
                           *[x for qa in zip(asks, answers) for x in (("user", qa[0]), ("assistant", qa[1]))]]:
            n += 1
            content = text if role == "user" else [{"type": "text", "text": text}]
            parent = f"00000000-0000-4000-8000-{n - 1:012d}" if n > 1 else None
            rows.append({"parentUuid": parent, **base, "type": role, "message": {"role": role, "content": content},
                         "uuid": f"00000000-0000-4000-8000-{n:012d}", "timestamp": f"2026-03-02T09:{n:02d}:00Z"})
    elif shape == "sillytavern":
        rows.append({"user_name": "Dana", "character_name": "Aria", "create_date": "2026-03-02@09h00m00s"})
        rows.append({"name": "Aria", "is_user": False, "mes": paste, "send_date": "2026-03-02@09h00m01s"})
        for q, a in zip(asks, answers):
            rows += [{"name": "Dana", "is_user": True, "mes": q, "send_date": "2026-03-02@09h01m00s"},
                     {"name": "Aria", "is_user": False, "mes": a, "send_date": "2026-03-02@09h01m05s"}]
        rows = rows[1:]  # no header: the 20 MB greeting is the first line
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return asks


@pytest.mark.parametrize("shape", ["jsonl", "claude-code", "sillytavern"])
def test_a_20_mb_first_line_does_not_hide_the_format(tmp_path, shape):
    vault = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "memvault", "init", str(vault)], check=True, capture_output=True)
    log = tmp_path / f"big-{shape}.jsonl"
    asks = _big_first_line(log, shape, 20 * 1024 * 1024)
    proc = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "capture", "--json",
                           "--project", "nas"], stdin=log.open("rb"), capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-500:]
    out = json.loads(proc.stdout)
    assert out["formats"] == {"<stdin>": shape}
    stored = [e["user"] for e in episodes(vault)]
    assert all(q in stored for q in asks), stored
    # the 20 MB line is over capture.max_line_bytes (8 MB): skipped and reported by line, never stored
    assert any(":1: line longer than" in p for p in out["problems"]), out["problems"]


def test_a_long_first_line_under_the_cap_is_kept_whole(run, vault, tmp_path):
    log = tmp_path / "long.jsonl"
    _big_first_line(log, "jsonl", 300 * 1024)  # longer than the 64 KiB sniffing window, under the line cap
    out = run.json("capture", str(log), "--project", "nas")
    assert out["formats"] == {str(log): "jsonl"} and out["new"] == 3
    [first] = [e for e in episodes(vault) if e["user"].startswith("0123456789abcdef")]
    # whole (then capped at capture.max_chars as any turn): the bytes read for sniffing were replayed in order
    assert first["user"].endswith(f"…[memvault: cut {300 * 1024 - 12000} chars]")
