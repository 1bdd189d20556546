"""Where the turns of one input sit among the stored turns: a log may be whole, grown, or cut at either end.

Pure: works on capture's prepared turns (`episode`, `user_digest`, `opening`, `start`, `anonymous`) and the
episode index. Alignment is on the user's text, never on the answer: a cut answer or one that went on still
belongs to the same stored turn.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from memvault.vault.episodes import user_part_digests

# A session id capture derived from a log's opening (service._group_turns): "s-" and 12 hex digits.
DERIVED = re.compile(r"s-[0-9a-f]{12}")
EMPTY = hashlib.sha256(b"").hexdigest()[:16]  # the user digest of a stored opening (memvault.vault.episodes)
WEAK_CHARS = 12  # a user text shorter than this (spaces aside) places an anonymous log only with its answer


def place(items: list[Any], index: Any, moved: Callable[[Any, str, int], Any]) -> list[Any]:
    """The same turns, renumbered (and for a log without a session id, moved) onto the stored session.

    - A stored session of the same id: the shift that lines up the most user texts wins. When none lines up,
      a first turn that begins at a later user message of a stored turn (a tail cut between two user messages
      that capture joined) places the input; else the log's timestamps; else the input starts the
      conversation (shift 0) or, cut from the middle, follows the stored turns.
    - A session id that is not stored, when a tail of the same log was captured first without its id (a
      Codex tail has no session_meta, a SillyTavern tail no header): the derived session whose user texts line
      up, as for a log without an id below, so the log's turns are not stored twice.
    - No session id in the input (a tail of a Codex, SillyTavern or text log): the stored session whose user
      texts line up with the most of ours, provided no user text of ours lands on a different stored one.
      Without such a session the derived session stands.
    """
    sid = items[0].episode.session
    users = index.users.get(sid)
    if users:
        shift = _best_shift(items, users, index.sessions.get(sid, {}))
        if shift is None:
            shift = _part_shift(items, index, sid, users)
        if shift is None:
            shift = _whole_of_part_shift(items, users)
        if shift is None:
            shift = _time_shift(items, index.times.get(sid, {}))
        if shift is None:
            first = min(p.episode.turn for p in items)
            shift = 0 if items[0].start else max(users) + 1 - first
        return _shifted(items, sid, shift, moved)
    return _place_by_text(items, index, moved, derived_only=not items[0].anonymous)


def _place_by_text(items: list[Any], index: Any, moved, derived_only: bool) -> list[Any]:
    """The stored session whose user texts line up with the most of ours (see `place`); `derived_only`: only
    sessions capture derived from a log without an id."""
    tally: Counter = Counter()
    same: Counter = Counter()  # turns whose answer lines up too
    for p in items:
        if p.opening:
            continue
        found = list(index.by_user.get(p.user_digest, ()))
        if not found and p is first_said(items) and not p.start:
            found = index.by_user_part.get(p.user_digest, ())  # a tail that begins at a later user message
        if not found and derived_only:  # the stored tail began at a later user message of this turn
            found = [at for part in user_part_digests(p.episode.user) for at in index.by_user.get(part, ())]
        for session, turn in found:
            if derived_only and not DERIVED.match(session):
                continue
            answer_too = index.sessions.get(session, {}).get(turn, ("",))[0] == p.episode.hash
            if _weak(p.episode.user) and not answer_too:
                continue  # "ok" or "继续" is said in every chat: alone it places a turn only with its answer
            tally[(session, turn - p.episode.turn)] += 1
            same[(session, turn - p.episode.turn)] += answer_too
    ranked = sorted(tally.items(), key=lambda kv: (-kv[1], -same[kv[0]], abs(kv[0][1]), kv[0]))
    for (session, shift), _n in ranked:
        stored = index.users[session]
        if not all(stored.get(p.episode.turn + shift, p.user_digest) in (p.user_digest, EMPTY)
                   or derived_only and is_part(stored[p.episode.turn + shift], p)
                   for p in items if not p.opening and not at_cut_edge(p, items, index, session, shift)):
            continue  # (a stored opening, EMPTY, is no other user text: ours goes beside it)
        if derived_only and not _covers(items, stored, shift):
            continue  # a log with its own id joins a derived session only when that session is a piece of it
        return _shifted(items, session, shift, moved)
    return items


def _covers(items: list[Any], stored: dict[int, str], shift: int) -> bool:
    """Every stored turn with user text lines up with one of ours (the stored session is a cut of this log;
    its first turn may be the later part of ours, when that cut fell between two user messages)."""
    ours = {p.episode.turn + shift: p for p in items if not p.opening}
    said = sorted(turn for turn, digest in stored.items() if digest != EMPTY)
    for turn in said:
        p = ours.get(turn)
        if p is None:
            return False
        if stored[turn] != p.user_digest and not (turn == said[0] and is_part(stored[turn], p)):
            return False
    return True


def is_part(stored_digest: str, p: Any) -> bool:
    """Whether a stored user text is ours from one of its later user messages on: a turn captured from a log
    cut between two user messages that capture joined (not an edit)."""
    return stored_digest in user_part_digests(p.episode.user)


def first_said(items: list[Any]) -> Any:
    """The input's first turn with user text: the one a cut at its start may have split (an opening before it
    holds only the end of an answer)."""
    return next((p for p in items if not p.opening), items[0])


def _part_shift(items: list[Any], index: Any, sid: str, users: dict[int, str]) -> int | None:
    """The shift that puts our first turn on the stored turn it is the later part of (the tail was cut between
    two user messages that capture joined), when the turns after it line up too."""
    first = first_said(items)
    if first.opening or first.start:
        return None
    turns = sorted((t for s, t in index.by_user_part.get(first.user_digest, ()) if s == sid), reverse=True)
    for turn in turns:  # the latest first: a tail is cut from the end
        shift = turn - first.episode.turn
        rest = [p for p in items if not p.opening and p is not first]
        if all(users.get(p.episode.turn + shift, p.user_digest) == p.user_digest
               for p in rest if not at_cut_edge(p, items, index, sid, shift)):
            return shift
    return None


def _whole_of_part_shift(items: list[Any], users: dict[int, str]) -> int | None:
    """The shift that puts one of our turns on the stored turn that is its later part (that stored turn came
    from a tail cut between two user messages of it, captured before this fuller log), when the rest lines
    up."""
    where: dict[str, list[int]] = {}
    for turn, digest in users.items():
        where.setdefault(digest, []).append(turn)
    for p in items:
        if p.opening:
            continue
        for part in user_part_digests(p.episode.user):
            for turn in where.get(part, ()):
                shift = turn - p.episode.turn
                if all(users.get(q.episode.turn + shift, q.user_digest) == q.user_digest
                       or is_part(users[q.episode.turn + shift], q) for q in items if not q.opening):
                    return shift
    return None


def _weak(user: str) -> bool:
    """A user text too short to tell one conversation from another ("ok", "继续", "go on")."""
    return len("".join(user.split())) < WEAK_CHARS


def at_cut_edge(p: Any, items: list[Any], index: Any, session: str | None = None, shift: int = 0) -> bool:
    """A turn a cut has split, so its user text may differ from the stored one without an edit: the first turn
    of a tail that begins at a later user message of a stored turn, or the last turn when no answer follows
    it yet (a head that ends there)."""
    turn = p.episode.turn
    if p is first_said(items) and not p.start:
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


def _best_shift(items: list[Any], users: dict[int, str], stored: dict[int, tuple]) -> int | None:
    """The shift that lines up the most user texts; among equals, the one whose turns are the same turns (same
    answer too: "Please continue" said five times lines up five ways), then the smallest."""
    where: dict[str, list[int]] = {}
    for turn, digest in users.items():
        where.setdefault(digest, []).append(turn)
    tally: Counter = Counter()
    same: Counter = Counter()
    for p in items:
        if p.opening:
            continue
        for turn in where.get(p.user_digest, ()):
            tally[turn - p.episode.turn] += 1
            same[turn - p.episode.turn] += stored.get(turn, ("",))[0] == p.episode.hash
    if not tally:
        return None
    return min(tally, key=lambda shift: (-tally[shift], -same[shift], abs(shift)))


def _shifted(items: list[Any], session: str, shift: int, moved) -> list[Any]:
    if shift == 0 and items[0].episode.session == session:
        return items
    return [moved(p, session, p.episode.turn + shift) for p in items]
