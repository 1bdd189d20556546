"""Fake model answers for the synopsis and reflect prompts (used in-thread and by the fake server process).

`answer(body)` looks at the system prompt: the synopsis prompt gets one line per shown card (up to 8), citing
its id; the reflect prompt gets one reflection resting on the first two shown cards; anything else (distill)
gets one card per even episode. Chinese prompts get Chinese text.
"""

from __future__ import annotations

import json
import re

SECTION = {"decision": "decisions", "state": "state", "thread": "open", "question": "open", "rule": "rules"}
LINE = re.compile(r"^\[(c-\d{8}-[0-9a-f]+)\] (\w+)(?: \[[^\]]*\])? · (.*?) \(\d{4}-\d{2}-\d{2}\)", re.M)


def shown(body: dict) -> list[tuple[str, str, str]]:
    return LINE.findall(body["messages"][1]["content"])


def synopsis(body: dict) -> str:
    lines = [{"section": SECTION.get(kind, "decisions"), "text": f"Now: {title}", "cards": [cid]}
             for cid, kind, title in shown(body)[:8]]
    return json.dumps({"lines": lines}, ensure_ascii=False)


def reflection(body: dict) -> str:
    cards = shown(body)
    zh = "Chinese" in body["messages"][0]["content"]
    if len(cards) < 2:
        return '{"reflections": []}'
    title = ("用户总是偏好" if zh else "The user keeps preferring ") + cards[0][2][:40]
    return json.dumps({"reflections": [{"title": title, "body": "Seen across several cards.",
                                        "cards": [cards[0][0], cards[1][0]]}]}, ensure_ascii=False)


def distill(body: dict) -> str:
    user = body["messages"][1]["content"]
    cards = []
    for n, text in re.findall(r"^\[e(\d+)\] .*\nUSER: (.*)$", user, re.M):
        if int(n) % 2 == 0:
            cards.append({"action": "create", "kind": "decision", "title": text[:80], "body": "because " + text,
                          "entities": ["vault"], "project": "demo", "valid_from": None,
                          "confidence": "user_stated", "episodes": [f"e{n}"]})
    return json.dumps({"cards": cards}, ensure_ascii=False)


def answer(body: dict) -> str:
    system = body["messages"][0]["content"]
    if "You write the synopsis" in system:
        return synopsis(body)
    if "write at most" in system and "reflections" in system:
        return reflection(body)
    return distill(body)
