"""The offline distill engine (issue 10): episodes -> card proposals with no network, from what the user states
outright (extract.py, cue tables in cues.py). Deterministic: the same episodes and cards give the same proposals.

distill/service.py calls `plan` to cut the pending episodes into batches and `propose` for each batch; the
proposals then take the same validate -> redact -> merge/supersede -> commit path as a model's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from memvault.distill.cards import ENTITIES_MAX, ENTITY_MAX, KEY_MAX, TITLE_MAX
from memvault.distill.offline.extract import Statement, statements
from memvault.model import Card, Episode

ENGINE = "offline"
CONFIDENCE = "extracted"
STATE_FIELD = "current"
BATCH = 64  # episodes per journal line; a batch also ends before a state change (see plan)
_NORM = re.compile(r"[\W_]+")


def _norm(text: str) -> str:
    return _NORM.sub(" ", text.casefold()).strip()


def episode_statements(ep: Episode) -> list[Statement]:
    return statements(ep.user or "")


def plan(episodes: list[Episode], size: int = BATCH) -> list[list[Episode]]:
    """Consecutive batches of one project each, at most `size` episodes. A batch ends before an episode that
    states a change, so the card holding the old value is already written when the change looks for it."""
    out: list[list[Episode]] = []
    cur: list[Episode] = []
    for ep in episodes:
        changes = any(s.kind == "state" for s in episode_statements(ep))
        if cur and (len(cur) >= size or ep.project != cur[0].project or changes):
            out.append(cur)
            cur = []
        cur.append(ep)
    if cur:
        out.append(cur)
    return out


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_PARTS = re.compile(r"\s*(?:\band\b|\bor\b|[+/、&和与及])\s*", re.I)


def _says(text: str, key: str) -> bool:
    text = _norm(text)
    return f" {key} " in f" {text} " or (not key.isascii() and len(key.replace(" ", "")) >= 2 and key in text)


def _holds(card: Card, old: str) -> float:
    """How much of the old value this card says (its title, or its value for a state card): 1.0 when all of
    it, else the share of its parts ("RQ 和 Redis" -> RQ, Redis); 0 when none."""
    key = _norm(old)
    if not key:
        return 0.0
    texts = [card.title, card.value or ""]
    if any(_says(t, key) for t in texts):
        return 1.0
    parts = [_norm(p) for p in _PARTS.split(old) if len(_norm(p)) >= 2]
    if len(parts) < 2:
        return 0.0
    return sum(any(_says(t, p) for t in texts) for p in parts) / len(parts)


def find_target(st: Statement, cards: Iterable[Card], project: str) -> Card | None:
    """The active card of the project (or a personal one) that held the old value of a state change: one
    whose title says the old value; a state card with the same subject first, then the newest."""
    subject = _norm(st.subject or "")
    held = {c.id: _holds(c, st.old or "") for c in cards if c.status == "active" and c.project in (project, None)}
    found = [c for c in cards if held.get(c.id, 0.0) >= 0.5]
    if not found:
        return None

    def rank(c: Card):
        same = bool(subject) and c.kind == "state" and _norm(c.subject or "") == subject
        shared = len(set(subject.split()) & set(_norm(c.title).split())) if subject else 0
        return (-held[c.id], not same, -shared, tuple(-ord(ch) for ch in (c.valid_from or c.created or "")), c.id)

    return sorted(found, key=rank)[0]


def propose(batch: list[Episode], cards: Mapping[str, Card]) -> tuple[dict, list[Card]]:
    """The batch's cards as a model would answer them (`{"cards": [...]}`, validated by the caller with
    cards.validate_output like any reply), and the existing cards their `target` indexes point into."""
    proposals: list[dict] = []
    related: list[Card] = []
    project = batch[0].project
    for i, ep in enumerate(batch):
        for st in episode_statements(ep):
            body = f"The user said (episode {ep.id}, line {st.line} of the message): {_cut(st.text, 600)}"
            if st.kind == "state":
                target = find_target(st, cards.values(), project)
                subject = st.subject or (target.subject if target is not None and target.kind == "state"
                                         else None) or st.old or ""
                title = f"{subject}: {st.new} (was {st.old})"
                action, index = "create", None
                if target is not None:
                    if target not in related:
                        related.append(target)
                    action, index = "supersede", related.index(target)
                card = _card(action, "state", title, body, st.entities, i)
                card.update(subject=_cut(subject, KEY_MAX), field=STATE_FIELD, value=_cut(st.new or "", KEY_MAX))
                if index is not None:
                    card["target"] = index
                proposals.append(card)
                continue
            proposals.append(_card("create", st.kind, st.text, body, st.entities, i))
    return {"cards": proposals}, related


def _card(action: str, kind: str, title: str, body: str, entities: tuple[str, ...], i: int) -> dict:
    return {"action": action, "kind": kind, "title": _cut(title, TITLE_MAX), "body": body,
            "entities": [_cut(e, ENTITY_MAX) for e in entities[:ENTITIES_MAX]], "valid_from": None,
            "confidence": CONFIDENCE, "episodes": [f"e{i}"]}
