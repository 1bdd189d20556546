"""Issue 32's multilingual part of the labelled extraction set (eval/distill/conversations_ml.yaml): written and
frozen before the offline engine was tuned for it. The rendered logs and labels are what author.py writes, byte
for byte; each language has enough episodes, both tuning halves, cards of every kind and a nothing-set; the
oracle scores 1.0 through real capture and distill subprocesses, so a key, an evidence or a match rule that
does not hold in these languages fails here."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "eval" / "distill"
LANGS = ("fr", "de", "es", "ja", "ko")

runner = load_script("distill_eval_runner_ml", ROOT / "eval" / "distill.py")
author = load_script("distill_eval_author_ml", SET / "author.py")


def _ml_rows():
    return [r for r in author.build()[1] if r.get("part") == "ml"]


def test_ml_files_and_labels_are_what_author_writes_byte_for_byte():
    rendered, labels = author.build()
    ml_files = {r["file"] for r in labels if r.get("part") == "ml"}
    assert len(ml_files) == 10
    for name in ml_files:
        assert (SET / "inputs" / name).read_bytes() == rendered[name].encode("utf-8"), name
    on_disk = [json.loads(line) for line in (SET / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
    ml = _ml_rows()
    assert on_disk[-len(ml):] == ml  # appended after the frozen parts, which stay as they were
    assert all(r.get("part") != "ml" for r in on_disk[:-len(ml)])


def test_ml_part_has_five_languages_both_halves_every_kind_and_a_nothing_set():
    rows = _ml_rows()
    assert Counter(r["lang"] for r in rows).keys() == set(LANGS)
    for lang in LANGS:
        mine = [r for r in rows if r["lang"] == lang]
        assert len(mine) >= 16, lang
        assert 0.35 <= sum(not r["cards"] for r in mine) / len(mine) <= 0.6, lang
        for half in ("tune", "held"):  # each half of each language has cards and nothing-set episodes
            part = [r for r in mine if r["half"] == half]
            assert any(r["cards"] for r in part) and any(not r["cards"] for r in part), (lang, half)
        assert any(c["supersedes"] for r in mine for c in r["cards"]), lang  # a state change per language
    cards = [c for r in rows for c in r["cards"]]
    assert {c["kind"] for c in cards} == {"decision", "rule", "preference", "fact", "state"}
    assert all(c["kind"] == "state" for c in cards if c["supersedes"])
    assert {r["format"] for r in rows} == {"jsonl", "openai", "claude-code", "codex", "text"}
    assert {r["nothing"] for r in rows if not r["cards"]} >= {
        "question", "hypothetical", "hedge", "negated", "code", "thanks", "chit-chat", "quoted", "greeting"}
    for r in rows:  # a tuning half is a whole file
        assert {x["half"] for x in rows if x["file"] == r["file"]} == {r["half"]}
    # the French project log the acceptance test uses: dense in decisions and instructions
    log = [r for r in rows if r["file"] == "claude-code-projet-fr.jsonl"]
    kinds = Counter(c["kind"] for r in log for c in r["cards"])
    assert kinds["decision"] >= 4 and kinds["rule"] >= 4 and kinds["preference"] >= 2
    # the runner selects the part and its halves
    assert len(runner.load_labels(SET, part="ml")) == len(rows)
    halves = [runner.load_labels(SET, part="ml", half=h) for h in ("tune", "held")]
    assert sorted(r["episode"] for h in halves for r in h) == sorted(r["episode"] for r in rows)
    assert all(runner.half_of(r) == "tune" for r in halves[0])


def test_ml_oracle_scores_one_in_every_language():
    """Real capture of every ml file (each key resolves, each evidence is in the user's stored text) and the
    label-replaying fake model: nothing is lost between labels and cards in any of the five languages."""
    oracle = runner.evaluate(runner.parse_args(["--engine", "llm", "--fake", "oracle", "--part", "ml"]))
    assert oracle["episodes"] == len(_ml_rows())
    for metric in ("precision", "recall", "kind_accuracy", "supersede_accuracy", "supersede_precision"):
        assert oracle[metric] == 1.0, (metric, oracle)
    assert oracle["supersede_pairs"] == 6 and oracle["nothing_false_pct"] == 0.0
    # per language and per tuning half, from the same run
    assert sorted(oracle["by_lang"]) == sorted(LANGS)
    for lang, r in oracle["by_lang"].items():
        assert (r["precision"], r["recall"], r["nothing_false_episodes"]) == (1.0, 1.0, 0), lang
        assert sorted(r["halves"]) == ["held", "tune"], lang
        assert all(h["recall"] == 1.0 for h in r["halves"].values()), lang
        assert sum(h["labelled_cards"] for h in r["halves"].values()) == r["labelled_cards"], lang


def test_per_language_figures_tell_languages_and_halves_apart():
    """A broken model's per-language figures are each language's own: they differ, and each language's halves
    add up to its cards and episodes."""
    broken = runner.evaluate(runner.parse_args(["--engine", "llm", "--fake", "broken", "--part", "ml", "--halves"]))
    by_lang = broken["by_lang"]
    assert sum(r["labelled_cards"] for r in by_lang.values()) == broken["labelled_cards"] == 74
    assert sum(r["matched"] for r in by_lang.values()) == broken["matched"] < 74
    assert len({r["recall"] for r in by_lang.values()}) > 1
    for r in by_lang.values():
        assert sum(h["episodes"] for h in r["halves"].values()) == r["episodes"]
    assert sorted(broken["halves"]) == ["held", "tune"]
    assert broken["halves"]["tune"]["episodes"] + broken["halves"]["held"]["episodes"] == 91
