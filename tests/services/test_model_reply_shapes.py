"""Replies in the shapes real servers send (issue 10 item 4), each served by the real fake HTTP server.

Every behaviour is named after the server or model habit it copies. Each reply either parses into the card the
model meant, or fails the batch with an error naming the batch's first episode, and the batch is never lost: its
episodes stay pending and the next run with a well-behaved model distils them.
"""

from __future__ import annotations

import json

import pytest

from test_distill import add_episodes, one_card_each, run

# Their fake models write every card: the write protocol (tests/write_protocol.py).
pytestmark = pytest.mark.usefixtures("write_protocol")


def _cards(body: dict) -> str:
    return one_card_each(body)


def _compact(body: dict) -> str:
    return json.dumps(json.loads(_cards(body)), ensure_ascii=False, separators=(",", ":"))


BEHAVIOURS = {
    # Ollama with "format": "json": the bare object, often followed by newlines.
    "ollama_format_json": lambda b: _cards(b) + "\n\n\n",
    # llama.cpp with a JSON grammar: leading whitespace, compact separators.
    "llamacpp_json_grammar": lambda b: "  " + _compact(b),
    # vLLM guided JSON: keys in schema order, compact, nothing around it.
    "vllm_guided_json": _compact,
    # DeepSeek-R1 style: the reasoning first, in a <think> block.
    "deepseek_think_block": lambda b: "<think>\nThe user decided something. I should write one card.\n</think>\n"
                                      + _cards(b),
    # A chat template that opens <think> itself: the reply starts mid-reasoning and closes the tag.
    "think_opened_by_template": lambda b: "Okay, one decision here.\n</think>\n\n" + _cards(b),
    # Chat models that wrap JSON in a markdown fence.
    "json_fence": lambda b: "```json\n" + _cards(b) + "\n```",
    # Prose before and after the object.
    "prose_around": lambda b: "Here are the memory cards I extracted:\n\n" + _cards(b) + "\n\nLet me know!",
    # One trailing comma, as small models write.
    "trailing_comma": lambda b: _cards(b)[:-2] + ",]}",
    # The same card, written in Chinese although the chat was English.
    "wrong_language": lambda b: _cards(b).replace('"because"', '"因为用户这样决定了"'),
}


@pytest.mark.parametrize("name", sorted(BEHAVIOURS))
def test_reply_shape_parses_into_the_card(vault, fake_llm, name):
    add_episodes(vault, [("We decided to use Postgres for the orders database", "ok")])
    fake_llm.set_default(BEHAVIOURS[name])
    s = run(vault, fake_llm)
    assert (s.created, s.failed, s.pending_after) == (1, False, 0), (name, s.errors)
    card = next((vault / "cards").rglob("*.md")).read_text(encoding="utf-8")
    assert "Postgres for the orders database" in card


FAILING = {
    # A list cut in the middle with finish_reason "length" (the output budget ran out).
    "truncated_list_length": {"content": '{"cards": [{"action": "create", "kind": "decision", "title": "Use Po',
                              "finish_reason": "length"},
    # The same cut, but the server says "stop" (some proxies lose the finish reason).
    "truncated_list_stop": {"content": '{"cards": [{"action": "create", "kind": "decision", "title": "Use Po'},
    # Only reasoning, no JSON at all (a reasoning model that ran out of patience).
    "think_only": {"content": "<think>I am not sure what to extract here.</think>"},
    # Prose with no JSON.
    "prose_only": {"content": "I could not find anything worth remembering, sorry."},
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_unparseable_reply_fails_the_batch_by_name_and_loses_nothing(vault, fake_llm, name):
    [ep] = add_episodes(vault, [("We decided to use Postgres for the orders database", "ok")])
    spec = FAILING[name]
    fake_llm.set_default(lambda body: dict(spec))
    s = run(vault, fake_llm)
    assert s.failed and s.created == 0 and s.pending_after == 1, name
    assert any(ep in e for e in s.errors), (name, s.errors)  # the error names the batch's first episode
    assert not list((vault / "cards").rglob("*.md"))
    fake_llm.set_default(one_card_each)
    again = run(vault, fake_llm)
    assert (again.created, again.failed, again.pending_after) == (1, False, 0)
