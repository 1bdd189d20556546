"""End-to-end memory eval on LoCoMo: `python eval/e2e.py --data ../shared/data/locomo-dev`.

What a user gets, measured from the log in to the answer's evidence. Per conversation a fresh vault is made
with the real CLI (`memvault init`, `memvault capture`, `memvault distill --json`, each its own process);
then every question is asked through the CLI's own code (Typer's CliRunner in this process: ~1000
questions x 4 commands would otherwise pay ~4000 process start-ups):

| engine   | command                                        |
|----------|------------------------------------------------|
| cards    | `search Q --json --limit 10` over cards only (`--cards-only` where the CLI has it) |
| search   | `search Q --json --limit 10` as shipped (what a person gets by default) |
| episodes | `search Q --episodes --json --limit 10` (cards and raw turns)            |
| context  | `context Q --budget 2000 --json` (the memory pack)                       |

Evidence is found through provenance only: a card hit counts the input turns of its source episodes (card ->
`source.episodes` -> the episode's `source.refs`, LoCoMo's dia_ids); an episode hit counts its own refs.
Per question: any@k (some evidence turn is cited by the top k hits), all@10 (every evidence turn is), and for
context the pack's any and the share of the evidence it cites. Per vault: coverage (the share of the
questions' evidence turns that some card cites at all) and cards per turn.

Conversations 0-2 are the tuning half, 3-4 the held-out half (issue 20): tune on the first, report the second,
and say which. The data (CC BY-NC 4.0) stays where it is; nothing of it is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

KS = (1, 5, 10)
TUNE, HELD_OUT = (0, 1, 2), (3, 4)
ENGINES = ("cards", "search", "episodes", "context")
NOW = "2026-12-01T00:00:00Z"  # the clock of every command: after every conversation of the benchmark


def cli(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """One real `memvault` process."""
    cmd = [sys.executable, "-m", "memvault", "--vault", str(root), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)


def build_vault(tmp: Path, data: Path, conv: int, env: dict) -> tuple[Path, dict]:
    """init, capture and distill conversation `conv` in a fresh vault, each through the real CLI."""
    root = tmp / f"conv-{conv}"
    for args in (("init", str(root)),
                 ("capture", "--format", "jsonl", "--project", f"locomo-{conv}",
                  str(data / "chats" / f"locomo-{conv}.jsonl"))):
        done = cli(root, *args, env=env)
        if done.returncode != 0:
            raise SystemExit(f"memvault {args[0]} failed ({done.returncode}): {done.stderr.strip()}")
    started = time.perf_counter()
    done = cli(root, "distill", "--json", env=env)
    seconds = time.perf_counter() - started
    if done.returncode not in (0,):
        raise SystemExit(f"memvault distill failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    summary = json.loads(done.stdout)
    summary["seconds"] = seconds
    return root, summary


def episode_refs(root: Path) -> dict[str, tuple[str, ...]]:
    """episode id -> the input message ids (dia_ids) it was captured from."""
    out: dict[str, tuple[str, ...]] = {}
    for path in sorted((root / "episodes").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("type") or not rec.get("id"):
                continue
            src = rec.get("source") or {}
            out[rec["id"]] = tuple(src.get("refs") or ([src["ref"]] if src.get("ref") else []))
    return out


def card_sources(root: Path) -> dict[str, dict]:
    """card id -> {kind, status, episodes}, read with memvault's own card codec."""
    from memvault.vault.store import Vault

    vault = Vault.open(root, {})
    return {card.id: {"kind": card.kind, "status": card.status, "episodes": card.episodes}
            for card in vault.cards()}


class Asker:
    """The CLI's commands run in this process through Typer's CliRunner (the same code as the console script)."""

    def __init__(self, root: Path, limit: int, budget: int, strict: bool = False):
        from typer.testing import CliRunner

        from memvault.cli.app import app

        self.app, self.runner, self.root = app, CliRunner(), root
        self.limit, self.budget, self.strict = limit, budget, strict
        helptext = self.run("search", "--help").output
        self.cards_only = ["--cards-only"] if "--cards-only" in helptext else []

    def run(self, *args: str):
        return self.runner.invoke(self.app, ["--vault", str(self.root), *args], catch_exceptions=False)

    def ids(self, engine: str, question: str) -> list[str]:
        """The ranked ids an engine gives for the question ([] when it finds nothing: exit 1)."""
        lim = ["--limit", str(self.limit), "--json"]
        args = {"cards": ["search", question, *lim, *self.cards_only],
                "search": ["search", question, *lim],
                "episodes": ["search", question, "--episodes", *lim],
                "context": ["context", question, "--budget", str(self.budget), "--json"]}[engine]
        done = self.run("--", *args) if question.startswith("-") else self.run(*args)
        if done.exit_code == 1:
            # No answer. As eval/run.py counts recall, what search lists as `closest` (a person sees it under
            # "no match; closest:") still counts, unless --strict (then exit 1 counts as nothing found).
            if self.strict or engine == "context" or not done.stdout.strip():
                return []
            return [h["id"] for h in json.loads(done.stdout).get("closest") or []]
        if done.exit_code != 0:
            raise SystemExit(f"memvault {engine} exit {done.exit_code} on {question!r}: {done.output[-500:]}")
        data = json.loads(done.stdout)
        items = data.get("hits") if engine != "context" else (data.get("entries") or data.get("cards"))
        return [h["id"] for h in items or []]


def cited(ids: list[str], cards: dict, eps: dict) -> list[set[str]]:
    """For each hit id, the input turns it cites through provenance."""
    out = []
    for hid in ids:
        if hid in cards:
            out.append({r for e in cards[hid]["episodes"] for r in eps.get(e, ())})
        else:
            out.append(set(eps.get(hid, ())))
    return out


def score(per_hit: list[set[str]], evidence: set[str]) -> dict[str, float]:
    row = {}
    for k in KS:
        got = set().union(*per_hit[:k]) if per_hit[:k] else set()
        row[f"any@{k}"] = float(bool(got & evidence))
    top = set().union(*per_hit[:10]) if per_hit else set()
    row["all@10"] = float(evidence <= top)
    row["recall@10"] = len(evidence & top) / len(evidence)
    return row


def pack_score(per_hit: list[set[str]], evidence: set[str]) -> dict[str, float]:
    got = set().union(*per_hit) if per_hit else set()
    return {"any": float(bool(got & evidence)), "recall": len(got & evidence) / len(evidence),
            "items": float(len(per_hit))}


def run_conv(tmp: Path, data: Path, conv: int, qs: list[dict], env: dict, args) -> dict:
    root, summary = build_vault(tmp, data, conv, env)
    eps, cards = episode_refs(root), card_sources(root)
    asker = Asker(root, args.limit, args.budget, args.strict)
    evidence_turns = {t for q in qs for t in q["evidence"]}
    card_turns = {r for c in cards.values() if c["status"] != "retracted" for e in c["episodes"]
                  for r in eps.get(e, ())}
    rows: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    packs: list[tuple[str, frozenset]] = []
    for q in qs:
        ev = set(q["evidence"])
        for engine in ENGINES:
            ids = asker.ids(engine, q["question"])
            per_hit = cited(ids, cards, eps)
            rows[engine].append((q["category_name"], pack_score(per_hit, ev) if engine == "context"
                                 else score(per_hit, ev)))
            if engine == "context":
                packs.append((q["qid"], frozenset(ids)))
    kinds: dict[str, int] = defaultdict(int)
    for c in cards.values():
        kinds[c["kind"]] += 1
    distinct_packs = len({p for _q, p in packs})
    return {"conv": conv, "turns": len(eps), "cards": len(cards), "kinds": dict(sorted(kinds.items())),
            "cards_per_turn": len(cards) / max(len(eps), 1),
            "coverage": len(evidence_turns & card_turns) / max(len(evidence_turns), 1),
            "evidence_turns": len(evidence_turns), "covered_turns": len(evidence_turns & card_turns),
            "distill_seconds": round(summary["seconds"], 2), "distill": {k: summary.get(k) for k in
                                                                         ("engine", "cards", "failures")},
            "distinct_packs": distinct_packs, "questions": len(qs), "rows": rows}


def summarise(convs: list[dict]) -> dict:
    out: dict = {"questions": sum(c["questions"] for c in convs), "turns": sum(c["turns"] for c in convs),
                 "n_cards": sum(c["cards"] for c in convs)}
    out["cards_per_turn"] = out["n_cards"] / max(out["turns"], 1)
    ev = sum(c["evidence_turns"] for c in convs)
    out["coverage"] = sum(c["covered_turns"] for c in convs) / max(ev, 1)
    out["distinct_packs"] = sum(c["distinct_packs"] for c in convs)
    for engine in ENGINES:
        by: dict[str, list[dict]] = defaultdict(list)
        for c in convs:
            for cat, row in c["rows"][engine]:
                by[cat].append(row)
                by["all"].append(row)
        out[engine] = {cat: {k: sum(r[k] for r in rs) / len(rs) for k in rs[0]} | {"n": len(rs)}
                       for cat, rs in by.items()}
    return out


def print_table(name: str, s: dict) -> None:
    print(f"\n== {name}: {s['questions']} questions, {s['turns']} episodes, {s['n_cards']} cards "
          f"({s['cards_per_turn']:.3f} an episode), card coverage of evidence turns {s['coverage']:.3f}, "
          f"{s['distinct_packs']} distinct context packs")
    cats = ["all"] + sorted(k for k in s["cards"] if k != "all")
    for engine in ENGINES:
        keys = ["any", "recall", "items"] if engine == "context" else [*(f"any@{k}" for k in KS), "all@10", "recall@10"]
        print(f"  {engine:9s} " + " ".join(f"{k:>9s}" for k in keys) + "      n")
        for cat in cats:
            r = s[engine].get(cat)
            if r:
                print(f"    {cat:11s}" + " ".join(f"{r[k]:9.3f}" for k in keys) + f"  {r['n']:5d}")


def engine_env(args) -> dict | None:
    """The environment of every memvault command of a run (None, said on stderr, when --engine llm lacks its
    endpoint): no stray MEMVAULT_* of the caller, one clock, and the endpoint for --engine llm."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    # One clock for every command, here and in the subprocesses: card ids and run ids derive from it, and ties
    # in a ranking fall to ids, so without it two runs of the same code differ by a question or two.
    env["MEMVAULT_NOW"] = os.environ["MEMVAULT_NOW"] = NOW
    # distill.engine is `auto`: the offline engine unless an endpoint is set below.
    if args.engine == "llm":
        if not args.base_url:
            print("--engine llm needs --base-url", file=sys.stderr)
            return None
        env["MEMVAULT_LLM_BASE_URL"] = args.base_url
        if args.model:
            env["MEMVAULT_LLM_MODEL"] = args.model
        if args.timeout:
            env["MEMVAULT_LLM_TIMEOUT"] = str(args.timeout)
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="prepared LoCoMo folder (chats/, questions.jsonl)")
    ap.add_argument("--convs", default="0,1,2,3,4", help="conversations to run (default all five)")
    ap.add_argument("--limit", type=int, default=10, help="hits a search shows (k of any@k, at most 10 used)")
    ap.add_argument("--budget", type=int, default=2000, help="context --budget")
    ap.add_argument("--engine", choices=("offline", "llm"), default="offline", help="distill engine")
    ap.add_argument("--base-url", help="llm engine: OpenAI-compatible endpoint")
    ap.add_argument("--model", help="llm engine: model name")
    ap.add_argument("--timeout", type=float, help="llm engine: seconds a call may take")
    ap.add_argument("--keep", type=Path, help="build the vaults here and keep them (default: a temp folder)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--strict", action="store_true", help="a search that exits 1 (no answer) counts as nothing found, "
                    "even where it lists what came closest")
    args = ap.parse_args(argv)
    if not (args.data / "questions.jsonl").is_file():
        print(f"{args.data}: no questions.jsonl (expected a prepared LoCoMo folder)", file=sys.stderr)
        return 2
    env = engine_env(args)
    if env is None:
        return 2
    wanted = [int(c) for c in args.convs.split(",") if c.strip()]
    questions = [json.loads(line) for line in (args.data / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory() as tmpname:
        tmp = args.keep or Path(tmpname)
        tmp.mkdir(parents=True, exist_ok=True)
        for conv in wanted:
            qs = [q for q in questions if q["conv"] == conv and q.get("evidence")]
            results.append(run_conv(tmp, args.data, conv, qs, env, args))
            print(f"conv {conv}: {results[-1]['turns']} episodes, {results[-1]['cards']} cards, "
                  f"{len(qs)} questions", file=sys.stderr)
    groups = {"tune (conv 0-2)": [r for r in results if r["conv"] in TUNE],
              "held-out (conv 3-4)": [r for r in results if r["conv"] in HELD_OUT]}
    report = {name: summarise(rs) for name, rs in groups.items() if rs}
    report["per conversation"] = [{k: v for k, v in r.items() if k != "rows"} for r in results]
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(f"LoCoMo end to end, engine {args.engine}: {sum(r['questions'] for r in results)} questions, "
          f"{time.perf_counter() - started:.0f} s")
    for name, s in report.items():
        if name != "per conversation":
            print_table(name, s)
    print("\nper conversation: " + "; ".join(f"conv {r['conv']}: {r['cards']} cards / {r['turns']} episodes, "
                                             f"coverage {r['coverage']:.3f}, distill {r['distill_seconds']} s"
                                             for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
