"""How a turn reads as text with its speakers' names: what search, embeddings and distill show of a turn.

Core, beside model.py and apart from it: the search fast path needs these and must not import model.py (its
dataclasses cost ~20 ms at every search start-up)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def speaker_label(names: Iterable[str] | None) -> str:
    """" (Anna, Kael)" to follow a side's label ("USER", "assistant") when the log named its speakers, else ""."""
    names = ", ".join(n for n in names or () if n)
    return f" ({names})" if names else ""


def voiced(text: str, names: Iterable[str] | None) -> str:
    """A side of a turn with its speakers' names in front ("Anna: …"), as search, embeddings and distill show
    it; the text alone when the log named nobody."""
    names = [n for n in names or () if n]
    return f"{', '.join(names)}: {text}" if names and text else text


def turn_text(user: str, assistant: str, speakers: Mapping[str, Iterable[str]] | None = None) -> str:
    """A whole turn as one text: the user's side, then the assistant's, each voiced by its speakers."""
    speakers = speakers or {}
    return "\n".join(x for x in (voiced(user, speakers.get("user")), voiced(assistant, speakers.get("assistant")))
                     if x)


def speakers_of(raw: object) -> dict[str, list[str]]:
    """The `speakers` of an episode line, keeping only what has the documented shape (role -> list of names)."""
    if not isinstance(raw, dict):
        return {}
    out = {}
    for role in ("user", "assistant"):
        names = raw.get(role)
        if isinstance(names, list) and (kept := [n for n in names if isinstance(n, str) and n]):
            out[role] = kept
    return out
