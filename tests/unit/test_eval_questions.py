"""The hard eval questions (eval/questions.jsonl, q94 on) obey their rules, checked with memvault's tokenizer."""

import json
from pathlib import Path

import pytest
from scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run():
    return load_script("eval_run", Path("eval/run.py"))


def _questions(run):
    return run.load_questions(ROOT / "eval" / "questions.jsonl")


def test_frozen_hard_questions_pass_their_checks(run):
    questions = _questions(run)
    assert run.check_questions(ROOT / "eval" / "fixture", questions) == []
    hard = [q for q in questions if q["type"] in run.HARD_TYPES]
    for kind in ("paraphrase-hard", "negative-hard"):
        rows = [q for q in hard if q["type"] == kind]
        assert len(rows) >= 36
        assert sum(q["lang"] == "zh" for q in rows) * 2 >= len(rows)
    bridges = sum(q["type"] in ("entity", "entity-bridge") for q in questions)
    assert bridges >= 20


def _q(qid, query, expect, kind):
    return {"id": qid, "query": query, "expect": expect, "type": kind, "lang": "en", "note": ""}


def test_checker_rejects_what_breaks_the_rules(run):
    fixture = ROOT / "eval" / "fixture"
    bad = [
        # shares "database" (title) / "postgres" (entity) with the Postgres move card
        _q("x1", "which database did we pick", ["c-20251209-2634"], "paraphrase-hard"),
        _q("x2", "which pg did we pick", ["c-20251209-2634"], "paraphrase-hard"),  # an alias of its entity
        _q("x3", "网店的上线时间", ["c-20251001-afd8"], "paraphrase-hard"),  # another language shares no token: passes
        _q("x4", "奶茶店开业", [], "negative-hard"),  # no word of any card
        _q("x5", "restic restore drill", ["c-20260225-0aed"], "entity-bridge"),  # restic is in the body
        _q("x6", "zpool import after the power cut", ["c-20260208-686e"], "entity-bridge"),  # zpool is in the body
    ]
    errs = run.check_questions(fixture, bad)
    flagged = {e.split(":")[0] for e in errs}
    assert flagged == {"x1", "x2", "x4", "x5", "x6"}, errs
    assert any("databas" in e for e in errs if e.startswith("x1"))
    good = [_q("y1", "postgres disk incident", ["c-20260217-ef7c"], "entity-bridge"),
            _q("y2", "奶茶店的 Redis 密码", [], "negative-hard")]
    assert run.check_questions(fixture, good) == []


def test_chinese_function_bigrams_are_not_content(run):
    assert run.content_tokens("我们的哪个") == set()
    assert "数据" in run.content_tokens("哪个数据库")


def test_questions_file_is_one_json_object_per_line():
    lines = (ROOT / "eval" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert ids == [f"q{i:02d}" for i in range(1, len(ids) + 1)]



def test_runner_reports_each_hard_category_and_both_sets():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "eval" / "run.py"), "--json"], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    res = json.loads(out)
    for engine in ("memvault", "bm25-only", "grep"):
        types = res[engine]["types"]
        for kind in ("paraphrase-hard", "entity-bridge"):
            assert {"r1", "r5", "mrr"} <= set(types[kind])
        assert types["negative-hard"]["neg_n"] == 36
        assert res[engine]["sets"]["q01-q93"]["n"] == 93
        assert res[engine]["sets"]["hard (q94+)"]["n"] == 94
