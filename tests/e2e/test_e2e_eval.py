"""eval/e2e.py, the end-to-end memory eval, on a small synthetic conversation in LoCoMo's shape: the chain log ->
real CLI capture and distill -> search/context -> provenance -> evidence turns must count what it finds, and
only that (the benchmark itself is not in the repository)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

TURNS = [
    ("user", "Ana", "Hi Ben! How was your week?"),
    ("assistant", "Ben", "Busy! We decided to use Postgres for the bakery orders app, SQLite was too small."),
    ("user", "Ana", "Nice. Remember that the bakery opens at 6am on weekdays."),
    ("assistant", "Ben", "Noted, I will schedule the backup job at 4am then."),
    ("user", "Ana", "The walnut bread sold out twice this month, people love it."),
    ("assistant", "Ben", "Great, the oven repair is booked for Thursday morning."),
]
QUESTIONS = [
    # answered by a turn the offline engine turns into a card (a decision stated outright)
    {"qid": "0-0", "question": "Which database did they decide to use for the orders app?", "evidence": ["D1:2"]},
    # answered by raw turns only
    {"qid": "0-1", "question": "What sold out twice this month?", "evidence": ["D1:5"]},
    # nothing in the chat says it: no engine may cite evidence for it
    {"qid": "0-2", "question": "What colour is the delivery van?", "evidence": ["D9:9"]},
]


def _data(tmp: Path) -> Path:
    data = tmp / "data"
    (data / "chats").mkdir(parents=True)
    with open(data / "chats" / "locomo-0.jsonl", "w", encoding="utf-8") as fh:
        for i, (role, who, text) in enumerate(TURNS, start=1):
            fh.write(json.dumps({"role": role, "speaker": who, "content": text, "ts": "2023-05-08T13:56:00",
                                 "session": 1, "id": f"D1:{i}", "project": "locomo-0"}) + "\n")
    with open(data / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q in QUESTIONS:
            fh.write(json.dumps({**q, "conv": 0, "category": 1, "category_name": "single-hop"}) + "\n")
    return data


def test_e2e_eval_follows_provenance_from_log_to_evidence(tmp_path):
    data = _data(tmp_path)
    out = subprocess.run([sys.executable, str(ROOT / "eval" / "e2e.py"), "--data", str(data), "--convs", "0",
                          "--json", "--keep", str(tmp_path / "vaults")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    tune = report["tune (conv 0-2)"]
    assert tune["questions"] == 3 and tune["turns"] == 3  # three episodes: a user turn and its reply each
    conv = report["per conversation"][0]
    root = tmp_path / "vaults" / "conv-0"
    cards = list((root / "cards").rglob("*.md"))
    assert conv["cards"] == len(cards)
    # raw-turn search finds the evidence of the two answerable questions and none of the third
    episodes = tune["episodes"]["all"]
    assert episodes["any@10"] == 2 / 3
    # coverage counts only evidence turns some card cites: it is the share the cards' sources reach
    cited = set()
    for path in cards:
        front = yaml.safe_load(path.read_text(encoding="utf-8").split("---")[1])
        cited.update(front["source"].get("episodes") or ())
    covered = {ref for ep, refs in _refs(root).items() if ep in cited for ref in refs} & {"D1:2", "D1:5"}
    assert conv["covered_turns"] == len(covered) and conv["coverage"] == len(covered) / 3  # D9:9 is nowhere
    # the unanswerable question's evidence is cited by nothing, whatever the engine
    for engine in ("cards", "search", "episodes"):
        assert tune[engine]["all"]["any@10"] <= 2 / 3
    assert tune["context"]["all"]["any"] <= 2 / 3
    # every question gets a pack (cards and raw turns), and both answerable ones find their evidence in it
    assert tune["context"]["all"]["items"] > 0 and tune["context"]["all"]["any"] == 2 / 3


def _refs(root: Path) -> dict[str, set[str]]:
    out = {}
    for path in (root / "episodes").rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            out[rec["id"]] = set((rec.get("source") or {}).get("refs") or ())
    return out
