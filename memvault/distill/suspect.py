"""Suspicious emptiness (issue 33): a model that answers "nothing" for a batch in which the offline engine finds
facts has not said nothing is there; small models answer {"cards": []} to turns they did not read.

Policy (docs/distill.md, "An empty answer is checked"):
  1. a batch of several episodes is sent again in two halves (a smaller batch is read more closely);
  2. when the model gives cards for one half in which the offline engine finds some, it reads these turns:
     the other half's "nothing" stands;
  3. when every half with something to find is empty again, the model is not reading them: each such half
     gets the offline engine's cards, committed as an offline batch (journal `engine: offline`, cards tagged `offline-fallback`), so
     `distill --upgrade` sends those turns to the model again later and nothing the offline engine keeps is lost;
  4. a batch of one episode (distill.tokens_per_episode near llm.max_output_tokens) cannot be halved: its
     "nothing" stands (a small model shown one turn reads it; the offline engine's guesses on turns a model
     calls empty are mostly small talk).
A review (distill.llm_protocol: review, distill/review.py) that keeps none of the drafts it was shown follows
the same steps, and step 4 becomes step 3: one turn whose drafts are all dropped gets them back as offline
cards too. Measured with Qwen2.5-Coder-1.5B: under a JSON-schema grammar it answered `{"keep": []}` to every
batch, whatever the drafts said; a review must never leave less than the offline engine would.
Each step is a `distill_suspect` journal line (episodes, offline cards found, outcome `split`, `offline` or
`empty`) and an entry of the run's `suspect` list in `--json`: never a silent success. A batch in which the
offline engine finds nothing either is a plain "nothing".
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

    data, _related = offline.propose(batch, run.cards, run.before.get(batch[0].id))
    return len(data.get("cards") or [])


def _record(run: Run, batch: list[Episode], found: int, outcome: str) -> None:
    entry = {"episodes": [e.id for e in batch], "offline_cards": found, "outcome": outcome}
    run.summary.suspect.append(entry)
    if not run.dry_run:
        run.vault.append_journal([{"v": 1, "type": "distill_suspect", "at": run.now(), "run": run.summary.run,
                                   "engine": run.engine, "model": run.model, **entry}])


class EmptyHalf(Exception):
    """A half of a split batch came back empty again: the split step decides what it becomes."""

    def __init__(self, batch: list[Episode], usage: dict[str, int], found: int):
        super().__init__("empty half")
        self.batch, self.usage, self.found = batch, usage, found


def handle_empty(run: Run, batch: list[Episode], usage: dict[str, int], halved: bool,
                 process: Callable[[list[Episode], bool], None],
                 offline: Callable[[Run, list[Episode]], tuple[list, list[Proposal]]],
                 apply: Callable[..., None], reviewed: bool = False) -> bool:
    """Deal with a batch the model answered with no card (`reviewed`: a review that kept no draft). True when
    handled here (split, fell back, or kept empty and recorded); False when the empty answer stands unremarked
    (the offline engine finds nothing either). Raises EmptyHalf for a half of a split batch."""
    found = offline_finds(run, batch)
    if not found:
        return False
    if halved:
        raise EmptyHalf(batch, usage, found)
    if len(batch) == 1:
        _record(run, batch, found, "offline" if reviewed else "empty")
        if reviewed:
            _fall_back(run, batch, usage, offline, apply)
        else:
            apply(run, batch, [], [], usage)
        return True
    _record(run, batch, found, "split")
    half = len(batch) // 2
    empty: list[EmptyHalf] = []
    finding = 0  # halves in which the offline engine finds cards
    for part in (batch[:half], batch[half:]):
        try:
            process(part, True)
        except EmptyHalf as again:  # raised only for a half in which the offline engine finds cards
            empty.append(again)
            finding += 1
        else:
            finding += bool(offline_finds(run, part))
    # The model reads these turns when it gave cards for a half in which the offline engine finds some; a half
    # with nothing to find says nothing of that.
    unread = len(empty) == finding
    for again in empty:
        _record(run, again.batch, again.found, "offline" if unread else "empty")
        if unread:
            _fall_back(run, again.batch, again.usage, offline, apply)
        else:
            apply(run, again.batch, [], [], again.usage)
    return True


def _fall_back(run: Run, batch: list[Episode], usage: dict[str, int],
               offline: Callable[[Run, list[Episode]], tuple[list, list[Proposal]]],
               apply: Callable[..., None]) -> None:
    related, proposals = offline(run, batch)
    proposals = [dataclasses.replace(p, tags=(*p.tags, TAG)) for p in proposals]
    engine, model = run.engine, run.model
    run.engine, run.model = "offline", "offline"
    try:
        apply(run, batch, related, proposals, usage)
    finally:
        run.engine, run.model = engine, model
