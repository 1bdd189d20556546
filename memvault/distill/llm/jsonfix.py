"""JSON out of a chatty model: drop reasoning blocks, prefer ```json fences, then a tolerant, bounded scan for
the first complete top-level value (a trailing comma before `]` or `}` is forgiven). Errors never quote the reply.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

_THINK_LEAD = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_OPEN = re.compile(r"\A\s*<(?:think|thinking|reasoning)>", re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)
_FENCE = re.compile(r"```[ \t]*(?:json[c5]?|javascript|js)?[ \t]*\r?\n(.*?)```", re.S | re.I)
_START = re.compile(r"[\[{]")


def extract_json(text: str) -> Any:
    """The first complete top-level JSON object or array in a model reply.

    Drops <think>…</think> blocks (and everything before a lone closing tag, as reasoning models served with
    the opening tag in the template send), prefers the content of ```json fences, then scans for the first
    `{` or `[` that starts a value the json module accepts. Raises ValueError, never quoting the text.
    """
    if not isinstance(text, str):
        raise ValueError("model reply is not text")
    # Reasoning comes first; only leading blocks are dropped, so a card body quoting the tags survives.
    while (lead := _THINK_LEAD.match(text)) is not None:
        text = text[lead.end():]
    if _THINK_OPEN.match(text):
        # Unclosed: the reply stopped while reasoning; nothing after the tag is the answer.
        raise ValueError("model reply ends inside a <think> block (no JSON after the reasoning)")
    close = _THINK_CLOSE.search(text)
    if close and not text.lstrip().startswith(("{", "[")) and "<think" not in text[: close.start()].lower():
        # A lone closing tag: the server put the opening tag in the template, so the reasoning precedes it.
        text = text[close.end():]
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except (ValueError, RecursionError):
            pass
    for fenced in _FENCE.findall(text):
        found = _scan(fenced)
        if found is not _NOTHING:
            return found
    found = _scan(text)
    if found is _NOTHING:
        raise ValueError("no complete JSON object or array found in the model reply")
    return found


_NOTHING = object()
_DECODER = json.JSONDecoder()


_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}"]', re.S)
_PAIR = {"]": "[", "}": "{"}
_TRAILING_COMMA = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")|,(\s*[\]}])', re.S)


def _scan(text: str) -> Any:
    """First `{`/`[` that starts a complete JSON value; linear work on ordinary replies, bounded on hostile ones.

    A bracket/string matcher finds where the value starting at an opener ends (or breaks); json.loads then
    judges only that slice (json.JSONDecoder.raw_decode on the whole text counts lines up to the error on every
    failure, which is quadratic). Trigger: a slice does not parse. Why: openers before the parse error are
    nested in a valid prefix, so a cut-off reply must not yield one of its inner objects. Outcome: resume at
    the error; give up once the scanning done exceeds a few times the text length.
    """
    budget = 4 * len(text) + 65536
    pos = 0
    while (match := _START.search(text, pos)) is not None:
        start = match.start()
        stack: list[str] = []
        stop = len(text)
        for tok in _TOKEN.finditer(text, start):
            char = tok.group()
            if char in "[{":
                stack.append(char)
            elif char in "]}":
                if stack[-1] != _PAIR[char]:
                    stop = tok.end()
                    break
                stack.pop()
                if not stack:
                    stop = tok.end()
                    break
            elif char == '"':
                break  # unterminated string: the value runs to the end of the text
        chunk = text[start:stop]
        try:
            return json.loads(chunk)
        except json.JSONDecodeError as exc:
            # Trigger: a value that does not parse. Why: small models leave a trailing comma before `]`/`}`.
            # Outcome: the same value without such commas (strings untouched) is accepted, nothing else is.
            repaired = _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), chunk)
            if repaired != chunk:
                with contextlib.suppress(ValueError, RecursionError):
                    return json.loads(repaired)
            # An unterminated string reports where it began, which is still inside this value.
            resume = start + max(exc.pos, 1)
        except (ValueError, RecursionError):
            resume = start + 1
        budget -= 2 * len(chunk)
        if budget < 0:
            return _NOTHING
        pos = resume
    return _NOTHING
