"""Intent of a question: history ("before", "originally", "之前", "原来" …) or current ("now", "现在" …).

The marker words decide the intent and are then removed from the text that is searched. Standard library only.
"""

from __future__ import annotations

import re

_HISTORY_EN = ("before", "originally", "original", "at first", "first", "used to", "previous", "previously",
               "earlier", "initially", "initial", "formerly", "former", "prior", "back then", "old", "older", "once")
_HISTORY_ZH = ("之前", "原来", "最早", "以前", "当初", "起初", "一开始", "原先", "最初", "曾经", "早先", "先前", "过去", "旧的")
_CURRENT_EN = ("now", "currently", "current", "latest", "today", "these days", "nowadays", "still", "at the moment",
               "moment")
_CURRENT_ZH = ("现在", "目前", "当前", "最新", "如今", "还在")


class _Markers:
    """English words (whole words) or Chinese markers. The regex is compiled only for a text that holds one of
    the markers as a substring: most questions hold none, and compiling costs ~0.3 ms of every search."""

    __slots__ = ("_words", "_pattern", "_rx")

    def __init__(self, en: tuple[str, ...], zh: tuple[str, ...]):
        self._words = en + zh
        self._pattern = r"\b(?:" + "|".join(en) + r")\b|" + "|".join(zh)
        self._rx = None

    def _compiled(self, text: str):
        if not any(w in text for w in self._words):
            return None
        if self._rx is None:
            self._rx = re.compile(self._pattern)
        return self._rx

    def search(self, text: str) -> bool:
        rx = self._compiled(text)
        return rx is not None and rx.search(text) is not None

    def sub(self, repl: str, text: str) -> str:
        rx = self._compiled(text)
        return text if rx is None else rx.sub(repl, text)


_HISTORY = _Markers(_HISTORY_EN, _HISTORY_ZH)
_CURRENT = _Markers(_CURRENT_EN, _CURRENT_ZH)


def asks_now(norm: str) -> bool:
    """The question says it is about now ("now", "currently", "现在", "目前" …) and not about the past: where the
    recency prior applies (a question without a marker is "current" too, but the prior costs those)."""
    return _CURRENT.search(norm) and not _HISTORY.search(norm)


def split_intent(norm: str) -> tuple[str, str]:
    """(intent, the normalised query without its marker words)."""
    intent = "history" if _HISTORY.search(norm) else "current"
    return intent, _CURRENT.sub(" ", _HISTORY.sub(" ", norm))
