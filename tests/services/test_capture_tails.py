"""Tails of real-shaped logs align (issue 21, item 9): every log of examples/, tests/data/formats/ and
tests/data/shapes/ is cut at `tail -n 2..6` and captured both ways.

- whole, then the tail: the tail stores nothing new and revokes nothing;
- the tail, then the whole: nothing is revoked and the vault then holds exactly the turns the whole log gives
  alone, none twice. Two allowances: a tail cut between two user messages of one turn stored that turn from its
  second message on, and the whole log finds it already stored (it is neither stored twice nor revoked); a
  JSON-lines or text tail that begins inside an answer stored that answer's end as an opening, since those
  formats cannot tell it from a greeting (the whole log's full turn is stored beside it).
A cut JSON document is not JSON: capture refuses it (exit 2) and nothing is stored. Real files, the capture
service in this process (tests/e2e/test_capture_cuts.py runs the CLI in real processes on the same kind of cuts).
"""

from __future__ import annotations

import io
import json
import shutil
from collections import Counter
from pathlib import Path

from memvault.capture.service import capture
from memvault.errors import InputError
from memvault.vault.store import Vault

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted([*ROOT.glob("examples/*.json*"), *ROOT.glob("examples/*.txt"),
               *ROOT.glob("tests/data/formats/*.json*"), *ROOT.glob("tests/data/formats/*.txt"),
               *ROOT.glob("tests/data/shapes/*.json*"), *ROOT.glob("tests/data/shapes/*.txt")])


def _vault(path: Path) -> Path:
    shutil.copytree(ROOT / "vault-template", path)
    return path


def _capture(root: Path, data: bytes, log: Path):
    try:
        return capture(Vault.open(root, {}), [("<stdin>", io.BytesIO(data))],
                       project="shop" if log.suffix == ".txt" else None)
    except InputError:
        return None  # a cut JSON document: nothing read


def _live(root: Path) -> list[tuple[str, str]]:
    eps, revoked = {}, set()
    for f in (root / "episodes").rglob("*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec.get("type") == "revoke":
                revoked.update(rec["ids"])
            else:
                eps[rec["id"]] = (rec["user"], rec["assistant"])
    return [turn for eid, turn in eps.items() if eid not in revoked]


def _same_turns(got: list[tuple[str, str]], want: list[tuple[str, str]], log: Path) -> bool:
    """The same turns, each once; a stored turn may hold the whole's user text from a later message on, and a
    JSON-lines or text tail may have stored the end of an answer it began inside as an opening (those formats
    cannot say where a conversation starts: see `_FRAGMENT_OK`)."""
    left = Counter(got)
    if _FRAGMENT_OK(log):
        for (user, answer), n in list(left.items()):
            if n and not user and any(u and a.endswith(answer) for u, a in want):
                left[(user, answer)] -= 1
    parts = 0
    for user, answer in want:
        if left[(user, answer)]:
            left[(user, answer)] -= 1
            continue
        part = next((u for (u, a), n in left.items() if n and a == answer and user.endswith("\n\n" + u)), None)
        if part is None:
            return False
        left[(part, answer)] -= 1
        parts += 1
    return sum(left.values()) == 0 and parts <= 1


def _FRAGMENT_OK(log: Path) -> bool:  # noqa: N802 - a named rule, read as one
    """A plain JSON-lines or text log: its first assistant message may be a greeting or the end of an answer."""
    return log.suffix == ".txt" or log.name.startswith(("jsonl", "notes"))


def tails(log: Path) -> list[tuple[int, bytes]]:
    lines = log.read_bytes().splitlines(keepends=True)
    return [(k, b"".join(lines[-k:])) for k in range(2, 7) if k < len(lines)]


def test_the_logs_cover_every_format_and_the_real_shapes():
    kinds = {p.name.split("-")[0] for p in LOGS}
    assert {"claude", "codex", "chatgpt", "openai", "sillytavern", "jsonl", "text", "cursor", "gemini", "antigravity",
            "opencode"} <= kinds
    assert {"claude-ai-conversations.json", "gemini-session.jsonl"} <= {p.name for p in LOGS}
    assert len(LOGS) >= 25 and len(list(ROOT.glob("tests/data/shapes/*.json*"))) >= 6


def test_whole_then_tail_stores_and_revokes_nothing(tmp_path):
    bad, cuts = [], 0
    for i, log in enumerate(LOGS):
        root = _vault(tmp_path / f"v{i}")
        whole = _capture(root, log.read_bytes(), log)
        assert whole is not None and whole.new > 0, log
        for k, cut in tails(log):
            cuts += 1
            res = _capture(root, cut, log)
            if res is not None and (res.new or res.revoked):
                bad.append(f"{log.name} tail -n {k}: {res.new} new, {res.revoked} revoked")
    print(f"whole then tail: {cuts} cuts of {len(LOGS)} logs, {len(bad)} stored or revoked something")
    assert cuts >= 100
    assert bad == [], "\n".join(bad)


def test_tail_then_whole_revokes_nothing_and_stores_each_turn_once(tmp_path):
    bad, cuts = [], 0
    for i, log in enumerate(LOGS):
        ref = _vault(tmp_path / f"ref{i}")
        _capture(ref, log.read_bytes(), log)
        want = _live(ref)
        for k, cut in tails(log):
            cuts += 1
            root = _vault(tmp_path / f"v{i}-{k}")
            _capture(root, cut, log)
            res = _capture(root, log.read_bytes(), log)
            got = _live(root)
            if res.revoked or not _same_turns(got, want, log):
                bad.append(f"{log.name} tail -n {k} then whole: {res.revoked} revoked, {len(got)} turns, "
                           f"{len(want)} in the whole log")
    print(f"tail then whole: {cuts} cuts of {len(LOGS)} logs, {len(bad)} revoked or stored a turn twice")
    assert cuts >= 100
    assert bad == [], "\n".join(bad)
