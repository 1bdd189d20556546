"""Where the turns of one input sit among the stored turns: a log may be whole, grown, or cut at either end.

Pure: works on capture's prepared turns (`episode`, `user_digest`, `opening`, `start`, `anonymous`) and the
episode index. Alignment is on the user's text, never on the answer: a cut answer or one that went on still
belongs to the same stored turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

WEAK_CHARS = 12  # a user text shorter than this (spaces aside) places an anonymous log only with its answer


def place(items: list[Any], index: Any, moved: Callable[[Any, str, int], Any]) -> list[Any]:
    """The same turns, renumbered (and for a log without a session id, moved) onto the stored session.

    - A stored session of the same id: the shift that lines up the most user texts wins. When none lines up,
      the input starts the conversation (shift 0) or, cut from the middle, follows the stored turns.
    - No session id in the input (a tail of a Codex, SillyTavern or text log): the stored session whose user
      texts line up with the most of ours, provided no user text of ours lands on a different stored one.
      Without such a session the derived session stands.
    """
    sid = items[0].episode.session
    users = index.users.get(sid)
    if users:
        shift = _best_shift(items, {sid: users}, sid)
        if shift is None:
            shift = _time_shift(items, index.times.get(sid, {}))
        if shift is None:
            first = min(p.episode.turn for p in items)
            shift = 0 if items[0].start else max(users) + 1 - first
        return _shifted(items, sid, shift, moved)
    if not items[0].anonymous:
        return items
    tally: Counter = Counter()
    for p in items:
        if p.opening:
            continue
        found = index.by_user.get(p.user_digest, ())
        if not found and p is items[0] and not p.start:
            found = index.by_user_part.get(p.user_digest, ())  # a tail that begins at a later user message
        for session, turn in found:
            if _weak(p.episode.user) and index.sessions.get(session, {}).get(turn, ("",))[0] != p.episode.hash:
                continue  # "ok" or "继续" is said in every chat: alone it places a turn only with its answer
            tally[(session, turn - p.episode.turn)] += 1
    for (session, shift), _n in sorted(tally.items(), key=lambda kv: (-kv[1], abs(kv[0][1]), kv[0])):
        stored = index.users[session]
        if all(stored.get(p.episode.turn + shift, p.user_digest) == p.user_digest
               for p in items if not p.opening and not at_cut_edge(p, items, index, session, shift)):
            return _shifted(items, session, shift, moved)
    return items


def _weak(user: str) -> bool:
    """A user text too short to tell one conversation from another ("ok", "继续", "go on")."""
    return len("".join(user.split())) < WEAK_CHARS


def at_cut_edge(p: Any, items: list[Any], index: Any, session: str | None = None, shift: int = 0) -> bool:
    """A turn a cut has split, so its user text may differ from the stored one without an edit: the first turn
    of a tail that begins at a later user message of a stored turn, or the last turn when no answer follows
    it yet (a head that ends there)."""
    turn = p.episode.turn
    if turn == items[0].episode.turn and not p.start:
        at = (session or p.episode.session, turn + shift)
        if at in index.by_user_part.get(p.user_digest, ()):
            return True
    return turn == items[-1].episode.turn and not p.episode.assistant


def _time_shift(items: list[Any], times: dict[int, str]) -> int | None:
    """No user text lines up: the log's own timestamps may (an edited message keeps its time)."""
    once: dict[str, int] = {}
    for turn, at in times.items():
        once[at] = -1 if at in once else turn
    tally: Counter = Counter()
    for p in items:
        turn = once.get(p.episode.at, -1) if p.timed else -1
        if turn > 0:
            tally[turn - p.episode.turn] += 1
    if not tally:
        return None
    return min(tally, key=lambda shift: (-tally[shift], abs(shift)))


def _best_shift(items: list[Any], sessions: dict[str, dict[int, str]], sid: str) -> int | None:
    where: dict[str, list[int]] = {}
    for turn, digest in sessions[sid].items():
        where.setdefault(digest, []).append(turn)
    tally: Counter = Counter()
    for p in items:
        if p.opening:
            continue
        for turn in where.get(p.user_digest, ()):
            tally[turn - p.episode.turn] += 1
    if not tally:
        return None
    return min(tally, key=lambda shift: (-tally[shift], abs(shift)))


def _shifted(items: list[Any], session: str, shift: int, moved) -> list[Any]:
    if shift == 0 and items[0].episode.session == session:
        return items
    return [moved(p, session, p.episode.turn + shift) for p in items]
