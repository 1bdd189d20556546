"""remember: write a card by hand (source kind `remember`, no episodes), optionally superseding others."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.choices import check_project
from memvault.distill import cards as cardlib
from memvault.vault import codec
from memvault.errors import NoMatch, UsageError
from memvault.model import Card
from memvault.vault.pages import EntityTable, recover, write_change_set
from memvault.vault.store import Vault

LOCK_WHAT = "distill or another card change"


@dataclass(frozen=True)
class RememberResult:
    card: Card
    path: str
    superseded: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.card.id, "path": self.path, "kind": self.card.kind, "title": self.card.title,
                "project": self.card.project, "status": self.card.status, "superseded": list(self.superseded)}


def remember(
    vault: Vault,
    title: str,
    *,
    now: Callable[[], str],
    kind: str = "fact",
    body: str = "",
    entities: Sequence[str] = (),
    project: str | None = None,
    supersedes: Sequence[str] = (),
    valid_from: str | None = None,
    confidence: str = "user_stated",
    subject: str | None = None,
    field: str | None = None,
    value: str | None = None,
) -> RememberResult:
    """Write one card a person dictated. Raises UsageError for a bad kind/title, NoMatch for an unknown
    --supersedes id, Busy while a distill runs."""
    # Redacted before anything else: the card id, entity slugs and file names derive from these strings.
    # (codec.card_to_text redacts again; this pass keeps secrets out of slugs and the id's hash input.)
    check_project(project)
    title, body, subject, field, value = (redacted(vault, t) for t in (title, body, subject, field, value))
    entities = [redacted(vault, n) or "" for n in entities]
    item = {"action": "create", "kind": kind, "title": title, "body": body, "entities": list(entities),
            "project": project, "valid_from": valid_from, "confidence": confidence,
            "subject": subject, "field": field, "value": value}
    try:
        [proposal] = cardlib.validate_output({"cards": [item]}, n_episodes=1, n_related=0, kinds=vault.config.kinds)
    except cardlib.InvalidOutput as exc:
        raise UsageError(str(exc).replace("cards[0].", "")) from None
    with vault.exclusive("distill", LOCK_WHAT):
        recover(vault)
        at = now()
        table = EntityTable.load(vault)
        slugs = tuple(dict.fromkeys(table.resolve(n) for n in proposal.entities))
        # Only the cards this change can touch: the ones it supersedes, state cards of the same subject, and
        # the cards on the entity pages it rewrites (found by a byte search, not by parsing every card).
        all_cards = vault.cards_mentioning([*supersedes, *slugs, yaml_needle(proposal.subject)])
        olds = []
        for cid in supersedes:
            if cid not in all_cards:
                raise NoMatch(f"no card {cid!r} to supersede")
            olds.append(all_cards[cid])
        cid = cardlib.card_id(at, f"remember\x1f{title}\x1f{at}", TakenIds(vault, all_cards))
        new = Card(
            id=cid, kind=proposal.kind, title=proposal.title, body=proposal.body, project=project or None,
            entities=slugs, created=at, valid_from=valid_from or at[:10], confidence=proposal.confidence,
            subject=proposal.subject, field=proposal.field, value=proposal.value, source={"kind": "remember"},
        )
        # A new value for the same subject and field replaces the old state card, as in distill.
        for c in cardlib.state_conflicts(new, all_cards.values()):
            if not cardlib.same_value(c, new) and c not in olds:
                olds.append(c)
        more = {s for o in olds for s in o.entities} - set(slugs)
        if more:
            all_cards.update(vault.cards_mentioning(sorted(more)))
        working: dict[str, Card] = {}
        before: dict[str, Card | None] = {cid: None}
        for old in olds:
            old2, new = cardlib.supersede(working.get(old.id, old), new)
            working[old.id] = old2
            before[old.id] = old
        working[cid] = new
        change = "m-" + hashlib.sha256(f"{cid}\x1f{at}".encode()).hexdigest()[:12]
        record = {
            "v": 1, "type": "remember", "at": at, "change": change, "created": [cid],
            "superseded": [{"id": o.id, "by": [cid], "before": codec.card_to_text(o, vault.rules)} for o in olds],
        }
        written = write_change_set(vault, all_cards, working, before, table.names, record)
        path = vault.find_card_path(cid)
        new = written[cid]
        superseded = [o.id for o in olds]
        superseded += sorted(c for c in new.supersedes if c not in superseded)  # an earlier synopsis
        return RememberResult(card=new, path=vault.rel(path) if path else "", superseded=tuple(superseded))


def redacted(vault: Vault, text: str | None) -> str | None:
    from memvault.redact import engine as redact

    return redact.redact(text, vault.rules).text if text else text


def yaml_needle(text: str | None) -> str:
    """The longest run of `text` that YAML writes as-is (quotes and backslashes may be escaped)."""
    if not text:
        return ""
    runs = [r for r in re.split(r"['\"\\]", text) if r]
    return max(runs, key=len) if runs else ""


class TakenIds:
    """Card ids already in use, checked on disk: the loaded cards are only the relevant few."""

    def __init__(self, vault: Vault, loaded: Mapping[str, Card]):
        self.vault, self.loaded = vault, loaded

    def __contains__(self, cid: object) -> bool:
        return cid in self.loaded or (isinstance(cid, str) and self.vault.card_exists(cid))
