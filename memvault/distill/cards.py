"""Pure card logic under its historical name: validate model output, make ids, merge near-duplicates,
supersede, read the journal, plan a rollback. Each part lives in its own module; this one re-exports them so
`memvault.distill.cards` keeps working for callers (views/stats, vault/synopsis, remember, tests).

Nothing imported here touches files or imports vault/pages (vault/synopsis imports this module).
"""

from __future__ import annotations

from memvault.distill.journal import distilled_ids, journal_order, last_distill, rolled_back_batches
from memvault.distill.merge import card_id, find_duplicate, is_near_duplicate, is_substitution, merge_into
from memvault.distill.merge import norm_title, same_value, state_conflicts, state_key, supersede, title_score
from memvault.distill.proposals import ACTIONS, BODY_MAX, CARDS_PER_EPISODE, ENTITIES_MAX, ENTITY_MAX, KEY_MAX
from memvault.distill.proposals import TAGS_MAX, TITLE_MAX, InvalidOutput, Proposal, output_schema
from memvault.distill.proposals import validate_output
from memvault.distill.rollback import RollbackPlan, batch_changes, card_touches, later_touches, plan_rollback
from memvault.distill.rollback import stale_batches

__all__ = [
    "ACTIONS", "BODY_MAX", "CARDS_PER_EPISODE", "ENTITIES_MAX", "ENTITY_MAX", "KEY_MAX", "TAGS_MAX",
    "TITLE_MAX", "InvalidOutput", "Proposal", "RollbackPlan", "batch_changes", "card_id", "card_touches",
    "distilled_ids", "find_duplicate", "is_near_duplicate", "is_substitution", "journal_order",
    "last_distill", "later_touches", "merge_into", "norm_title", "output_schema", "plan_rollback",
    "rolled_back_batches", "same_value", "stale_batches", "state_conflicts", "state_key", "supersede",
    "title_score", "validate_output",
]
