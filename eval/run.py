"""Search quality on the hand-written fixture vault: `python eval/run.py`.

Copies eval/fixture/ to a temporary folder (the fixture is never modified), asks every question of
eval/questions.jsonl through the same service function `memvault search` calls (search.run_search, in-process),
and prints recall@1, recall@5, MRR and the negative false-positive rate for memvault, a BM25-only baseline and a
grep baseline, overall and per question type.

Options: --mode bigram|unibigram|jieba (Chinese tokenising), --sweep (field-weight and floor grid, used to
choose the constants in memvault/search.py), --show (print the misses), --by-lang, --json, --check (verify the hard
question types against the fixture, below, and exit 1 on any failure).

The hard question types (q94 on) carry rules that `check_questions` verifies with memvault's own tokenizer
(bigram mode, stop words dropped, CJK bigrams made only of function characters ignored):
- paraphrase-hard: no content token shared with any expected card's title, body, tags, entities (with the entity
  pages' names and aliases), project or state subject/field/value;
- negative-hard: at least one content token shared with some non-retracted card (same fields);
- entity-bridge: names an entity of the first expected card by its name or an alias whose tokens the card's title
  and body do not contain, so the card is reached through the entity.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from memvault.search import service as search
from memvault.search import tokenize  # noqa: E402
from memvault.errors import NoMatch  # noqa: E402


def load_questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


HARD_TYPES = ("paraphrase-hard", "negative-hard", "entity-bridge")


def _front_matter(path: Path) -> tuple[dict, str]:
    import yaml

    _, fm, body = path.read_text(encoding="utf-8").split("---\n", 2)
    return yaml.safe_load(fm), body


def content_tokens(text: str) -> set[str]:
    """memvault's card tokens of `text` after stop words, without CJK bigrams of function characters only."""
    return {t for t in tokenize.tokens(text) if not tokenize.is_function_bigram(t)}


def load_fixture(fixture: Path) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """(cards by id, names and aliases by entity name) of a fixture vault."""
    cards = {}
    for p in sorted((fixture / "cards").rglob("*.md")):
        meta, body = _front_matter(p)
        meta["_body"] = body
        cards[meta["id"]] = meta
    names = {}
    for p in sorted((fixture / "entities").glob("*.md")):
        meta, _ = _front_matter(p)
        names[meta["name"]] = [meta["name"], p.stem, *(meta.get("aliases") or [])]
    return cards, names


def card_text(card: dict, names: dict[str, list[str]], full: bool = True) -> str:
    """Title and body; with `full`, also tags, entities with their names and aliases, project and state keys."""
    parts = [card["title"], card["_body"]]
    if full:
        parts += [*card["tags"], str(card["project"] or "")]
        for e in card["entities"]:
            parts += names.get(e, [e])
        if card["kind"] == "state":
            parts += [str(card["subject"]), str(card["field"]), str(card["value"])]
    return "\n".join(parts)


def check_questions(fixture: Path, questions: list[dict]) -> list[str]:
    """Rule violations of the hard question types (module docstring), one line each; [] when all hold."""
    cards, names = load_fixture(fixture)
    live = [c for c in cards.values() if c["status"] != "retracted"]
    errs = []
    for q in questions:
        if q["type"] not in HARD_TYPES:
            continue
        qtok = content_tokens(q["query"])
        if not qtok:
            errs.append(f"{q['id']}: no content token")
            continue
        if q["type"] == "negative-hard":
            if q["expect"]:
                errs.append(f"{q['id']}: a negative expects cards")
            elif not any(qtok & content_tokens(card_text(c, names)) for c in live):
                errs.append(f"{q['id']}: shares no content word with any card")
            continue
        missing = [e for e in q["expect"] if e not in cards or cards[e]["status"] == "retracted"]
        if not q["expect"] or missing:
            errs.append(f"{q['id']}: expect must name live cards ({missing})")
            continue
        if q["type"] == "paraphrase-hard":
            for e in q["expect"]:
                shared = qtok & content_tokens(card_text(cards[e], names))
                if shared:
                    errs.append(f"{q['id']}: shares {sorted(shared)} with {e}")
        else:
            card = cards[q["expect"][0]]
            text = content_tokens(card_text(card, names, full=False))
            query = tokenize.normalize(q["query"])
            bridges = [n for e in card["entities"] for n in names.get(e, [e])
                       if tokenize.normalize(n) in query and not content_tokens(n) & text]
            if not bridges:
                errs.append(f"{q['id']}: names no entity of {card['id']} that its text lacks")
    return errs


def grep_baseline(root: Path):
    """What a person would do with grep -il: every query word (a Chinese query: the whole string) as a
    case-blind substring; cards ranked by how many words they contain, then by path."""
    files = sorted((root / "cards").glob("*/*.md"))
    texts = {p.stem: p.read_text(encoding="utf-8").casefold() for p in files}

    def ask(query: str) -> list[str]:
        words = [w for w in re.split(r"[\s,.?!:;()\"'，。？！：；、（）]+", query.casefold()) if w]
        scored = []
        for cid, text in texts.items():
            n = sum(1 for w in words if w in text)
            if n:
                scored.append((-n, cid))
        return [cid for _, cid in sorted(scored)]

    return ask


def engine(root: Path, **overrides):
    opts = search.options_from({}, **overrides)

    def ask(query: str) -> list[str]:
        try:
            return _Ids(search.run_search(root, query, opts).hits)
        except NoMatch as exc:
            return _Ids(getattr(exc, "result", None).closest if hasattr(exc, "result") else ())

    return ask


class _Ids(list):
    """Hit ids, knowing whether every hit was a weak match (no hit answers the question: the search exits 1,
    with `hits` empty, and lists what came closest apart, each marked weak). A negative question answered only
    with weak hits is not a false positive: the search said it found no answer. Recall counts the closest
    hits' ids too (a person sees them under "no match; closest:"); `strict` below counts `hits` alone."""

    def __init__(self, hits):
        super().__init__(h.id for h in hits)
        self.weak_only = bool(hits) and all(getattr(h, "weak", False) for h in hits)


def measure(ask, questions: list[dict]) -> dict:
    per_type: dict[str, list] = defaultdict(list)
    rows = []
    for q in questions:
        got = ask(q["query"])
        expect = q["expect"]
        if not expect:
            row = {"fp": bool(got) and not getattr(got, "weak_only", False),
                   "weak": bool(got) and getattr(got, "weak_only", False)}
        else:
            rank = next((i + 1 for i, cid in enumerate(got) if cid in expect), None)
            row = {"r1": rank == 1, "r5": rank is not None and rank <= 5, "rr": 1 / rank if rank else 0.0,
                   "rank": rank, "answered": bool(got) and not getattr(got, "weak_only", False)}
        row.update(id=q["id"], type=q["type"], got=got[:5], expect=expect, query=q["query"])
        rows.append(row)
        per_type[q["type"]].append(row)
    sets = {"q01-q93": [r for r in rows if r["type"] not in HARD_TYPES],
            "hard (q94+)": [r for r in rows if r["type"] in HARD_TYPES]}
    return {"all": summarise(rows), "sets": {k: summarise(v) for k, v in sets.items() if v},
            "types": {t: summarise(r) for t, r in sorted(per_type.items())}, "rows": rows}


def summarise(rows: list[dict]) -> dict:
    pos = [r for r in rows if "rr" in r]
    neg = [r for r in rows if "fp" in r]
    out = {"n": len(rows)}
    if pos:
        out.update(r1=sum(r["r1"] for r in pos) / len(pos), r5=sum(r["r5"] for r in pos) / len(pos),
                   mrr=sum(r["rr"] for r in pos) / len(pos), answered=sum(r["answered"] for r in pos) / len(pos))
    if neg:
        out.update(neg_fp=sum(r["fp"] for r in neg) / len(neg), neg_n=len(neg))
    return out


def fmt(s: dict) -> str:
    parts = []
    if "r1" in s:
        parts.append(f"R@1 {s['r1']:.3f}  R@5 {s['r5']:.3f}  MRR {s['mrr']:.3f}  answered {s['answered']:.3f}")
    if "neg_fp" in s:
        parts.append(f"neg FP {s['neg_fp']:.3f} ({round(s['neg_fp'] * s['neg_n'])}/{s['neg_n']})")
    return "  ".join(parts) + f"  (n={s['n']})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixture", type=Path, default=HERE / "fixture")
    ap.add_argument("--questions", type=Path, default=HERE / "questions.jsonl")
    ap.add_argument("--mode", default="bigram", choices=tokenize.MODES)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--show", action="store_true", help="print the questions memvault misses")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check", action="store_true", help="verify the hard question rules and exit")
    ap.add_argument("--by-lang", action="store_true", help="also print memvault's figures per type and language")
    ap.add_argument("--embed-server", action="store_true",
                    help="also measure hybrid search as the product runs it: start `memvault embed-server` (the embed "
                         "extra), configure the fixture copy's embeddings:, `memvault embed`, search with it on")
    ap.add_argument("--half-life", type=float, default=None,
                    help="override search.recency_half_life_days (the recency prior; 0 = off)")
    args = ap.parse_args(argv)
    questions = load_questions(args.questions)
    if args.check:
        errs = check_questions(args.fixture, questions)
        print("\n".join(errs) or f"OK: {sum(q['type'] in HARD_TYPES for q in questions)} hard questions")
        return 1 if errs else 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(args.fixture, root)
        if args.sweep:
            return sweep(root, questions, args.mode)
        started = time.perf_counter()
        prior = {} if args.half_life is None else {"recency_half_life_days": args.half_life}
        results = {
            "memvault": measure(engine(root, mode=args.mode, **prior), questions),
            **({"hybrid": hybrid_measure(root, questions, args.mode, prior)} if args.embed_server else {}),
            "bm25-only": measure(engine(root, mode=args.mode, bm25_only=True, floor=0.0, hops=0), questions),
            "grep": measure(grep_baseline(root), questions),
        }
        elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps({k: {"all": v["all"], "sets": v["sets"], "types": v["types"]} for k, v in results.items()},
                         indent=2))
        return 0
    print(f"eval: {len(questions)} questions, fixture {args.fixture.name}, Chinese mode {args.mode}, "
          f"{elapsed:.1f} s")
    for name, res in results.items():
        print(f"{name:10s} {fmt(res['all'])}")
    print(f"\nper question set ({' | '.join(results)}):")
    for k in results["memvault"]["sets"]:
        print(f"  {k:15s} " + " | ".join(fmt(results[n]["sets"][k]) for n in results))
    print(f"\nper type ({' | '.join(results)}):")
    for t in results["memvault"]["types"]:
        print(f"  {t:15s} " + " | ".join(fmt(results[n]["types"][t]) for n in results))
    if args.by_lang:
        print("\nper type and language (memvault):")
        rows = results["memvault"]["rows"]
        lang = {q["id"]: q["lang"] for q in questions}
        for t in results["memvault"]["types"]:
            for code in ("en", "zh"):
                sub = [r for r in rows if r["type"] == t and lang[r["id"]] == code]
                if sub:
                    print(f"  {t:15s} {code} {fmt(summarise(sub))}")
    if args.show:
        print("\nmisses:")
        for r in results["memvault"]["rows"]:
            if r.get("fp") or ("rank" in r and r["rank"] != 1):
                print(f"  {r['id']} {r['type']:15s} rank={r.get('rank')} fp={r.get('fp')} {r['query']!r}"
                      f" expect={r['expect']} got={r['got']}")
    return 0


def hybrid_measure(root: Path, questions: list[dict], mode: str, prior: dict) -> dict:
    """The questions through the product's hybrid search: embed-server as a child process, the vault's
    `embeddings:` section pointed at it (query/passage sides sent as input_type), `memvault embed`, run_search."""
    import os
    import subprocess

    from memvault.vault.store import Vault
    from memvault.views.embed import embed_vault

    proc = subprocess.Popen([sys.executable, "-m", "memvault", "embed-server", "--json"], stdout=subprocess.PIPE,
                            text=True)
    try:
        info = json.loads(proc.stdout.readline())
        path = root / "memvault.yaml"
        # This measures what the model finds, not how fast: on a loaded machine a question's vector may take
        # seconds, and a search that ran out of `timeout` would fall back to words and count as a miss.
        section = {"base_url": info["base_url"], "model": info["model"], "dimensions": info["dimensions"],
                   "input_type": True, "timeout": 600.0, "batch_timeout": 600.0}
        _set_section(path, "embeddings", section)
        embed_vault(Vault.open(root, os.environ), os.environ)
        opts = search.options_from({}, mode=mode, embeddings=Vault.open(root, os.environ).config.section("embeddings"),
                                   **prior)

        def ask(query: str) -> list[str]:
            try:
                return [h.id for h in search.run_search(root, query, opts).hits]
            except NoMatch:
                return []

        return measure(ask, questions)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _set_section(path: Path, name: str, values: dict) -> None:
    """Set keys of a top-level section of memvault.yaml (two-space keys), adding the section when missing."""
    import re

    text = path.read_text(encoding="utf-8")
    if f"\n{name}:\n" not in text:
        text = text.rstrip("\n") + f"\n{name}:\n"
    head, sec = text.split(f"\n{name}:\n", 1)
    for key, value in values.items():
        sec, n = re.subn(rf"(?m)^  {key}: .*$", f"  {key}: {json.dumps(value)}", sec, count=1)
        if not n:
            sec = f"  {key}: {json.dumps(value)}\n" + sec
    path.write_text(head + f"\n{name}:\n" + sec, encoding="utf-8")


def sweep(root: Path, questions: list[dict], mode: str) -> int:
    """Field weights and relevance floor: print each setting's figures (used to choose the constants)."""
    grid = [
        {"title": 1.0, "entities": 1.0, "body": 1.0, "tags": 1.0},
        {"title": 2.0, "entities": 1.5, "body": 1.0, "tags": 1.0},
        {"title": 3.0, "entities": 2.0, "body": 1.0, "tags": 1.5},
        {"title": 4.0, "entities": 2.0, "body": 1.0, "tags": 1.5},
        {"title": 4.0, "entities": 3.0, "body": 1.0, "tags": 1.5},
        {"title": 5.0, "entities": 3.0, "body": 1.0, "tags": 1.5},
        {"title": 3.0, "entities": 3.0, "body": 1.0, "tags": 1.5},
        {"title": 2.0, "entities": 1.0, "body": 1.5, "tags": 1.0},
    ]
    original = dict(search.CARD_WEIGHTS)
    for weights in grid:
        search.CARD_WEIGHTS.clear()
        search.CARD_WEIGHTS.update(weights)
        res = measure(engine(root, mode=mode), questions)
        print(f"weights {weights}: {fmt(res['all'])}")
    search.CARD_WEIGHTS.clear()
    search.CARD_WEIGHTS.update(original)
    for floor in (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4):
        res = measure(engine(root, mode=mode, floor=floor), questions)
        print(f"floor {floor}: {fmt(res['all'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
