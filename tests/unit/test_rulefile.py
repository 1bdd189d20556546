"""Reading agents' instruction and memory files into statements (memvault.distill.rulefile): hand-written
files in the shapes Claude Code (CLAUDE.md, MEMORY.md), AGENTS.md, Cursor (.cursorrules, .mdc rules with front
matter) document, English and Chinese."""

from __future__ import annotations

from pathlib import Path

from memvault.distill.rulefile import classify, read_statements, text_digest

RULES = Path(__file__).resolve().parents[1] / "data" / "rules"


def _said(name: str) -> list[tuple[int, str, str]]:
    return [(st.line, st.kind, st.text) for st in read_statements((RULES / name).read_text(encoding="utf-8"))]


def test_claude_md_items_sentences_labels_and_what_is_skipped():
    got = _said("CLAUDE.md")
    assert got == [
        (3, "rule", "This file guides agents working in this repository."),
        (3, "rule", "Use pnpm, never npm."),
        (3, "rule", "Run `pnpm test` before every push."),
        (9, "preference", "Prefer named exports over default exports."),
        (10, "rule", "Never commit `.env` files; the staging key sk-proj-Q7fL2mN9xR4tV8wY1zB3cD5eG6hJ0kP2sU4 "
                     "lives in 1Password, not here."),
        (13, "rule", "Testing: use vitest, not jest"),
        (14, "rule", "Testing: keep each test file beside the module it tests"),
    ]
    sections = {st.section for st in read_statements((RULES / "CLAUDE.md").read_text(encoding="utf-8"))}
    assert sections == {"Harbor API", "Style"}


def test_chinese_agents_md():
    assert _said("AGENTS.zh.md") == [
        (4, "rule", "回答用中文，代码注释用英文。"),
        (5, "preference", "我喜欢简短的提交说明，一行说清楚改了什么。"),
        (8, "rule", "不要在没有询问的情况下添加新的依赖。"),
        (9, "rule", "数据库迁移必须可以回滚。"),
    ]


def test_mdc_front_matter_memory_links_and_cursorrules_prose():
    assert [t for _n, _k, t in _said("typescript.mdc")] == [
        "Use `type` for unions and `interface` for object shapes.", "Avoid `any`; reach for `unknown` and narrow it."]
    assert _said("MEMORY.md") == [
        (3, "preference", "Prefers tabs in Go — the user wants tabs, not spaces, in Go files"),
        (4, "rule", "Deploy window — deploys happen Tuesday to Thursday only"),
    ]
    assert _said(".cursorrules") == [
        (1, "rule", "You are working on a Django 5 project."),
        (1, "rule", "Always write type hints."),
        (1, "preference", "Prefer class-based views over function views."),
        (2, "rule", "Never run migrations against the production database from a local machine."),
    ]


def test_same_words_once_and_digest_ignores_case_and_spacing():
    text = "- Use tabs in Go files.\n\n- use  tabs in Go files.\n- Use spaces in YAML files.\n"
    assert [st.line for st in read_statements(text)] == [1, 4]
    assert text_digest("Use tabs") == text_digest("use   TABS") != text_digest("Use spaces")


def test_classify():
    assert classify("I'd rather get one long answer than many short ones.") == "preference"
    assert classify("我更愿意用 Postgres。") == "preference"
    assert classify("Never push to main.") == classify("禁止直接推送到 main。") == "rule"


def test_nothing_to_state():
    assert read_statements("") == read_statements("# Title\n\n---\n\nTODO\n") == []
