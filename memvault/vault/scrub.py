"""Redaction of whole records (cards, entity pages) before they are serialised. Pure: model, redact, vault.slug.

codec.card_to_text and codec.entity_to_text call these, so no writer (distill, remember, forget, import,
reindex, doctor --fix) can put a secret on disk by forgetting a step.
"""

from __future__ import annotations

import dataclasses

from memvault.redact import engine as redact
from memvault.model import Card, Entity
from memvault.vault.slug import slugify

# Fields joined for one cheap first pass; the separator keeps a match from joining two fields' text.
_SEP = "\n\x00\n"


def _clean(text: str | None, rules: redact.Rules) -> str | None:
    return redact.redact(text, rules).text if text else text


def _needs(parts, rules: redact.Rules) -> bool:
    """One redaction pass over every field at once: the common case (nothing to hide) costs one call."""
    return bool(redact.redact(_SEP.join(p for p in parts if p), rules).findings)


def scrub_card(card: Card, rules: redact.Rules | None = None) -> Card:
    """The card with every free-text field redacted: title, body, subject/field/value, tags, entity slugs.

    An entity slug that held a secret becomes the slug of its redacted form, so it stays a safe file name.
    """
    rules = rules or redact.default_rules()
    parts = [card.title, card.body, card.project, card.subject, card.field, card.value, *card.tags,
             *card.entities, *([repr(card.extra)] if card.extra else [])]
    if not _needs(parts, rules):
        return card
    # One batch: a secret found in one field goes from every other field too.
    fields = [card.title, card.body, card.project, card.subject, card.field, card.value, *card.tags, *card.entities]
    done = iter(r.text for r in redact.redact_batch([f or "" for f in fields], rules))
    title, body, project, subject, field, value = (next(done) for _ in range(6))
    tags = tuple(next(done) for _ in card.tags)
    entities = []
    for slug in card.entities:
        clean = next(done)
        entities.append(slug if clean == slug else slugify(clean or ""))
    return dataclasses.replace(
        card, title=title, body=body, project=card.project and project, subject=card.subject and subject,
        field=card.field and field, value=card.value and value, tags=tags,
        entities=tuple(dict.fromkeys(entities)), extra=redact.redact_tree(card.extra, rules),
    )


def scrub_entity(entity: Entity, block: str, rules: redact.Rules | None = None) -> tuple[Entity, str]:
    """An entity page's name, aliases, prose and generated block, redacted."""
    rules = rules or redact.default_rules()
    if not _needs([entity.name, *entity.aliases, entity.kind, entity.prose, block], rules):
        return entity, block
    ent = dataclasses.replace(
        entity, name=_clean(entity.name, rules) or entity.slug,
        aliases=tuple(_clean(a, rules) or "" for a in entity.aliases), kind=_clean(entity.kind, rules),
        prose=_clean(entity.prose, rules) or "")
    return ent, _clean(block, rules) or ""
