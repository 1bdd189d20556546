"""Gold-fact eval of distilled cards on LoCoMo: `python eval/facts.py --data ../shared/data/locomo-dev`.

What the cards themselves hold, apart from search (which mixes raw turns in and so looks good even when the
cards are poor). LoCoMo ships, per session and speaker, "observations": the facts a reader should keep, each
with the turn(s) that say it. Per conversation a fresh vault is made with the real CLI (`memvault init`,
`capture`, `distill --json`, each its own process, as eval/e2e.py does) and every card is held against them.

Matching (the data folder's README): a card *holds* a gold fact when
  1. it cites one of the fact's evidence turns (card -> `source.episodes` -> the episode's `source.refs`), and
  2. its words (title and body) carry at least half of the fact's content words.
Content words: lower-cased `[a-z0-9]+` runs, minus English stop words (STOP below) and the conversation's two
speakers' first names, each reduced by the Snowball English stemmer ("stories" = "story", "inspiring" =
"inspired"). Retracted cards do not count; superseded ones do (they are still memory, history).

Per conversation and per half: recall (gold facts held by some card), precision (cards that hold some gold
fact), F1, cards per gold fact, cards per turn. Beside them the *every-turn baseline*: one card per input turn,
its text the turn's words, citing that turn alone. And two checks that a good figure is not bought by copying:
the median card length in words (a gold fact is ~12-15), and the share of cards whose text is a turn copied
whole (`copied`: the card's words are the cited turn's words, in order).

Conversations 0-2 are the tuning half, 3-4 the held-out half: tune on the first, report the second once, and
say which. `--sessions 1-3` keeps only those sessions of each conversation (a slice for a slow local model).
`--engine llm --base-url URL` distils through an OpenAI-compatible endpoint instead of the offline engine.
`--show N` prints N cards drawn at random per conversation (seeded), as a person skimming them would see them,
and whether each holds a gold fact. The data (CC BY-NC 4.0) stays where it is; nothing of it is written into
the repository.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from e2e import build_vault, engine_env, episode_refs  # noqa: E402

TUNE, HELD_OUT = (0, 1, 2), (3, 4)
WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("""
a about above after again against all also am an and any are aren as at be because been before being below
between both but by can could couldn did didn do does doesn doing don down during each even ever every few for
from further get gets got had hadn has hasn have haven having he her here hers herself him himself his how i if
in into is isn it its itself just let ll me more most much my myself no nor not now of off on once only or other
our ours ourselves out over own re really s same she should shouldn so some such t than that the their theirs
them themselves then there these they this those through to too under until up very was wasn we were weren
what when where which while who whom why will with won would wouldn you your yours yourself yourselves ve d m
o y one thing things lot also still well
""".split())


def stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


class Words:
    """Content words of a text, stemmed, with the conversation's speaker names left out."""

    def __init__(self, names: set[str]):
        self.names = {n.lower() for n in names}
        self.stem = stemmer().stemWord
        self.cache: dict[str, str] = {}

    def __call__(self, text: str) -> list[str]:
        out = []
        for w in WORD.findall(text.lower()):
            if w in STOP or w in self.names:
                continue
            s = self.cache.get(w)
            if s is None:
                s = self.cache[w] = self.stem(w)
            out.append(s)
        return out


def holds(fact: set[str], card: set[str]) -> bool:
    return bool(fact) and 2 * len(fact & card) >= len(fact)


def score(cards: list[dict], facts: list[dict], words: Words) -> dict:
    """cards: {"text", "turns"}; facts: observations. Who holds what, and the figures."""
    fact_words = [set(words(f["text"])) for f in facts]
    by_turn: dict[str, list[int]] = {}
    for i, f in enumerate(facts):
        for t in f["evidence"]:
            by_turn.setdefault(t, []).append(i)
    held = [False] * len(facts)
    holding = 0
    for c in cards:
        cw = set(words(c["text"]))
        hit = False
        for i in {i for t in c["turns"] for i in by_turn.get(t, ())}:
            if holds(fact_words[i], cw):
                held[i] = hit = True
        holding += hit
        c["holds"] = hit
    n_facts, n_cards = len(facts), len(cards)
    recall = sum(held) / n_facts if n_facts else 0.0
    precision = holding / n_cards if n_cards else 0.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return {"facts": n_facts, "cards": n_cards, "held": sum(held), "holding": holding,
            "recall": recall, "precision": precision, "f1": f1,
            "cards_per_fact": n_cards / n_facts if n_facts else 0.0}


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def in_sessions(session: int, sessions: tuple[int, int] | None) -> bool:
    return sessions is None or sessions[0] <= session <= sessions[1]


def vault_cards(root: Path, title_only: bool = False) -> list[dict]:
    """The vault's cards as {"id", "kind", "text", "turns"}, read with memvault's own codec; with `title_only` a
    card's text is its title alone (a check that the bodies, which keep the speaker's own sentences, do not carry
    the score)."""
    from memvault.vault.store import Vault

    eps = episode_refs(root)
    out = []
    for card in Vault.open(root, {}).cards():
        if card.status == "retracted":
            continue
        turns = {r for e in card.episodes for r in eps.get(e, ())}
        out.append({"id": card.id, "kind": card.kind, "status": card.status, "title": card.title,
                    "text": card.title if title_only else f"{card.title}\n{card.body}", "turns": turns})
    return out


def copied(card: dict, turn_text: dict[str, str], words: Words) -> bool:
    """The card's words are one cited turn's words, whole and in order (a sentence copied, not a memory)."""
    cw = [w for w in words(card["title"])]
    if len(cw) < 3:
        return False
    return any(words(turn_text.get(t, "")) == cw for t in card["turns"])


def run_conv(tmp: Path, data: Path, conv: int, args, env: dict) -> dict:
    chat = load_jsonl(data / "chats" / f"locomo-{conv}.jsonl")
    chat = [t for t in chat if in_sessions(int(t["session"]), args.sessions)]
    sliced = data
    if args.sessions:
        sliced = tmp / f"data-{conv}"
        (sliced / "chats").mkdir(parents=True, exist_ok=True)
        (sliced / "chats" / f"locomo-{conv}.jsonl").write_text(
            "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in chat), encoding="utf-8")
    facts = [o for o in load_jsonl(data / "observations.jsonl")
             if o["conv"] == conv and in_sessions(int(o["session"]), args.sessions)]
    names = {t["speaker"].split()[0] for t in chat}
    words = Words(names)
    root, summary = build_vault(tmp, sliced, conv, env)
    cards = vault_cards(root, args.title_only)
    ours = score(cards, facts, words)
    baseline = score([{"text": t["content"], "turns": {t["id"]}} for t in chat], facts, words)
    turn_text = {t["id"]: f"{t['speaker']}: {t['content']}" for t in chat}
    lengths = [len(WORD.findall(c["text"].lower())) for c in cards]
    ours.update(turns=len(chat), cards_per_turn=len(cards) / max(len(chat), 1),
                median_words=statistics.median(lengths) if lengths else 0,
                copied=sum(copied(c, turn_text, words) for c in cards) / max(len(cards), 1),
                kinds={k: sum(c["kind"] == k for c in cards) for k in sorted({c["kind"] for c in cards})},
                distill_seconds=round(summary["seconds"], 2),
                distill={k: summary.get(k) for k in ("engine", "cards", "failures", "yield", "calls", "prompt_tokens",
                                                     "completion_tokens", "suspect", "repairs") if k in summary})
    out = {"conv": conv, "cards": ours, "every_turn": baseline}
    if args.show:
        rng = random.Random(f"facts-{conv}")
        out["sample"] = [{"kind": c["kind"], "title": c["title"], "holds": c["holds"]}
                         for c in rng.sample(cards, min(args.show, len(cards)))]
    return out


def pooled(rows: list[dict], key: str) -> dict:
    n_f = sum(r[key]["facts"] for r in rows)
    n_c = sum(r[key]["cards"] for r in rows)
    recall = sum(r[key]["held"] for r in rows) / n_f if n_f else 0.0
    precision = sum(r[key]["holding"] for r in rows) / n_c if n_c else 0.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return {"facts": n_f, "cards": n_c, "recall": recall, "precision": precision, "f1": f1,
            "cards_per_fact": n_c / n_f if n_f else 0.0}


def line(name: str, s: dict) -> str:
    return (f"  {name:12s} recall {s['recall']:.3f}  precision {s['precision']:.3f}  F1 {s['f1']:.3f}  "
            f"cards/fact {s['cards_per_fact']:.2f}  ({s['cards']} cards, {s['facts']} facts)")


def parse_sessions(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="prepared LoCoMo folder (chats/, observations.jsonl)")
    ap.add_argument("--convs", default="0,1,2,3,4", help="conversations to run (default all five)")
    ap.add_argument("--sessions", type=parse_sessions, help="only these sessions, e.g. 1-3")
    ap.add_argument("--engine", choices=("offline", "llm"), default="offline", help="distill engine")
    ap.add_argument("--base-url", help="llm engine: OpenAI-compatible endpoint")
    ap.add_argument("--model", help="llm engine: model name")
    ap.add_argument("--timeout", type=float, help="llm engine: seconds a call may take")
    ap.add_argument("--show", type=int, default=0, help="print N cards drawn at random per conversation")
    ap.add_argument("--keep", type=Path, help="build the vaults here and keep them (default: a temp folder)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--title-only", action="store_true",
                    help="match a card's title only, not its body (an anti-gaming check; the metric is title+body)")
    args = ap.parse_args(argv)
    if not (args.data / "observations.jsonl").is_file():
        print(f"{args.data}: no observations.jsonl (expected a prepared LoCoMo folder)", file=sys.stderr)
        return 2
    env = engine_env(args)
    if env is None:
        return 2
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmpname:
        tmp = args.keep or Path(tmpname)
        tmp.mkdir(parents=True, exist_ok=True)
        for conv in (int(c) for c in args.convs.split(",") if c.strip()):
            rows.append(run_conv(tmp, args.data, conv, args, env))
            print(f"conv {conv}: {rows[-1]['cards']['cards']} cards, {rows[-1]['cards']['facts']} gold facts",
                  file=sys.stderr)
    groups = {"tune (conv 0-2)": [r for r in rows if r["conv"] in TUNE],
              "held-out (conv 3-4)": [r for r in rows if r["conv"] in HELD_OUT]}
    report = {"engine": args.engine, "sessions": args.sessions,
              "halves": {name: {"cards": pooled(rs, "cards"), "every_turn": pooled(rs, "every_turn")}
                         for name, rs in groups.items() if rs},
              "per_conversation": rows}
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False, default=sorted))
        return 0
    print(f"Gold facts held by cards, engine {args.engine}"
          + (f", sessions {args.sessions[0]}-{args.sessions[1]}" if args.sessions else "")
          + f" ({time.perf_counter() - started:.0f} s)")
    for name, s in report["halves"].items():
        print(f"\n== {name}")
        print(line("cards", s["cards"]))
        print(line("every turn", s["every_turn"]))
    print("\nper conversation:")
    for r in rows:
        c = r["cards"]
        print(f"  conv {r['conv']}: " + line("", c).strip())
        print(f"    every turn: recall {r['every_turn']['recall']:.3f} precision {r['every_turn']['precision']:.3f}"
              f" F1 {r['every_turn']['f1']:.3f}; cards/turn {c['cards_per_turn']:.3f}, median words"
              f" {c['median_words']}, copied {c['copied']:.3f}, distill {c['distill_seconds']} s; kinds {c['kinds']}")
        for s in r.get("sample", ()):
            print(f"      {'+' if s['holds'] else ' '} [{s['kind']}] {s['title']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
