"""Trade-off of the lexical gains (issue 12 item 3): `python eval/lexical.py`.

Prints, for settings of the one-word relevance floor (ranking.ANCHOR for a hit resting on one entity name,
ranking.ANCHOR_SYNONYMS for one resting on synonyms only) and with query expansion on or off, memvault's figures
on the old set (q01-q93) and on each hard type, plus each hard type split into halves by id parity (the odd half
is the held-out check when a setting is chosen on the even half). Same service function as eval/run.py.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import run as ev  # noqa: E402
from memvault.search import ranking  # noqa: E402

SETTINGS = [  # (label, ANCHOR, ANCHOR_SYNONYMS, expansion)
    ("before: no expansion, no one-word floor", 0.0, 0.0, False),
    ("no expansion, floor 0.4 / 0.25", 0.4, 0.25, False),
    ("expansion, no one-word floor", 0.0, 0.0, True),
    ("expansion, floor names 0.4 only", 0.4, 0.0, True),
    ("expansion, floor 0.4 / 0.25 (shipped)", 0.4, 0.25, True),
    ("expansion, floor 0.4 / 0.4", 0.4, 0.4, True),
    ("expansion, floor 0.5 / 0.25", 0.5, 0.25, True),
    ("expansion, floor 0.6 / 0.25", 0.6, 0.25, True),
    ("expansion, floor 1.0 / 0.25 (any one-word name hit)", 1.01, 0.25, True),
]


def main() -> int:
    questions = ev.load_questions(HERE / "questions.jsonl")
    keep = (ranking.ANCHOR, ranking.ANCHOR_SYNONYMS)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(HERE / "fixture", root)
        for label, names, synonyms, expansion in SETTINGS:
            ranking.ANCHOR, ranking.ANCHOR_SYNONYMS = names, synonyms
            rows = ev.measure(ev.engine(root, expand=expansion), questions)["rows"]
            print(label)
            print("  old set       ", ev.fmt(ev.summarise([r for r in rows if r["type"] not in ev.HARD_TYPES])))
            for t in ev.HARD_TYPES:
                part = [r for r in rows if r["type"] == t]
                halves = [ev.fmt(ev.summarise([r for r in part if int(r["id"][1:]) % 2 == p])) for p in (0, 1)]
                print(f"  {t:15}", ev.fmt(ev.summarise(part)), "| even", halves[0], "| odd", halves[1])
    ranking.ANCHOR, ranking.ANCHOR_SYNONYMS = keep
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
