"""A card as one line of a pack or a brief: whitespace collapsed, capped, and nothing said twice."""

from __future__ import annotations

import re

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")  # Han, kana, hangul
_SPACE = re.compile(r"\s+")


def flatten(text: str, cap: int) -> str:
    """One line of at most `cap` characters, an ellipsis where it was cut."""
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= cap else flat[: cap - 1].rstrip() + "…"


def beyond_title(title: str, body: str) -> str:
    """What a body adds to its title. An offline card's body is "<who> said: <words>" plus, after a blank line,
    "(<name> asked: …)", and its title is the words ("<name>: <words>" for a named speaker; see
    memvault.distill.offline), so a line shows the question alone rather than the words twice. Any other body
    is returned as it is. A named speaker's card (issue 32) has the title's words first in its body: the rest."""
    head, _, asked_new = body.partition("\n\n(")
    lead, flat = flatten(title, len(title) + 1), flatten(head, len(head) + 1)
    if lead and flat.startswith(lead):
        rest = flat[len(lead):].lstrip(" .。")
        return " ".join(x for x in (rest, f"({asked_new}" if asked_new else "") if x)
    who, sep, said = body.partition(" said: ")
    if not sep or len(who) > 60 or "\n" in who:
        return body
    words, _, asked = said.partition("\n\n(")
    text = flatten(title, len(title) + 1)
    if text.startswith(f"{who}: "):
        text = text[len(who) + 2:]
    if flatten(words, len(words) + 1) != text:
        return body
    return f"({asked}" if asked else ""
