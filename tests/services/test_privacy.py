"""Privacy a person controls: <private> spans, memvault:off / memvault:on, capture.exclude — on every format."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from memvault.capture.hygiene import PRIVATE_MARK, strip_private, switch_in
from memvault.capture.service import capture
from memvault.vault.store import Vault

DATA = Path(__file__).resolve().parent.parent / "data"
SAMPLES = sorted((DATA / "formats").iterdir())
# A run of letters, digits, spaces or CJK: the same characters in the raw log as in the stored text.
_PLAIN = re.compile(r"[A-Za-z0-9\u4e00-\u9fff][A-Za-z0-9 \u4e00-\u9fff]{4,}[A-Za-z0-9\u4e00-\u9fff]")


def _capture(vault: Path, data: bytes, problems: list | None = None, name: str = "<stdin>"):
    return capture(Vault.open(vault, {}), [(name, io.BytesIO(data))],
                   on_problem=problems.append if problems is not None else None)


def _episodes(vault: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((vault / "episodes").rglob("*.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines()]


def _all_bytes(vault: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(vault.rglob("*")) if p.is_file())


def _audit(vault: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((vault / "audit").glob("*.log"))
            for line in f.read_text(encoding="utf-8").splitlines()]


def _needle(raw: str, first_user: str) -> str:
    """A piece of the first stored user text that the raw log holds as-is, and nothing else stored holds."""
    for run in _PLAIN.findall(first_user):
        for size in (12, 8, 6):
            for start in range(0, max(1, len(run) - size + 1), 3):
                piece = run[start:start + size].strip()
                if len(piece) >= 5 and piece in raw:
                    return piece
    raise AssertionError("no plain piece of the first user message found in the raw log")


def _first_user(vault: Path) -> str:
    return next(ep["user"] for ep in _episodes(vault) if ep["user"])


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_a_private_span_is_never_stored_in_any_format(tmp_path, vault, sample):
    import shutil

    raw = sample.read_text(encoding="utf-8")
    plain = tmp_path / "plain"
    shutil.copytree(vault, plain)
    _capture(plain, raw.encode())
    needle = _needle(raw, _first_user(plain))
    stored_before = sum(ep["user"].count(needle) + ep["assistant"].count(needle) for ep in _episodes(plain))
    assert stored_before >= 1

    marked = raw.replace(needle, f"<private>{needle}</private>")
    result = _capture(vault, marked.encode())
    assert result.new > 0
    assert needle.encode() not in _all_bytes(vault)  # not in episodes, audit or anywhere else
    assert any(PRIVATE_MARK in ep["user"] for ep in _episodes(vault))
    assert result.private["spans"] >= 1 and result.private.get("unclosed", 0) == 0
    private_audits = [a for a in _audit(vault) if "private" in a]
    assert private_audits and all(set(a["private"]) <= {"spans", "unclosed"} for a in private_audits)
    # Idempotent like any capture: the same marked log again adds nothing.
    assert _capture(vault, marked.encode()).new == 0


@pytest.mark.parametrize("sample", [s for s in SAMPLES if "-zh" in s.name or "-en" in s.name][:4] +
                         [s for s in SAMPLES if s.name.startswith(("text-", "codex-zh"))],
                         ids=lambda p: p.name)
def test_an_unclosed_private_tag_drops_the_rest_of_the_message_and_says_so(tmp_path, vault, sample):
    import shutil

    raw = sample.read_text(encoding="utf-8")
    plain = tmp_path / "plain"
    shutil.copytree(vault, plain)
    _capture(plain, raw.encode())
    first = _first_user(plain)
    needle = _needle(raw, first)
    rest = first[first.index(needle) + len(needle):].strip()
    tail = next((r for r in _PLAIN.findall(rest) if len(r) >= 6 and r in raw), None)

    problems: list[str] = []
    result = _capture(vault, raw.replace(needle, f"<private>{needle}").encode(), problems)
    stored = _all_bytes(vault)
    assert needle.encode() not in stored
    if tail and raw.count(tail) == 1:
        assert tail.encode() not in stored  # the rest of that message went with it
    assert result.private["unclosed"] >= 1
    assert any(a.get("private", {}).get("unclosed", 0) >= 1 for a in _audit(vault))
    assert problems and all("not closed" in p and needle not in p for p in problems)


def test_strip_private_nesting_case_attributes_and_stray_closers():
    assert strip_private("a <private>b</private> c").text == f"a {PRIVATE_MARK} c"
    assert strip_private("a <PRIVATE reason='x'>b</Private> c").text == f"a {PRIVATE_MARK} c"
    nested = strip_private("x<private>a<private>b</private>c</private>y")
    assert nested.text == f"x{PRIVATE_MARK}y" and nested.private == 1 and nested.unclosed == 0
    stray = strip_private("keep </private> this")
    assert stray.text == "keep  this" and stray.private == 0
    open_ = strip_private("我的密码提示是 <private>生日加猫的名字\n还有下一行")
    assert open_.text == f"我的密码提示是 {PRIVATE_MARK}" and open_.unclosed == 1
    two = strip_private("<private>a</private> mid <private>b</private>")
    assert two.text == f"{PRIVATE_MARK} mid {PRIVATE_MARK}" and two.private == 2
    assert strip_private("no tags <privateer> here").text == "no tags <privateer> here"


def test_switch_words():
    assert switch_in("please memvault:off for this one") == "off"
    assert switch_in("好的 memvault:ON") == "on"
    assert switch_in("memvault:off then memvault:on") == "on"
    assert switch_in("see xmemvault:off or memvault:offline") is None


def _chat(*turns: tuple[str, str], session: str = "s-opt") -> bytes:
    lines = []
    for i, (user, answer) in enumerate(turns):
        at = f"2026-11-02T07:{10 + i:02d}:00Z"
        lines.append({"role": "user", "content": user, "ts": at, "session": session})
        lines.append({"role": "assistant", "content": answer, "ts": at, "session": session})
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode()


OPT = [
    ("We deploy the shop with Ansible on Fridays", "Noted: Ansible, Fridays."),
    ("memvault:off — personal stuff now", "Understood, nothing of this is kept."),
    ("My doctor said the results are fine", "Good to hear about the results."),
    ("memvault:on", "Memory is back on."),
    ("The staging database is Postgres 16", "Postgres 16 on staging, noted."),
]
OPT_ZH = [
    ("我们周五用 Ansible 部署商店", "记下了：周五 Ansible。"),
    ("memvault:off 接下来是私事", "明白，这部分不保存。"),
    ("医生说我的检查结果正常", "结果正常就好。"),
    ("memvault:on 继续工作", "记忆已恢复。"),
    ("测试环境的数据库是 Postgres 16", "测试环境 Postgres 16，记下了。"),
]


@pytest.mark.parametrize("turns", [OPT, OPT_ZH], ids=["en", "zh"])
def test_memvault_off_stops_a_session_until_memvault_on(tmp_path, vault, turns):
    result = _capture(vault, _chat(*turns))
    eps = _episodes(vault)
    assert [ep["user"] for ep in eps] == [turns[0][0], turns[4][0]]
    assert result.skipped["opted-out"] == 3
    stored = b"".join(p.read_bytes() for d in ("episodes", "audit", "journal") for p in sorted(
        (vault / d).rglob("*")) if p.is_file()).decode("utf-8")
    for user, answer in turns[1:4]:
        assert user not in stored and answer not in stored
    # The same rule whether the log is captured after every turn (an agent's hook) or once at the end.
    import shutil

    grown = tmp_path / "grown"
    shutil.copytree(vault.parent / "vault", grown, dirs_exist_ok=True)
    for p in (grown / "episodes").rglob("*.jsonl"):
        p.unlink()
    for n in range(1, len(turns) + 1):
        _capture(grown, _chat(*turns[:n]))
    assert sorted(ep["id"] for ep in _episodes(grown)) == sorted(ep["id"] for ep in eps)
    assert [ep["turn"] for ep in sorted(eps, key=lambda e: e["turn"])] == [1, 5]


def _settings(vault: Path, projects: list[str], paths: list[str]) -> None:
    path = vault / "memvault.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("    projects: []", f"    projects: {json.dumps(projects)}")
    text = text.replace("    paths: []", f"    paths: {json.dumps(paths)}")
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("name,projects,paths", [
    ("claude-code-en.jsonl", [], ["/home/dana/code"]),
    ("claude-code-zh.jsonl", ["ledger-*"], []),
    ("codex-en.jsonl", [], ["/home/*/code/tide*"]),
    ("codex-zh.jsonl", [], ["/Users/wei/src/ledger-mini"]),
])
def test_capture_exclude_projects_and_paths(vault, name, projects, paths):
    _settings(vault, projects, paths)
    result = _capture(vault, (DATA / "formats" / name).read_bytes())
    assert result.new == 0 and result.skipped["excluded"] > 0
    assert _episodes(vault) == []


def test_capture_exclude_leaves_other_projects_alone(vault):
    _settings(vault, ["tidepool"], ["~/private-notes"])
    kept = _capture(vault, (DATA / "formats" / "claude-code-zh.jsonl").read_bytes())
    assert kept.new > 0 and kept.skipped["excluded"] == 0
    dropped = _capture(vault, (DATA / "formats" / "claude-code-en.jsonl").read_bytes())
    assert dropped.new == 0 and dropped.skipped["excluded"] > 0
    # A path rule also covers the input file a log is read from (formats that name no working folder).
    home = Path("~").expanduser()
    gone = _capture(vault, _chat(("A note from the private notes folder", "Fine.")),
                    name=str(home / "private-notes" / "chat.jsonl"))
    assert gone.new == 0 and gone.skipped["excluded"] == 1
