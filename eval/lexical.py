"""Trade-off of the lexical gains (issue 12 item 3): `python eval/lexical.py`.

Prints, for settings of the one-word relevance floor (search.name_floor for a hit resting on one entity name,
search.expansion_floor for one resting on expansions only) and with the synonym table and entity-alias
expansion on or off, memvault's figures
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

SETTINGS = [  # (label, name_floor, expansion_floor, expand, synonyms)
    ("before: no expansion, no one-word floor", 0.0, 0.0, False, False),
    ("no expansion, floor 0.4 / 0.25", 0.4, 0.25, False, False),
    ("aliases, no floor (the default)", 0.0, 0.0, True, False),
    ("aliases, floor 0.4 / 0.25", 0.4, 0.25, True, False),
    ("aliases + synonyms, no one-word floor", 0.0, 0.0, True, True),
    ("aliases + synonyms, floor names 0.4 only", 0.4, 0.0, True, True),
    ("aliases + synonyms, floor 0.4 / 0.25", 0.4, 0.25, True, True),
    ("aliases + synonyms, floor 0.4 / 0.4", 0.4, 0.4, True, True),
    ("aliases + synonyms, floor 0.5 / 0.25", 0.5, 0.25, True, True),
    ("aliases + synonyms, floor 0.6 / 0.25", 0.6, 0.25, True, True),
    ("aliases + synonyms, floor 1.0 / 0.25 (any one-word name hit)", 1.01, 0.25, True, True),
]


def main() -> int:
    questions = ev.load_questions(HERE / "questions.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(HERE / "fixture", root)
        for label, names, expansions, expansion, synonyms in SETTINGS:
            rows = ev.measure(ev.engine(root, expand=expansion, synonyms=synonyms, name_floor=names,
                                        expansion_floor=expansions), questions)["rows"]
            print(label)
            print("  old set       ", ev.fmt(ev.summarise([r for r in rows if r["type"] not in ev.HARD_TYPES])))
            for t in ev.HARD_TYPES:
                part = [r for r in rows if r["type"] == t]
                halves = [ev.fmt(ev.summarise([r for r in part if int(r["id"][1:]) % 2 == p])) for p in (0, 1)]
                print(f"  {t:15}", ev.fmt(ev.summarise(part)), "| even", halves[0], "| odd", halves[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
