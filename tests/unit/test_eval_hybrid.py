"""eval/hybrid.py's admit gate per query language: the language rule and the gate it picks."""

import json
from pathlib import Path

import pytest
from scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hy():
    return load_script("eval_hybrid", Path("eval/hybrid.py"))


@pytest.mark.parametrize("query, lang", [
    ("ZFS pool 出了什么问题", "cjk"),  # 7 CJK characters of 9 units
    ("Proxmox 的 root 密码多久换一次", "cjk"),
    ("Kubernetes 集群", "cjk"),  # a long Latin word is one unit
    ("東京の天気", "cjk"), ("한국어 질문", "cjk"),
    ("what does 缓存 mean", "other"),  # 2 of 5
    ("How did Caroline feel about the race?", "other"), ("café au lait", "other"),
    ("", "other"), ("？！ ...", "other"),
])
def test_query_language_counts_cjk_characters_against_latin_words(hy, query, lang):
    assert hy.query_language(query) == lang


def test_query_language_agrees_with_every_labelled_eval_question(hy):
    lines = (ROOT / "eval" / "questions.jsonl").read_text("utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    labelled = [q for q in questions if q.get("lang") in ("en", "zh")]
    assert len(labelled) >= 180
    expected = {q["id"]: "cjk" if q["lang"] == "zh" else "other" for q in labelled}
    wrong = [q["id"] for q in labelled if hy.query_language(q["query"]) != expected[q["id"]]]
    assert wrong == []


def test_admit_lang_gates_a_dense_only_card_by_the_question_language(hy):
    # the same dense side for a Chinese and an English question: "p" is found by meaning only at 0.855
    lexical, meaning = [("a", 5.0)], {"a": 0.80, "p": 0.855, "x": 0.70, "y": 0.71, "z": 0.72}
    setting = dict(rule="z", weight=0.7, top=20, admit_z=-99.0, admit_lang={"cjk": 0.86, "other": 0.85})
    zh = hy.Case({"query": "蓝牙耳机降噪推荐", "expect": []}, lexical, meaning, 0)
    en = hy.Case({"question": "What did Caroline research?"}, lexical, meaning, 0)
    assert hy.fused_all(zh, setting) == ["a"]
    assert hy.fused_all(en, setting) == ["a", "p"]
    assert hy.fused_all(zh, None) == ["a"]
    # the setting itself is not changed by resolving it
    assert setting["admit_lang"] == {"cjk": 0.86, "other": 0.85} and "admit" not in setting
