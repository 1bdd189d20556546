"""What a model's proposals become: code, not the model, decides create / merge / supersede / update (issue 22).

A small model is asked only for facts (kind, subject, value, the old value a change replaces, the user's words,
the episode). Here, before apply:
  - a card whose quote is not in its episode's user message is dropped (the assistant's words, or invented);
    so is one whose quote is a question, a what-if or a hedge, or comes from code, a quotation or role-play
    narration (the labelling rules of eval/distill/README.md); the user's words become the card's title;
  - a change (`old` given) becomes a state card that supersedes the card holding the old value, found by
    merge.find_holder, the rule the offline engine links its changes with;
  - an `update` (from a model that still answers with actions) whose title or value says a different fact than
    its target becomes a new card: an update never replaces a card's content with another fact.
apply then merges near-duplicates and supersedes same-subject state cards (merge.find_duplicate,
merge.state_conflicts), as for every engine. Pure: no files; what it mends is counted in `repairs`.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Iterable

from memvault.distill.merge import find_holder, is_substitution, norm_title
from memvault.distill.proposals import Proposal
from memvault.model import Card, Episode

STATE_FIELD = "current"  # the offline engine's field: one current value per subject
GROUNDED = 90  # rapidfuzz partial_ratio of the quote against the user's message
TITLE_WORDS = 120  # a quote up to this long is the card's title
_DROP = re.compile(r"[\W_]+")


def _plain(text: str) -> str:
    return _DROP.sub("", unicodedata.normalize("NFKC", text).casefold())


def grounded(quote: str, user: str) -> bool:
    """The quote is (nearly) words of the user's message: case, spaces and punctuation aside."""
    q, u = _plain(quote), _plain(user)
    if not q:
        return False
    if q in u:
        return True
    from rapidfuzz import fuzz

    return len(q) >= 4 and fuzz.partial_ratio(q, u) >= GROUNDED


def _is_question(quote: str) -> bool:
    return quote.rstrip(" \"'”’」』)）").endswith(("?", "？"))


# Not an outright statement (eval/distill/README.md, labelling rule 2): a what-if, a hedge, or a choice denied.
# Only the quote's opening words count for the first group: "if the build fails, page me" is a rule.
_UNSURE_START = re.compile(
    r"^(?:what if|suppose|supposing|i might|we might|如果|要是|假如|假设|万一|大概)", re.I)
_UNSURE_ANY = re.compile(
    r"(?:\bmaybe\b|\bperhaps\b|\bprobably\b|\bi guess\b|\bnot sure\b|haven't decided|have not decided|"
    r"not decided yet|undecided|never said|didn't say we|(?<![不尽])可能(?!性)|也许|或许|说不定|还没想好|还没定|"
    r"还没决定|没决定|没说要|不确定)", re.I)
# Text that is not the user's own statement (rules 2-4 of eval/distill/README.md): code blocks, `>` quoted
# lines, quoted spans and role-play narration between asterisks.
_NOT_OWN = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`|^[ \t]*>.*$|\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」|『[^』\n]*』|"
                      r"\*[^*\n]+\*", re.S | re.M)


def own_words(user: str) -> str:
    """The user's message without code, quotations and narration."""
    return _NOT_OWN.sub(" ", user)


def _is_unsure(quote: str) -> bool:
    text = unicodedata.normalize("NFKC", quote).strip().lstrip("\"'“‘「『(（")
    return bool(_UNSURE_START.match(text) or _UNSURE_ANY.search(text))


_SENTENCE = re.compile(r"[^.!?。！？;；\n]+[.!?。！？;；]*")


def _sentence_of(quote: str, user: str) -> str:
    """The sentence of the user's message the quote comes from: "what if we used X?" when the model quoted only
    "used X"."""
    from rapidfuzz import fuzz

    q = _plain(quote)
    best, score = quote, 0.0
    for m in _SENTENCE.finditer(user):
        sentence = m.group(0).strip()
        s = fuzz.partial_ratio(q, _plain(sentence)) if _plain(sentence) else 0.0
        if s > score:
            best, score = sentence, s
    return best if score >= GROUNDED else quote


def second_person(ep: Episode) -> bool:
    """The assistant's side is a person (a friend in a two-person chat), not an AI assistant or a role-play
    character: their words can be cards too. The offline engine's rule (offline.assistant_is_person)."""
    from memvault.distill.offline import assistant_is_person

    return assistant_is_person(ep)


def _sides(ep: Episode) -> list[str]:
    return [ep.user or "", ep.assistant or ""] if second_person(ep) else [ep.user or ""]


def _count(repairs: dict[str, int], what: str) -> None:
    repairs[what] = repairs.get(what, 0) + 1


def _ground(p: Proposal, batch: list[Episode], repairs: dict[str, int]) -> Proposal | None:
    """The proposal with its episode set from its quote, or None when the quote is not the user's. A compact
    card (a statement, no quote) is held to its turn by its content words (compact.ground)."""
    if not p.quote:
        if not p.statement:  # a keyed card without words: as before (decide() checks an update's target)
            return p
        from memvault.distill import compact

        return compact.ground(p, batch, _sides, repairs)
    def said_in(i: int) -> str | None:
        return next((t for t in _sides(batch[i]) if grounded(p.quote, t)), None)

    where = list(p.episodes) or list(range(len(batch)))
    hits = [i for i in where if said_in(i) is not None]
    if not hits and p.episodes:  # the right words under the wrong episode name
        hits = [i for i in range(len(batch)) if said_in(i) is not None]
    if not hits:
        _count(repairs, "ungrounded_dropped")
        return None
    text = said_in(hits[0]) or ""
    if "```" in p.quote or not grounded(p.quote, own_words(text)):
        _count(repairs, "quoted_dropped")  # code, someone else's words or narration
        return None
    sentence = _sentence_of(p.quote, text)
    if any(_is_question(t) or _is_unsure(t) for t in (p.quote, sentence)):
        _count(repairs, "question_dropped")  # a question, what-if or hedge: not a statement to keep
        return None
    # The facts protocol has no title or body: the user's own words are the title (as the offline engine's
    # cards), "subject: value" when they are long; the body keeps both.
    if p.body or p.kind == "state" or not p.value:
        return dataclasses.replace(p, episodes=(hits[0],), body=p.body or p.quote)
    said = " ".join(p.quote.split())
    # Words that only repeat the value ("FastAPI") say less than "后端: FastAPI".
    title = said if len(said) <= TITLE_WORDS and _plain(said) != _plain(p.value) else p.title
    return dataclasses.replace(p, episodes=(hits[0],), title=title, body=f"{p.title}\n\n{said}")


def _different_fact(p: Proposal, old: Card) -> bool:
    if old.kind == "state" and p.value and old.value:
        return norm_title(p.value) != norm_title(old.value)
    return is_substitution(p.title, old.title)


def _where(p: Proposal, batch: list[Episode]) -> tuple[int, str, int] | None:
    """(episode, sentence, offset of the quote in the episode's text) of a grounded proposal."""
    from rapidfuzz import fuzz

    if not p.quote or not p.episodes:
        return None
    for text in _sides(batch[p.episodes[0]]):
        if grounded(p.quote, text):
            at = fuzz.partial_ratio_alignment(p.quote, text)
            return p.episodes[0], _sentence_of(p.quote, text), at.dest_start if at else 0
    return None


def _join_reasons(out: list[Proposal], batch: list[Episode], repairs: dict[str, int]) -> list[Proposal]:
    """A reason given with a choice or a change belongs to its card (labelling rule 7): a card of another kind
    that follows a decision or state card in the same sentence ("就用 Playwright 吧，京东的页面是 JS 渲染的",
    "we switched to Zustand, Redux was too much boilerplate") joins that card's body. Two cards of one kind in a
    sentence ("必须大于 3 秒，禁止并发爬") are two statements and stay."""
    spots = [_where(p, batch) for p in out]
    keep = list(out)
    for j, q in enumerate(out):
        if spots[j] is None:
            continue
        for i, p in enumerate(out):
            if i == j or spots[i] is None or keep[i] is None or p.kind not in ("decision", "state"):
                continue
            (ei, si, oi), (ej, sj, oj) = spots[i], spots[j]
            if ei == ej and si == sj and oi < oj and q.kind != p.kind and q.action == "create":
                keep[i] = dataclasses.replace(keep[i], body=f"{keep[i].body}\n\n{q.quote}".strip())
                keep[j] = None
                _count(repairs, "reason_joined")
                break
    return [p for p in keep if p is not None]


def decide(proposals: list[Proposal], related: list[Card], cards: Iterable[Card], batch: list[Episode],
           repairs: dict[str, int]) -> tuple[list[Proposal], list[Card]]:
    """The batch's proposals with their actions decided, and the related cards their targets index (the
    cards a change supersedes are appended)."""
    related = list(related)
    cards = list(cards)
    project = batch[0].project if batch else None
    grounded_ones: list[Proposal] = []
    for p in proposals:
        if p.action != "noop":
            p = _ground(p, batch, repairs)
        if p is not None:
            grounded_ones.append(p)
    out: list[Proposal] = []
    for p in _join_reasons(grounded_ones, batch, repairs):
        if p.action == "noop":
            out.append(p)
            continue
        if p.action == "update" and p.target is not None and _different_fact(p, related[p.target]):
            # Trigger: "update card 0" with another fact (small models overwrite earlier facts this way).
            # Outcome: a new card; apply merges or supersedes it by the same rules as any new card.
            _count(repairs, "update_as_new_fact")
            p = dataclasses.replace(p, action="create", target=None)
        old = p.old if p.old and p.value and norm_title(p.old) != norm_title(p.value) else None
        if p.action == "create" and old:
            holder = find_holder(p.subject, old, cards, project)
            subject = p.subject or (holder.subject if holder is not None and holder.kind == "state" else None) or old
            p = dataclasses.replace(p, kind="state", subject=subject, field=p.field or STATE_FIELD)
            if holder is not None:
                if holder not in related:
                    related.append(holder)
                p = dataclasses.replace(p, action="supersede", target=related.index(holder))
        elif p.kind == "state" and not p.field:
            p = dataclasses.replace(p, field=STATE_FIELD)
        out.append(p)
    return out, related
