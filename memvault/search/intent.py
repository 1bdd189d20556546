"""Intent of a question: history ("before", "originally", "之前", "原来" …) or current ("now", "现在" …).

The marker words decide the intent and are then removed from the text that is searched. Standard library only.
"""

from __future__ import annotations

import re

_HISTORY = re.compile(
    r"\b(?:before|originally|original|at first|first|used to|previous|previously|earlier|initially|initial|"
    r"formerly|former|prior|back then|old|older|once)\b|之前|原来|最早|以前|当初|起初|一开始|原先|最初|曾经|早先|先前|过去|旧的"
)
_CURRENT = re.compile(r"\b(?:now|currently|current|latest|today|these days|nowadays|still|at the moment|moment)\b|现在|目前|当前|最新|如今|还在")


def asks_now(norm: str) -> bool:
    """The question says it is about now ("now", "currently", "现在", "目前" …) and not about the past: where the
    recency prior applies (a question without a marker is "current" too, but the prior costs those)."""
    return bool(_CURRENT.search(norm)) and not _HISTORY.search(norm)


def split_intent(norm: str) -> tuple[str, str]:
    """(intent, the normalised query without its marker words)."""
    intent = "history" if _HISTORY.search(norm) else "current"
    return intent, _CURRENT.sub(" ", _HISTORY.sub(" ", norm))
