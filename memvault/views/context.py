"""context: a token-budgeted memory pack to paste (or pipe) into an LLM prompt.

What answers the question comes first: the cards and raw turns search finds for it (one ranked list, as
`memvault search` gives it; `closest`, for a question nothing answers, after every real match), then the pinned
cards (kinds with `pinned: true`) in at most `context.pinned_share` of the budget, so two questions get two packs, not the same rules and preferences (a
question that finds nothing gets the pinned cards alone, as many as fit).
A pinned card the question finds is packed with what answers it. Entries are bucketed by kind under headings,
one compact line each with its id and date; raw turns under their own heading. The pack is fenced as reference data: a header tells the model it is remembered
material, not instructions, and the fence line carries a hash of what it encloses, so no card can close it.
Everything shown passes through redact again (defence in depth: a person may have typed a key into a card).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memvault import fence
from memvault.fence import HEADER
from memvault.redact import engine as redact
from memvault.search import service as searchlib
from memvault.errors import NoMatch, UsageError
from memvault.search.index import Index
from memvault.search.intent import split_intent
from memvault.search.tokenize import normalize
from memvault.distill.llm import estimate_tokens
from memvault.vault.store import Vault
from memvault.views.text import CJK, beyond_title, flatten

BUCKETS = ("rules", "preferences", "current", "decisions", "facts", "questions", "said", "history")
KIND_BUCKET = {
    "rule": "rules", "preference": "preferences", "synopsis": "current", "state": "current", "thread": "current",
    "decision": "decisions", "fact": "facts", "event": "facts", "reflection": "facts", "question": "questions",
}
HEADINGS = {
    "en": {"rules": "Rules", "preferences": "Preferences", "current": "Current state", "decisions": "Decisions",
           "facts": "Facts", "questions": "Open questions", "said": "What was said (raw turns)",
           "history": "History (no longer true)"},
    "zh": {"rules": "规则", "preferences": "偏好", "current": "当前状态", "decisions": "决定", "facts": "事实",
           "questions": "未决问题", "said": "原话（对话记录）", "history": "历史（已不再成立）"},
}
SUPERSEDED_BY = {"en": "superseded by {ids}", "zh": "已被 {ids} 取代"}
# Two active cards that cannot both be true (memvault conflicts): the model sees the disagreement.
CONFLICTS_WITH = {"en": "CONFLICTS with {ids}: not both can hold", "zh": "与 {ids} 冲突：二者不能同时成立"}
BODY_CHARS = 280  # a card is a line, not a page: its title and the start of its body
# … except a folded card (tag `folded`, memvault.distill.fold): its body is the list of the cards it folds, and
# the pack shows as much of the list as fits (these caps in turn), since each line stands for a card; of a
# long list only the lines on the question's topic (_focus).
FOLD_BODY_CHARS = (1200, 600, BODY_CHARS)
FOLD_TAG = "folded"
LIFE_TAG = "life"  # the offline engine's cards from a chat between people (distill/offline): never pinned
FOLD_MORE = {"en": "- … {n} more: memvault show {id}", "zh": "- … 另有 {n} 条：memvault show {id}"}
TITLE_CHARS = 160
SUCCESSOR_TITLE_CHARS = 60
RECALL_LIMIT = 60  # more than any budget holds; the budget decides
PINNED_SHARE = 0.25  # context.pinned_share: the most of the room pinned cards a question did not find may take
MIN_BUDGET = 200  # the header and fences take ~85 tokens; less would leave no room for cards


@dataclass(frozen=True)
class PackEntry:
    id: str
    kind: str
    bucket: str
    title: str
    tokens: int
    pinned: bool
    line: str = field(repr=False, default="")
    rank: int = field(repr=False, default=0)  # place in the pinned-then-recalled order, for rendering

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "bucket": self.bucket, "title": self.title,
                "tokens": self.tokens, "pinned": self.pinned}


@dataclass(frozen=True)
class ContextPack:
    query: str
    budget: int
    used_tokens: int
    intent: str  # current | history
    project: str | None
    entries: tuple[PackEntry, ...]
    omitted: int  # candidates that did not fit the budget
    pack: str

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "budget": self.budget, "used_tokens": self.used_tokens,
                "intent": self.intent, "project": self.project, "omitted": self.omitted,
                "cards": [e.to_json() for e in self.entries], "pack": self.pack}


@dataclass(frozen=True)
class _Candidate:
    id: str
    kind: str
    title: str
    body: str
    project: str | None
    status: str
    date: str
    created: str
    superseded_by: tuple[str, ...]
    pinned: bool
    folded: bool = False


def build_context(vault: Vault, query: str, *, budget: int | None = None, project: str | None = None) -> ContextPack:
    """The pack for `query`. Raises UsageError for a budget too small to hold anything, NoMatch (exit 1)
    when the vault has neither a pinned card nor a card recalled for the query."""
    if budget is None:
        budget = int(vault.config.section("context").get("budget_tokens", 2000))
    if budget < MIN_BUDGET:
        raise UsageError(f"--budget must be at least {MIN_BUDGET} tokens")
    lang = "zh" if CJK.search(query) else "en"
    rules = redact.compile_rules(list(vault.config.section("redact").get("deny") or []))
    scfg = vault.config.section("search")
    mode = str(scfg.get("chinese", "bigram"))
    pinned_kinds = [k for k in vault.config.kinds if vault.config.pinned(k)]
    with Index(vault.root, mode, int(scfg.get("stat_all_below", 5000))) as idx:
        idx.refresh()
        pinned = _pinned(idx, pinned_kinds, project)
    intent, recalled = _recall(vault, query, project)
    found = {c.id for c in recalled}
    pinned = [c for c in pinned if c.id not in found]  # a pinned card the question finds is packed as found
    pinned, recalled = ([_focus(c, query, mode, lang) for c in cs] for cs in (pinned, recalled))
    if not pinned and not recalled:
        raise NoMatch("nothing to put in a context pack: no pinned card and no card recalled for the query")
    if any(c.superseded_by for c in recalled):
        with Index(vault.root, mode, int(scfg.get("stat_all_below", 5000))) as idx:
            rows = _rows(idx, sorted({s for c in recalled for s in c.superseded_by}))
        successors = {cid: r[2] for cid, r in rows.items()}
        # A card a folded card lists is still true, not history: the folded card stands for it (when both come).
        here = {c.id for c in recalled}
        folds = {cid for cid, r in rows.items() if cid in here and _candidate(r, pinned=False).folded}
        recalled = [c for c in recalled if not (c.superseded_by and set(c.superseded_by) <= folds)]
        if not pinned and not recalled:
            raise NoMatch("nothing to put in a context pack: no pinned card and no card recalled for the query")
    else:
        successors = {}
    from memvault.views.conflicts import around  # noqa: I001 (only when cards are packed)
    clashes = around(vault, [c.id for c in [*pinned, *recalled] if c.status == "active" and c.kind != "episode"])
    successors = _Notes(successors, clashes)

    overhead = _tokens(HEADER[lang].format(fence=fence.mark("0")) + "\n") + 2 * _tokens(fence.mark("0") + "\n")
    room = budget - overhead
    chosen: list[PackEntry] = []
    heads: set[str] = set()  # headings already paid for
    cap = int(room * min(1.0, max(0.0, float(vault.config.section("context").get("pinned_share", PINNED_SHARE)))))
    # What answers the question first, leaving the pinned cards their capped share …
    reserve = _cost(pinned, lang, rules, successors, cap)
    used = _fill(chosen, heads, recalled, 0, room - reserve, lang, rules, successors)
    used += _fill(chosen, heads, pinned, len(recalled), min(cap, room - used), lang, rules, successors)
    if not recalled:
        # … unless the question found nothing at all: then the pack is the background, as much as fits.
        _fill(chosen, heads, pinned, 0, room - used, lang, rules, successors)
    if not chosen:
        raise UsageError(f"--budget {budget} is too small for even one card")
    while True:
        text = _render(chosen, lang, rules)
        used = estimate_tokens(text)
        if used <= budget or len(chosen) == 1:
            break
        chosen.pop()  # Trigger: the whole-pack redaction grew the text. Outcome: drop the last card, re-render.
    omitted = len(pinned) + len(recalled) - len(chosen)
    order = _bucket_order(chosen)
    entries = tuple(sorted(chosen, key=lambda e: (order[e.bucket], e.rank)))
    return ContextPack(query=query, budget=budget, used_tokens=used, intent=intent, project=project,
                       entries=entries, omitted=omitted, pack=text)


# ---------------------------------------------------------------- choosing cards


def _pinned(idx: Index, kinds: Sequence[str], project: str | None) -> list[_Candidate]:
    """Active cards of pinned kinds: of `project` plus personal ones (project null), or all without a project.
    Ordered by bucket, then newest first, then id: the same cards give the same pack on every machine."""
    if not kinds:
        return []
    out: dict[str, _Candidate] = {}
    for row in idx.pinned_rows(kinds, project):
        if LIFE_TAG in (json.loads(row[-1] or "[]") or []):
            continue  # a like told in a chat between people ("Mel loves camping") is a fact of a life, no rule
        out.setdefault(row[0], _candidate(row, pinned=True))  # a git merge may leave one id in two files
    # Only the latest synopsis of each project is pinned, even where older data left two of them active.
    latest: dict[str | None, _Candidate] = {}
    for c in out.values():
        if c.kind == "synopsis":
            best = latest.get(c.project)
            if best is None or (c.date, c.created, c.id) > (best.date, best.created, best.id):
                latest[c.project] = c
    out = {cid: c for cid, c in out.items() if c.kind != "synopsis" or latest.get(c.project) is c}
    order = {b: i for i, b in enumerate(BUCKETS)}
    return sorted(out.values(), key=lambda c: (order[_bucket(c)], _desc(c.created), c.id))


def _recall(vault: Vault, query: str, project: str | None) -> tuple[str, list[_Candidate]]:
    """What search finds for the query, in its order (cards and raw turns; weak matches after the others):
    active cards and turns, then — for a history question only — superseded cards."""
    if not query.strip():
        return "current", []
    scfg = vault.config.section("search")
    deny = list(vault.config.section("redact").get("deny") or [])
    runs = [None] if not project else [project, None]
    hits: dict[str, Any] = {}
    intent = split_intent(normalize(query))[0]  # the question's, also when nothing is recalled
    for proj in runs:
        opts = searchlib.options_from(scfg, limit=RECALL_LIMIT, project=proj, snippet_chars=BODY_CHARS)
        try:
            result = searchlib.run_search(vault.root, query, opts, deny=deny)
        except NoMatch as exc:
            result = exc.result  # type: ignore[attr-defined]  # nothing answers: what came closest (weak)
        intent = result.intent
        for rank, h in enumerate(result.hits or result.closest):
            # The second run (no project) contributes only personal cards: other projects stay out.
            if project and h.project not in (project, None):
                continue
            if h.id not in hits:
                hits[h.id] = (h.weak, len(hits), h)
    ranked = [h for _w, _r, h in sorted(hits.values(), key=lambda x: (x[0], x[1]))]
    wanted = [h for h in ranked if h.status in ("active", "live")]
    if intent == "history":
        wanted += [h for h in ranked if h.status == "superseded"]
    if not wanted:
        return intent, []
    mode = str(scfg.get("chinese", "bigram"))
    with Index(vault.root, mode, int(scfg.get("stat_all_below", 5000))) as idx:
        rows = _rows(idx, [h.id for h in wanted if h.kind != "episode"])
    out = []
    for h in wanted:
        if h.kind == "episode":
            out.append(_Candidate(id=h.id, kind="episode", title=h.title, body=h.snippet, project=h.project,
                                  status="active", date=(h.created or "")[:10], created=h.created or "",
                                  superseded_by=(), pinned=False))
        elif h.id in rows:
            out.append(_candidate(rows[h.id], pinned=False))
    return intent, out


def _rows(idx: Index, ids: Sequence[str]) -> dict[str, tuple]:
    rows: dict[str, tuple] = {}
    for row in idx.summary_rows(ids):
        rows.setdefault(row[0], row)
    return rows


def _candidate(row: tuple, pinned: bool) -> _Candidate:
    cid, kind, title, body, project, status, created, valid_from, superseded_by, tags = row
    try:
        succ = tuple(str(s) for s in json.loads(superseded_by or "[]"))
        folded = FOLD_TAG in (json.loads(tags or "[]") or [])
    except (ValueError, TypeError):
        succ, folded = (), False
    return _Candidate(id=cid, kind=kind, title=title or "", body=body or "", project=project, status=status,
                      date=(valid_from or created or "")[:10], created=created or "", superseded_by=succ,
                      pinned=pinned, folded=folded)


def _focus(c: _Candidate, query: str, mode: str, lang: str) -> _Candidate:
    """A folded card shows the lines that share a word with the question (other than the words of its title:
    the entity's name, the kind), and how many more `show` gives; all of them when none or all match.
    Measured (bench/consolidate.py, 20k cards): a pack then holds more on-topic facts than before the fold,
    where the whole list held more facts but fewer on topic."""
    if not c.folded or not query.strip():
        return c
    from memvault.search import tokenize

    want = set(tokenize.tokens(query, mode)) - set(tokenize.tokens(c.title, mode))
    lines = c.body.splitlines()
    hit = [i for i, text in enumerate(lines) if want & set(tokenize.tokens(text, mode))]
    if not hit or len(hit) == len(lines):
        return c
    tail = FOLD_MORE[lang].format(n=len(lines) - len(hit), id=c.id)
    return dataclasses.replace(c, body="\n".join([*(lines[i] for i in hit), tail]))


def _bucket(c: _Candidate) -> str:
    if c.status == "superseded":
        return "history"
    if c.kind == "episode":
        return "said"
    return KIND_BUCKET.get(c.kind, "facts")


def _desc(text: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in text)


# ---------------------------------------------------------------- lines and budget


def _cost(cands: Sequence[_Candidate], lang: str, rules: redact.Rules, successors: Mapping[str, str],
          cap: int) -> int:
    """Tokens the candidates take with their bodies and headings, up to `cap`: what the pinned share reserves."""
    total, heads = 0, set()
    for c in cands:
        if total >= cap:
            return cap
        if (bucket := _bucket(c)) not in heads:
            heads.add(bucket)
            total += _tokens(_heading(bucket, lang) + "\n")
        total += _tokens(redact.redact(_line(c, lang, BODY_CHARS, successors), rules).text + "\n")
    return min(cap, total)


def _fill(chosen: list[PackEntry], heads: set[str], cands: Sequence[_Candidate], rank0: int, cap: int, lang: str,
          rules: redact.Rules, successors: Mapping[str, str]) -> int:
    """Add candidates in order while they fit `cap` tokens (a heading counts with the first card under it).
    A card too long for what is left is tried as its title alone; one that still does not fit is skipped, and
    smaller ones after it may still fit. Returns the tokens used."""
    used = 0
    have = {e.id for e in chosen}
    for rank, c in enumerate(cands, start=rank0):
        if c.id in have:
            continue
        bucket = _bucket(c)
        head_cost = 0 if bucket in heads else _tokens(_heading(bucket, lang) + "\n")
        for with_body in ((*FOLD_BODY_CHARS, 0) if c.folded else (BODY_CHARS, 0)):
            line = redact.redact(_line(c, lang, with_body, successors), rules).text
            cost = _tokens(line + "\n") + head_cost
            if used + cost <= cap:
                break
        else:
            continue
        used += cost
        heads.add(bucket)
        title = redact.redact(flatten(c.title, TITLE_CHARS), rules).text
        chosen.append(PackEntry(id=c.id, kind=c.kind, bucket=bucket, title=title, tokens=cost - head_cost,
                                pinned=c.pinned, line=line, rank=rank))
    return used


def _line(c: _Candidate, lang: str, with_body: int, successors: Mapping[str, str]) -> str:
    """`- [id · date · project] title: body` — one line whatever the card holds (newlines are collapsed), so
    card text can never stand on a line of its own, where the fence lives."""
    meta = [c.id]
    if c.date:
        meta.append(c.date)
    if c.project:
        meta.append(flatten(c.project, 40))
    if c.status == "active" and getattr(successors, "clashes", {}).get(c.id):
        meta.append(CONFLICTS_WITH[lang].format(ids=", ".join(successors.clashes[c.id])))
    if c.status == "superseded" and c.superseded_by:
        quote = "「{}」" if lang == "zh" else "“{}”"
        ids = ", ".join(f"{s} {quote.format(flatten(successors[s], SUCCESSOR_TITLE_CHARS))}" if successors.get(s) else s
                        for s in c.superseded_by)
        meta.append(SUPERSEDED_BY[lang].format(ids=ids))
    if c.kind == "episode":  # a raw turn: the words around what matched, with who said them
        return f"- [{' · '.join(meta)}] {flatten(c.body if with_body else c.title, with_body or TITLE_CHARS)}"
    text = f"- [{' · '.join(meta)}] {flatten(c.title, TITLE_CHARS)}"
    body = flatten(beyond_title(c.title, c.body), with_body) if with_body else ""
    if body and body != flatten(c.title, TITLE_CHARS):
        text += ("：" if CJK.search(c.title) else ": ") + body
    return text


class _Notes(dict):
    """Successor titles by id (a dict), carrying the card -> conflicting ids map for `_line`."""

    def __init__(self, titles: Mapping[str, str], clashes: Mapping[str, list[str]]):
        super().__init__(titles)
        self.clashes = dict(clashes)


def _heading(bucket: str, lang: str) -> str:
    return f"## {HEADINGS[lang][bucket]}"


def _tokens(text: str) -> int:
    return estimate_tokens(text)


def _bucket_order(chosen: Sequence[PackEntry]) -> dict[str, int]:
    """Headings in the order of their best entry: the bucket of what answers the question first (recalled
    entries rank before pinned ones), then the next; the fixed BUCKETS order breaks ties."""
    best = {b: min((e.rank for e in chosen if e.bucket == b), default=len(chosen) + i)
            for i, b in enumerate(BUCKETS)}
    ordered = sorted(BUCKETS, key=lambda b: (best[b], BUCKETS.index(b)))
    return {b: i for i, b in enumerate(ordered)}


def _render(chosen: Sequence[PackEntry], lang: str, rules: redact.Rules) -> str:
    lines: list[str] = []
    order = _bucket_order(chosen)
    for bucket in sorted(BUCKETS, key=order.__getitem__):
        mine = sorted((e for e in chosen if e.bucket == bucket), key=lambda e: e.rank)
        if mine:
            lines.append(_heading(bucket, lang))
            lines.extend(e.line for e in mine)
    inner = "\n".join(lines)
    # The fence carries a hash of what it encloses; a card would have to contain its own hash to close it.
    # (Card lines start with "- " anyway.)
    text = fence.wrap(inner, HEADER[lang])
    return redact.redact(text, rules).text
