"""Entity names in a statement: backticked identifiers, code names, capitalised names, 《titles》 and the CJK
noun a Chinese fact is about. Pure and deterministic; at most MAX names, in order of appearance."""

from __future__ import annotations

import re

from memvault.distill.offline.cues import NOT_NAMES

MAX = 6
_BACKTICK = re.compile(r"`([^`\n]{1,60})`")
_TITLE = re.compile(r"《([^》]{1,30})》")
# A run of capitalised words ("TrueNAS Scale", "React Native"), or one code-like word (CamelCase, ALLCAPS,
# name with digits or dots: "pydantic v2" is not caught, "Postgres 16" keeps its number).
_NAME = re.compile(r"(?<![\w/.:@-])([A-Z][\w.+-]*[\w+](?:\s+(?:[A-Z][\w.+-]*[\w+]|\d+(?:\.\d+)*)(?![\w/]))*)")
_CJK_SUBJECT = re.compile(r"([\u4e00-\u9fff]{2,8})(?:的)?(?:是|为|用的是)")


def entities_of(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for m in _BACKTICK.finditer(text):
        found.append(m.group(1).strip())
    for m in _TITLE.finditer(text):
        found.append(m.group(1).strip())
    for m in _NAME.finditer(text):
        words = m.group(1).split()
        while words and words[0].rstrip(".,") in NOT_NAMES:
            words = words[1:]
        while words and words[-1].rstrip(".,") in NOT_NAMES:
            words = words[:-1]
        name = " ".join(words).rstrip(".,")
        if len(name) >= 2 and not name.isdigit():
            found.append(name)
    m = _CJK_SUBJECT.search(text)
    if m:
        noun = re.sub(r"^(?:我的|我们的|我们|这个|那个|部署的话)", "", m.group(1))
        if len(noun) >= 2:
            found.append(noun[-6:])
    out: list[str] = []
    seen: set[str] = set()
    for name in found:
        key = name.casefold()
        if key not in seen and len(name) <= 60:
            seen.add(key)
            out.append(name)
    return tuple(out[:MAX])
