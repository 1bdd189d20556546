"""Entity names in a statement: backticked identifiers, code names, capitalised names, 《titles》 and the CJK
noun a Chinese fact is about. Pure and deterministic; at most MAX names, in order of appearance.

Things named in the text only (issue 20): a capitalised word that opens a sentence ("Agreed", "One",
"Decision", "Remembering") is a name only when it is a known one (cues.KNOWN_NAMES), is written like a name
(LGBTQ, GitHub) or is capitalised elsewhere in the text too; a name said to someone ("Thanks, Caroline!") is an
address, not a subject; a version number stays out of the name ("Postgres 16" is Postgres).
"""

from __future__ import annotations

import re

from memvault.distill.offline.cues import KNOWN_NAMES, NOT_NAMES

MAX = 6
_BACKTICK = re.compile(r"`([^`\n]{1,60})`")
_TITLE = re.compile(r"《([^》]{1,30})》")
# A run of capitalised words ("TrueNAS Scale", "React Native"), or one code-like word (CamelCase, ALLCAPS,
# name with digits or dots: "pydantic v2" is not caught, "Postgres 16" is, and loses its number below).
_NAME = re.compile(r"(?<![\w/.:@-])([A-Z][\w.+-]*[\w+](?:\s+(?:[A-Z][\w.+-]*[\w+]|\d+(?:\.\d+)*)(?![\w/]))*)")
_CJK_SUBJECT = re.compile(r"([\u4e00-\u9fff]{2,8})(?:的)?(?:是|为(?!了|什么)|用的是)")
# A "subject" ending in a function character is a phrase, not a thing ("只是", "就是", "因为", "认为").
_CJK_NOT_SUBJECT = re.compile(r"[是为就也都还只不但可于总真而要认成作以因了的吗呢吧]$")
_OPENS = re.compile(r"(?:^|[.!?。！？:;]\s+|\n)[\s\"'“(\[]*$")  # what stands before a sentence-opening word
_NAMELIKE = re.compile(r"^[A-Z][A-Z0-9+]+$|^[A-Z]\w*[A-Z0-9]\w*$")  # LGBTQ, GitHub, TrueNAS, K8s
_VERSION = re.compile(r"(?:\s+v?\d+(?:\.\d+)*)+$")
_ADDRESS_BEFORE = re.compile(r"(?:\b(?:hey|hi|hello|thanks|thank you|congrats|congratulations|dear|bye|yo|"
                             r"sorry|wow|oh|aw+|go)\s*,?\s*|,\s*)$", re.I)
_ADDRESS_AFTER = re.compile(r"^\s*(?:[,!?]|\.\s|\.$|$)")


def _opens_sentence(text: str, start: int) -> bool:
    return bool(_OPENS.search(text[:start]))


def _said_elsewhere(word: str, text: str) -> bool:
    """The word is capitalised somewhere in the text where no sentence opens."""
    for m in re.finditer(rf"(?<![\w]){re.escape(word)}(?![\w])", text):
        if not _opens_sentence(text, m.start()):
            return True
    return False


def _opening_name(word: str, text: str) -> bool:
    bare = word.rstrip(".,")
    return bare.casefold() in KNOWN_NAMES or bool(_NAMELIKE.match(bare)) or _said_elsewhere(bare, text)


def _addressed(text: str, start: int, end: int) -> bool:
    """A name the speaker says to someone: "Thanks, Caroline!", "Mel, guess what", "Hey Jo."."""
    return bool(_ADDRESS_AFTER.match(text[end:]) and (_ADDRESS_BEFORE.search(text[:start])
                                                       or _opens_sentence(text, start)))


def entities_of(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for m in _BACKTICK.finditer(text):
        found.append(m.group(1).strip())
    for m in _TITLE.finditer(text):
        found.append(m.group(1).strip())
    for m in _NAME.finditer(text):
        words = m.group(1).split()
        if words and _opens_sentence(text, m.start()) and not _opening_name(words[0], text):
            words = words[1:]
        while words and words[0].rstrip(".,") in NOT_NAMES:
            words = words[1:]
        while words and words[-1].rstrip(".,") in NOT_NAMES:
            words = words[:-1]
        name = _VERSION.sub("", " ".join(words).rstrip(".,"))
        if len(name) < 2 or name.isdigit() or name.casefold() in ("i'm", "i've", "i'd", "i'll"):
            continue
        if len(words) == 1 and _addressed(text, m.start(), m.end()):
            continue
        found.append(name)
    m = _CJK_SUBJECT.search(text)
    if m:
        noun = re.sub(r"^(?:我的|我们的|我们|这个|那个|部署的话)", "", m.group(1))
        if len(noun) >= 2 and not _CJK_NOT_SUBJECT.search(noun):
            found.append(noun[-6:])
    out: list[str] = []
    seen: set[str] = set()
    for name in found:
        key = name.casefold()
        if key not in seen and len(name) <= 60:
            seen.add(key)
            out.append(name)
    return tuple(out[:MAX])
