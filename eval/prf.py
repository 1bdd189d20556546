"""Pseudo-relevance feedback, measured and NOT shipped: `python eval/prf.py [TERMS,WEIGHT ...]`.

The words that the best first-pass hits share become extra query terms for a second pass (an expand.Expansion
without mass: it re-ranks and never counts toward the relevance floor). The hard questions (q94 on) are split in
two halves by id parity; the settings are chosen on the even half and the decision must hold on the odd half.
Result (eval/REPORT.md): on the even half every setting lowered paraphrase-hard R@5 (0.300 -> 0.250) and the
old set's R@1 (0.889 -> 0.840 or lower) without changing negatives; the odd half did not gain either. So
memvault does not use it. Cards alone, through pipeline.card_hits (no episodes, no redaction).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import run as ev  # noqa: E402
from memvault.search import bm25  # noqa: E402
from memvault.search.expand import EXPANSION_WEIGHT, Expansion  # noqa: E402
from memvault.search.index import CARD_FIELDS, Index  # noqa: E402
from memvault.search.query import analyse  # noqa: E402
from memvault.search.pipeline import card_hits  # noqa: E402
from memvault.search.service import options_from  # noqa: E402


def feedback(idx, q, hits, terms: int, weight: float, docs: int = 3):
    """The `terms` words found in at least two of the `docs` best hits, by count x IDF."""
    top = sorted((h for h in hits if h.rowid is not None), key=lambda h: -h.score)[:docs]
    if len(top) < 2:
        return None
    rows = idx.card_rows([h.rowid for h in top])
    counts: Counter = Counter()
    for row in rows.values():
        counts.update({t for i, _f in enumerate(CARD_FIELDS) for t in row["tok"][i].split()} - q.tokens)
    shared = [t for t, c in counts.items() if c >= 2 and t not in q.idfs]
    if not shared:
        return None
    n_docs = idx.card_count()
    df = idx.doc_freq(shared)
    idf = {t: bm25.idf(df.get(t, 0), n_docs) for t in shared}
    best = sorted(shared, key=lambda t: (-counts[t] * idf[t], t))[:terms]
    return Expansion(("\x00feedback",), 0.0, {t: idf[t] * weight / EXPANSION_WEIGHT for t in best})


def engine(root: Path, terms: int, weight: float):
    opts = options_from({})

    def ask(query: str) -> list[str]:
        with Index(root, opts.mode, opts.stat_all_below) as idx:
            idx.refresh()
            q = analyse(query, idx, opts.mode)
            hits = card_hits(idx, q, opts)
            extra = feedback(idx, q, hits, terms, weight) if terms and hits else None
            if extra is not None:
                hits = card_hits(idx, q._replace(expansions=(*q.expansions, extra)), opts)
        hits.sort(key=lambda h: (-round(h.score, 6), tuple(-ord(c) for c in h.created), h.id))
        return [h.id for h in hits[: opts.limit]]

    return ask


def line(rows: list[dict]) -> str:
    out = ["old " + ev.fmt(ev.summarise([r for r in rows if r["type"] not in ev.HARD_TYPES]))]
    for parity, name in ((0, "even"), (1, "odd")):
        half = [r for r in rows if r["type"] in ev.HARD_TYPES and int(r["id"][1:]) % 2 == parity]
        out.append(name + " " + " ".join(
            f"{t}: " + ev.fmt(ev.summarise([r for r in half if r["type"] == t])) for t in ev.HARD_TYPES))
    return "\n  ".join(out)


def main(argv: list[str]) -> int:
    specs = argv or ["0,0.3", "3,0.3", "5,0.3", "5,0.15", "8,0.3", "5,0.5"]
    questions = ev.load_questions(HERE / "questions.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(HERE / "fixture", root)
        for spec in specs:
            terms, weight = spec.split(",")
            rows = ev.measure(engine(root, int(terms), float(weight)), questions)["rows"]
            print(f"feedback terms {terms} weight {weight}:\n  {line(rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
