"""The review protocol of `distill --engine llm` (issue 33; `distill.llm_protocol: review`, the default): the
model reviews the offline engine's drafts instead of writing cards from scratch.

The prompt (prompts/review.md) shows a small batch's turns and the offline engine's cards for them as numbered
drafts (`c0 e1 [event] Caroline went to a support group on 7 May 2023`); the model answers
`{"keep": ["c0", ["c2", "fact", "corrected statement"]], "add": [["e1", "kind", "statement"]]}`. A kept draft
is the offline card as it was (its body, dates, change and supersede target), or with the kind or statement
the model corrected when the correction rests on the turn (compact.ground); what it adds goes the way of a
compact card (decide.py). A model writes an id per card instead of a sentence, and cannot lose what it keeps;
a small one mixes up speakers and loops when it writes. Measured with Qwen2.5-Coder-1.5B (eval/REPORT.md): it
kept every draft, and asked for a label per draft it labelled real facts "chat" and added copies and wrong
speakers, so the keep list is the prompt; a stronger model can drop chatter the offline engine keeps.

A label per draft (`{"c0": "event", "c1": "chat"}`) is read too. Parsing repairs what is harmless (an id out of
range, a bad added row, a kind the vault does not know) and counts it; a reply that judges no draft is
invalid (one retry, then a failed batch). A reply cut off in its additions keeps what it judged before them
(`add_cut`). Pure apart from the model call.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from memvault.distill.proposals import InvalidOutput, Proposal, validate_output
from memvault.distill.run import Run
from memvault.errors import UsageError
from memvault.model import Card, Episode

PROTOCOLS = ("review", "write")
EPISODES = 4  # turns a review call reads at most (distill.review_episodes): a 1.5B model reads 4 closely
SHAPE = '{"keep": ["c0", ...], "add": [["e0", "kind", "statement"], ...]}'
_ID = re.compile(r"^\s*c?(\d+)\s*$", re.I)


def protocol(settings: Mapping[str, Any]) -> str:
    """distill.llm_protocol: review (default) or write. Raises UsageError for another value."""
    name = str(settings.get("llm_protocol") or "review").strip().lower()
    if name not in PROTOCOLS:
        raise UsageError(f"memvault.yaml: distill.llm_protocol must be one of {', '.join(PROTOCOLS)}, not {name!r}")
    return name


def batch_episodes(settings: Mapping[str, Any]) -> int:
    return max(1, int(settings.get("review_episodes", EPISODES)))


def drafts_text(drafts: list[Proposal]) -> str:
    lines = [f"c{n} e{p.episodes[0] if p.episodes else 0} [{p.kind}] {' '.join(p.title.split())}"
             for n, p in enumerate(drafts)]
    return "\n".join(lines) or "(none)"


def budget(run: Run, n_episodes: int, n_drafts: int) -> int:
    """Output tokens of one review: an id (~4 tokens) or a label (~6) a draft, an added card now and then."""
    return max(64, min(run.client.settings.max_output_tokens, 10 * n_drafts + 40 * n_episodes + 32))


def schema() -> dict[str, Any]:
    """The JSON schema of the keep-list reply (json_schema mode: servers that constrain decoding with it)."""
    row = {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}
    return {"type": "object", "additionalProperties": False, "required": ["keep", "add"],
            "properties": {"keep": {"type": "array", "items": {"anyOf": [{"type": "string"}, row]}},
                           "add": {"type": "array", "items": row}}}


def _count(repairs: dict[str, int], what: str, n: int = 1) -> None:
    repairs[what] = repairs.get(what, 0) + n


def _keep_items(items: list, n_drafts: int, repairs: dict[str, int]) -> list[tuple[int, str | None, str | None]]:
    out: list[tuple[int, str | None, str | None]] = []
    seen: set[int] = set()
    for item in items:
        row = item if isinstance(item, list) else [item]
        m = _ID.match(str(row[0])) if row and isinstance(row[0], (str, int)) else None
        n = int(m.group(1)) if m else -1
        if not 0 <= n < n_drafts or n in seen:
            _count(repairs, "target_dropped")  # an id that names no draft (or one twice)
            continue
        seen.add(n)
        kind = row[1].strip().lower() if len(row) > 1 and isinstance(row[1], str) else None
        said = row[2].strip() if len(row) > 2 and isinstance(row[2], str) and row[2].strip() else None
        out.append((n, kind, said))
    return out


_DROP = frozenset({"chat", "drop", "none", "no", "skip", "nothing"})


def _labels(data: dict, n_drafts: int, kinds: tuple[str, ...],
            repairs: dict[str, int]) -> list[tuple[int, str | None, str | None]]:
    """{"c0": "event", "c1": "chat", "c2": ["fact", "corrected statement"]} as keep items: a draft labelled chat
    is dropped, one labelled with a kind is kept as that kind, one with no label is kept as drafted."""
    out: list[tuple[int, str | None, str | None]] = []
    labelled = {int(m.group(1)): v for k, v in data.items() if (m := _ID.match(str(k)))}
    if any(n >= n_drafts for n in labelled):
        _count(repairs, "target_dropped", sum(n >= n_drafts for n in labelled))
    for n in range(n_drafts):
        value = labelled.get(n)
        row = value if isinstance(value, list) else [value]
        label = row[0].strip().lower() if row and isinstance(row[0], str) else None
        if label in _DROP:
            continue
        if n not in labelled:
            _count(repairs, "unlabelled")
        said = row[1].strip() if len(row) > 1 and isinstance(row[1], str) and row[1].strip() else None
        out.append((n, label if label in kinds else None, said))
    return out


def parse(data: Any, *, n_drafts: int, n_episodes: int, kinds: tuple[str, ...],
          repairs: dict[str, int]) -> list[tuple]:
    """A review reply as [("keep", draft index, kind or None, statement or None) ..., ("add", Proposal) ...]:
    a label for each draft (prompts/review.md) or a keep list (`{"keep": ["c0", ["c2", kind, statement]]}`).
    Raises InvalidOutput when the reply judges no draft it was shown."""
    if isinstance(data, list):  # a bare list of ids
        data = {"keep": data}
    written = isinstance(data, dict) and isinstance(data.get("cards"), list)  # the write protocol's reply
    labelled = isinstance(data, dict) and any(_ID.match(str(k)) for k in data)
    if not isinstance(data, dict) or not (labelled or isinstance(data.get("keep", [] if written else None), list)
                                          or (n_drafts == 0 and isinstance(data.get("add", []), list))):
        raise InvalidOutput('the reply must be a JSON object {"keep": [...], "add": [...]}',
                            f'Write {SHAPE}: the ids of the drafts to keep, and an empty "add" list when no fact '
                            "is missing.")
    if labelled:
        out: list[tuple] = [("keep", *k) for k in _labels(data, n_drafts, kinds, repairs)]
    else:
        out = [("keep", *k) for k in _keep_items(data.get("keep") or [], n_drafts, repairs)]
    if set(k for k in data if not _ID.match(str(k))) - {"keep", "add", "cards"}:
        _count(repairs, "keys_dropped")
    rows = data.get("add")
    rows = rows if isinstance(rows, list) else data.get("cards") if isinstance(data.get("cards"), list) else []
    for row in rows:
        if not isinstance(row, list):
            _count(repairs, "add_dropped")
            continue
        try:
            out.extend(("add", p) for p in validate_output({"cards": [row]}, n_episodes=n_episodes, n_related=0,
                                                           kinds=kinds, repairs=repairs))
        except InvalidOutput:
            _count(repairs, "add_dropped")  # one bad added row: not the whole review
    return out


def salvage(text: str, n_drafts: int, kinds: tuple[str, ...], repairs: dict[str, int]) -> list[tuple] | None:
    """A reply cut off in its additions (a model that loops in "add"): the labels or keep list before them, else
    None."""
    head, cut, _tail = text.partition('"add"')
    m = re.search(r'"keep"\s*:\s*(\[(?:[^\[\]]|\[[^\[\]]*\])*\])', head)
    try:
        if m:
            items = [("keep", *k) for k in _keep_items(json.loads(m.group(1)), n_drafts, repairs)]
        else:
            labels = json.loads(head.rstrip().rstrip(",") + "}") if cut else None
            if not isinstance(labels, dict) or not any(_ID.match(str(k)) for k in labels):
                return None
            items = [("keep", *k) for k in _labels(labels, n_drafts, kinds, repairs)]
    except json.JSONDecodeError:
        return None
    _count(repairs, "add_cut")
    return items


def _corrected(draft: Proposal, kind: str | None, said: str | None, batch: list[Episode], kinds: tuple[str, ...],
               repairs: dict[str, int]) -> Proposal:
    """The draft with the model's correction where it holds: a kind the vault knows (a change stays a change:
    its subject, value and target are the offline engine's), a statement that rests on the draft's turn."""
    from memvault.distill import compact
    from memvault.distill.decide import _sides

    p = draft
    if kind and kind != draft.kind and kind in kinds and "state" not in (kind, draft.kind):
        p = dataclasses.replace(p, kind=kind)
        _count(repairs, "kind_fixed")
    if said and said != draft.title and draft.kind != "state":
        fixed = compact.ground(dataclasses.replace(p, title=said, statement=True), batch, _sides, {})
        if fixed is not None and fixed.episodes == draft.episodes:
            p = dataclasses.replace(p, title=fixed.title, valid_from=draft.valid_from or fixed.valid_from)
            _count(repairs, "statement_fixed")
        else:
            _count(repairs, "fix_dropped")  # a correction that does not rest on the turn: the draft stays
    return p


def propose(run: Run, batch: list[Episode],
            offline: Callable[[Run, list[Episode]], tuple[list[Card], list[Proposal]]]
            ) -> tuple[list[Card], list[Proposal], dict[str, int]]:
    """(related cards, the batch's proposals, usage): the drafts the model kept (as corrected) and the cards it
    added, decided (decide.py) against the existing cards. Raises what llm_engine.ask raises."""
    from memvault.distill import llm_engine
    from memvault.distill.decide import decide

    related, drafts = offline(run, batch)
    messages = llm_engine._messages(run, batch, [], drafts_text(drafts))
    kinds = tuple(run.kinds)

    def parse_reply(data, repairs):
        return parse(data, n_drafts=len(drafts), n_episodes=len(batch), kinds=kinds, repairs=repairs)

    items, usage = llm_engine.ask(run, batch, messages, budget(run, len(batch), len(drafts)), schema(),
                                  parse_reply, SHAPE, lambda text, repairs: salvage(text, len(drafts), kinds, repairs))
    repairs = run.summary.repairs
    kept = [_corrected(drafts[i], kind, said, batch, kinds, repairs) for tag, i, kind, said in
            (it for it in items if it[0] == "keep")]
    _count(repairs, "drafts_dropped", len(drafts) - len(kept))
    if run.upgrade:  # --upgrade: a draft kept as it was is the extracted card already there, not a new one
        have = {(c.kind, c.title, e) for c in run.cards.values() if c.status == "active" for e in c.episodes}
        kept = [p for p in kept if not any((p.kind, p.title, batch[j].id) in have for j in p.episodes)]
    adds = [it[1] for it in items if it[0] == "add"]
    if drafts and not kept and adds:
        # Trigger: no draft kept, yet cards added (Qwen2.5-Coder-1.5B under a JSON-schema grammar). Outcome: a
        # review that kept nothing, checked as such (suspect.py), instead of its additions replacing the drafts.
        _count(repairs, "add_dropped", len(adds))
        adds = []
    added, related = decide(adds, related, run.cards.values(), batch, repairs)
    return related, kept + added, usage
