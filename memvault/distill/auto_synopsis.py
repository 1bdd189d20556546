"""When `distill --auto` also writes a project's synopsis (and reflections): every `synopsis.every_cards` new
cards or every `synopsis.every_days` days, per project. Pure arithmetic over cards and times, no file access.

A new card is one of the project's cards (any status, but not a synopsis or reflection: those are what the rule
writes) created after the project's latest synopsis; a project with none has never been summed up, and its
clock starts with its oldest card. Nothing new never runs, whatever the days say (the synopsis would not
change). 0 switches a rule off; both 0 never run.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from memvault.distill.auto import Decision
from memvault.model import Card

WRITTEN = ("synopsis", "reflection")


def _utc(text: str | None) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(str(text or "")[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return None


def decide(rules: Mapping[str, Any], *, now_utc: str, new_cards: int, since: str | None) -> Decision:
    """Should the project's synopsis be written now? `since` is when its latest synopsis was written (else when
    its oldest new card was)."""
    now = _utc(now_utc)
    if now is None:
        raise ValueError("now_utc must be YYYY-MM-DDTHH:MM:SSZ")
    every_cards = int(rules.get("every_cards") or 0)
    every_days = float(rules.get("every_days") or 0)
    if new_cards <= 0:
        return Decision(False, "no new cards since the last synopsis")
    if every_cards > 0 and new_cards >= every_cards:
        return Decision(True, f"{new_cards} new cards (every_cards {every_cards})")
    ref = _utc(since)
    days = (now - ref).total_seconds() / 86400 if ref is not None else 0.0
    if every_days > 0 and days >= every_days:
        return Decision(True, f"{new_cards} new cards, {days:.1f} days since the last synopsis "
                        f"(every_days {every_days:g})")
    return Decision(False, f"{new_cards} of every_cards {every_cards} new cards, {days:.1f} of every_days "
                    f"{every_days:g} days")


def due(cards: Iterable[Card], rules: Mapping[str, Any], *, now_utc: str,
        project: str | None = None) -> list[tuple[str, Decision]]:
    """(project, decision) for every project with cards (or just `project`), in name order."""
    by_project: dict[str, list[Card]] = {}
    for card in cards:
        if card.project and (project is None or card.project == project):
            by_project.setdefault(card.project, []).append(card)
    out = []
    for name, mine in sorted(by_project.items()):
        last = max((c.created for c in mine if c.kind == "synopsis" and c.created), default=None)
        new = sorted(c.created for c in mine if c.kind not in WRITTEN and (last is None or c.created > last))
        if not new and all(c.kind in WRITTEN for c in mine):
            continue
        out.append((name, decide(rules, now_utc=now_utc, new_cards=len(new), since=last or (new[0] if new else None))))
    return out
