"""Suspicious emptiness (issue 33): a model that answers "nothing" for a batch in which the offline engine finds
facts has not said nothing is there; small models answer {"cards": []} to turns they did not read.

Policy (docs/distill.md, "An empty answer"):
  1. a batch of several episodes is sent again in two halves (a smaller batch is read more closely);
  2. a batch of one episode, or a half that is empty again, gets the offline engine's cards, committed as an
     offline batch (journal `engine: offline`, cards tagged `offline-fallback`), so `distill --upgrade` sends
     those turns to the model again later and nothing the offline engine could keep is lost.
Each step is a `distill_suspect` journal line (episodes, offline cards found, outcome) and an entry of the
run's `suspect` list in `--json`. A batch in which the offline engine finds nothing either is a real "nothing".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from memvault.distill.proposals import Proposal
from memvault.distill.run import Run
from memvault.model import Episode

TAG = "offline-fallback"


def offline_finds(run: Run, batch: list[Episode]) -> int:
    """How many cards the offline engine proposes for the batch (0: the model's "nothing" stands)."""
    from memvault.distill import offline

    data, _related = offline.propose(batch, run.cards)
    return len(data.get("cards") or [])


def _record(run: Run, batch: list[Episode], found: int, outcome: str) -> None:
    entry = {"episodes": [e.id for e in batch], "offline_cards": found, "outcome": outcome}
    run.summary.suspect.append(entry)
    if not run.dry_run:
        run.vault.append_journal([{"v": 1, "type": "distill_suspect", "at": run.now(), "run": run.summary.run,
                                   "engine": run.engine, "model": run.model, **entry}])


def handle_empty(run: Run, batch: list[Episode], usage: dict[str, int], halved: bool,
                 process: Callable[[list[Episode], bool], None],
                 offline: Callable[[Run, list[Episode]], tuple[list, list[Proposal]]],
                 apply: Callable[..., None]) -> bool:
    """Deal with a batch the model answered with no card. True when handled here (split or fell back);
    False when the empty answer stands (the offline engine finds nothing either)."""
    found = offline_finds(run, batch)
    if not found:
        return False
    if len(batch) > 1 and not halved:
        _record(run, batch, found, "split")
        half = len(batch) // 2
        process(batch[:half], True)
        process(batch[half:], True)
        return True
    _record(run, batch, found, "offline")
    related, proposals = offline(run, batch)
    proposals = [dataclasses.replace(p, tags=(*p.tags, TAG)) for p in proposals]
    engine, model = run.engine, run.model
    run.engine, run.model = "offline", "offline"
    try:
        apply(run, batch, related, proposals, usage)
    finally:
        run.engine, run.model = engine, model
    return True
