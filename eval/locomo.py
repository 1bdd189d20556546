"""LoCoMo retrieval benchmark: `python eval/locomo.py --data ../shared/data/locomo-dev`.

The data (CC BY-NC 4.0) stays where it is: nothing from it is copied into the repository. For each conversation
a fresh vault is made in a temporary folder, the chat is captured with memvault's capture service, and every
question is asked with one search through the same service function `memvault search --episodes --json
--limit 50` calls (search.run_search, in-process: ~1000 questions would pay ~1000 process start-ups otherwise).

Metric (the data folder's README, LoCoMo paper Table 3): per question recall@k = |evidence ∩ top-k turn ids| /
|evidence|, averaged; MRR = 1 / rank of the first evidence turn. An episode hit covers a user turn and its reply
(its source refs, in conversation order) and uses as many of the k slots as turns it covers. Session level:
"D4:2" counts as "D4"; the ranking is the order in which sessions first appear.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from memvault.search import service as search  # noqa: E402
from memvault.capture.service import capture  # noqa: E402
from memvault.errors import NoMatch  # noqa: E402
from memvault.vault.store import Vault  # noqa: E402

KS = (1, 5, 10)


def captured(tmp: Path, data: Path, conv: int) -> Path:
    """A fresh vault under `tmp` holding conversation `conv`'s chat, captured as `memvault capture` does."""
    root = tmp / f"conv-{conv}"
    shutil.copytree(HERE.parent / "vault-template", root)
    vault = Vault.open(root, {})
    chat = data / "chats" / f"locomo-{conv}.jsonl"
    with open(chat, "rb") as fh:
        capture(vault, [(chat.name, fh)], fmt="jsonl")
    return root


def turn_ranking(hits) -> list[str]:
    seen: dict[str, None] = {}
    for hit in hits:
        for ref in hit.refs:
            seen.setdefault(ref, None)
    return list(seen)


def session_of(turn: str) -> str:
    return turn.split(":", 1)[0]


def score(ranking: list[str], evidence: list[str]) -> dict[str, float]:
    ev = set(evidence)
    out = {f"r{k}": len(ev & set(ranking[:k])) / len(ev) for k in KS}
    rank = next((i + 1 for i, t in enumerate(ranking) if t in ev), None)
    out["mrr"] = 1.0 / rank if rank else 0.0
    return out


def run(data: Path, limit: int, overrides: dict) -> tuple[dict, dict, int, float]:
    questions = [json.loads(line) for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    by_conv: dict[int, list[dict]] = defaultdict(list)
    for q in questions:
        by_conv[q["conv"]].append(q)
    turn_rows: dict[str, list[dict]] = defaultdict(list)
    sess_rows: dict[str, list[dict]] = defaultdict(list)
    opts = search.options_from({}, episodes=True, limit=limit, **overrides)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for conv, qs in sorted(by_conv.items()):
            root = captured(Path(tmp), data, conv)
            for q in qs:
                if not q.get("evidence"):
                    continue
                try:
                    hits = search.run_search(root, q["question"], opts).hits
                except NoMatch:
                    hits = ()
                turns = turn_ranking(hits)
                sessions = list(dict.fromkeys(session_of(t) for t in turns))
                ev_sessions = list(dict.fromkeys(session_of(t) for t in q["evidence"]))
                for name in (q["category_name"], "all"):
                    turn_rows[name].append(score(turns, q["evidence"]))
                    sess_rows[name].append(score(sessions, ev_sessions))
    elapsed = time.perf_counter() - started
    return _mean(turn_rows), _mean(sess_rows), len(turn_rows["all"]), elapsed


def _mean(rows: dict[str, list[dict]]) -> dict[str, dict[str, float]]:
    return {name: {key: sum(r[key] for r in rs) / len(rs) for key in rs[0]} | {"n": len(rs)}
            for name, rs in rows.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="prepared LoCoMo folder (chats/, questions.jsonl)")
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--episode-floor", type=float, default=None, help="override search.episode_floor")
    ap.add_argument("--half-life", type=float, default=None,
                    help="override search.recency_half_life_days (the recency prior; 0 = off)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not (args.data / "questions.jsonl").is_file():
        print(f"{args.data}: no questions.jsonl (expected a prepared LoCoMo folder)", file=sys.stderr)
        return 2
    overrides = {} if args.episode_floor is None else {"episode_floor": args.episode_floor}
    if args.half_life is not None:
        overrides["recency_half_life_days"] = args.half_life
    turn, sess, n, elapsed = run(args.data, args.limit, overrides)
    if args.json:
        print(json.dumps({"turn": turn, "session": sess, "questions": n}, indent=2))
        return 0
    os.environ.pop("_", None)
    print(f"LoCoMo {args.data.name}: {n} questions, one search --episodes --limit {args.limit} each, "
          f"{elapsed:.1f} s")
    order = ["all"] + sorted(k for k in turn if k != "all")
    for level, table in (("turn", turn), ("session", sess)):
        print(f"\n{level} level   {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}   n")
        for name in order:
            r = table[name]
            print(f"  {name:12s} {r['r1']:6.3f} {r['r5']:6.3f} {r['r10']:6.3f} {r['mrr']:6.3f}   {r['n']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
