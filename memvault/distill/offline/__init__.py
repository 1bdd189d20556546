"""The offline distill engine (issue 10): episodes -> card proposals with no network, from what the user states
outright (extract.py, cue tables in cues.py). Deterministic: the same episodes and cards give the same proposals.

distill/service.py calls `plan` to cut the pending episodes into batches and `propose` for each batch; the
proposals then take the same validate -> redact -> merge/supersede -> commit path as a model's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from memvault.distill.cards import CARDS_PER_EPISODE, ENTITIES_MAX, ENTITY_MAX, KEY_MAX, TAGS_MAX, TITLE_MAX
from memvault.distill.offline.cues import KNOWN_KINDS
from memvault.distill.offline import anylang, canon, dates, personal
from memvault.distill.offline.entities import entities_of
from memvault.distill.merge import CJK_RUN, find_holder
from memvault.distill.offline.extract import Statement, _disqualified as disqualified, _is_zh, statements
from memvault.model import Card, Episode

ENGINE = "offline"
CONFIDENCE = "extracted"
STATE_FIELD = "current"
LIFE_TAG = "life"  # views/context.py pins no card with it
BATCH = 64  # episodes per journal line; a batch also ends before a state change (see plan)


# A log whose assistant side is a person is one where people talk to each other: both sides are named, nothing
# calls a tool, and the format is one people's chats come in (not an AI tool's session or a role-play chat,
# whose "assistant" is a model or a character card).
PERSON_FORMATS = frozenset({"jsonl", "text", "openai"})


def assistant_is_person(ep: Episode) -> bool:
    """Both sides named (or a turn that opens with the assistant's side alone), no tool, a people's format."""
    names = ep.speakers or {}
    return bool((names.get("user") or not (ep.user or "").strip()) and names.get("assistant") and not ep.tools
                and (ep.source or {}).get("kind") in PERSON_FORMATS)


def _lone_person(ep: Episode) -> bool:
    """A named person's turn with no reply (a chat between people whose session ends on it)."""
    names = ep.speakers or {}
    return bool(names.get("user") and not (ep.assistant or "").strip() and not ep.tools
                and (ep.source or {}).get("kind") in PERSON_FORMATS)


def voices(ep: Episode) -> list[tuple[str, str | None, str]]:
    """(side, speaker's name or None, text) for each side of the turn spoken by a person: the user always,
    the assistant when it is a person too (assistant_is_person)."""
    names = ep.speakers or {}
    out = [("user", (names.get("user") or [None])[0], ep.user or "")]
    if assistant_is_person(ep):
        out.append(("assistant", names["assistant"][0], ep.assistant or ""))
    return out


# What plan() extracted from each text, for the propose() calls that follow on the same turns: a turn is read
# once, not once to cut the batches and again to make its cards. Cleared by the next plan(), so it holds the
# statements of one distill run's pending turns. Statements are frozen, the tuples are shared safely.
_planned: dict[str, tuple[Statement, ...]] = {}


def _statements(text: str) -> tuple[Statement, ...]:
    found = _planned.get(text)
    return found if found is not None else _extract(text)


def _extract(text: str) -> tuple[Statement, ...]:
    """The cue tables' statements, or in a language they do not read, what anylang finds by signs that hold
    in any language."""
    if anylang.unread(text):  # the cue tables' words would be false friends there ("Note pour plus tard")
        found = [Statement(kind, clause, 1, entities_of(clause)) if change is None
                 else Statement("state", clause, 1, entities_of(clause), *change)
                 for kind, clause in anylang.statements(text) for change in [anylang.change_of(clause)]]
    else:
        found = statements(text)
    return tuple(st for st in found if not _only_redacted(st.text))


_REDACTED = re.compile(r"\[REDACTED:[a-z0-9-]{1,64}\]|\[email\]")
_BARE = re.compile(r"(?:是|为|叫|:|：|=|\bis|\bare|\bwas|\bwere|\bto|\bat)$", re.IGNORECASE)


def _only_redacted(text: str) -> bool:
    """A statement whose value was a secret or an address redaction took out ("我的邮箱是 [email]"): what is
    left says nothing, so no card (the turn stays searchable)."""
    if not _REDACTED.search(text):
        return False
    rest = _REDACTED.sub("", text).strip(" .。!！,，`'\"")
    return not rest or bool(_BARE.search(rest))


def episode_statements(ep: Episode) -> list[Statement]:
    return [st for _side, _name, text in voices(ep) for st in _statements(text)]


def plan(episodes: list[Episode], size: int = BATCH) -> list[list[Episode]]:
    """Consecutive batches of one project each, at most `size` episodes. A batch ends before an episode that
    states a change, so the card holding the old value is already written when the change looks for it."""
    out: list[list[Episode]] = []
    cur: list[Episode] = []
    _planned.clear()
    for ep in episodes:
        for _side, _name, text in voices(ep):
            if text not in _planned:
                _planned[text] = _extract(text)
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


def find_target(st: Statement, cards: Iterable[Card], project: str) -> Card | None:
    """The active card of the project (or a personal one) that held the old value of a state change
    (merge.find_holder: one whose title says the old value; same-subject state card first, then the newest)."""
    return find_holder(st.subject, st.old, cards, project)


def propose(batch: list[Episode], cards: Mapping[str, Card],
            before: Episode | None = None) -> tuple[dict, list[Card]]:
    """The batch's cards as a model would answer them (`{"cards": [...]}`, validated by the caller with
    cards.validate_output like any reply), and the existing cards their `target` indexes point into. `before`:
    the turn before the batch's first in its session (the question that turn answers may stand there)."""
    proposals: list[dict] = []
    related: list[Card] = []
    project = batch[0].project
    for i, ep in enumerate(batch):
        mine: list[dict] = []
        people = assistant_is_person(ep) or _lone_person(ep)
        for side, name, text in voices(ep):
            if name and people and not _is_zh(text):
                text = canon.with_subject(text)
            asked = _asked(batch, i, side, before)
            told = _told(text, name, ep.at, bool(asked)) if people else ""
            said = [_proposal(st, ep, i, name, asked, cards, project, related, told) for st in _statements(text)]
            if name and people:
                said = _one_memory(said) or _told_card(told, i, name)
                for card in said:  # what a person tells of their life: recalled when asked, never pinned
                    card["tags"] = list(dict.fromkeys([*card.get("tags", ()), LIFE_TAG]))[:TAGS_MAX]
            mine.extend(said)
        proposals.extend(mine[:CARDS_PER_EPISODE])
    return {"cards": proposals}, related


_PHOTO_ONLY = re.compile(r"^\S+(?: \S+)? shared a photo of ")


# Cheer and encouragement said to the other person: never a memory ("Always here to cheer you on").
_CHEER = re.compile(r"\b(?:here (?:for|to) (?:you|help|listen|cheer)|cheer(?:ing)? (?:you|u) on|proud of (?:you|u)|"
                    r"(?:you|u)(?:'ve| have) got this|you can do it|rooting for (?:you|u)|keep (?:it|going|pushing)|"
                    r"(?:won't|will not|never) (?:give up|quit)|(?:doing|do) (?:my|his|her|their) best|"
                    # thanks and support for the other person ("Maria believes in your power", "Gina will be
                    # right by your side", "Jon is grateful for your help", "Keep Maria posted on how your…")
                    r"believes? in (?:you|your)|by your side|your (?:help|support|kindness|advice|encouragement)|"
                    r"keep (?:\w+ )?posted|(?:grateful|thankful) for (?:you|your)|^for (?:letting|being|sharing|all))\b",
                    re.IGNORECASE)


# What heralds news without telling it ("Some pretty cool stuff happened since we talked", "Something not so great
# happened"): a card's title is the news that follows when there is any (the body keeps the whole message).
_ANNOUNCE = re.compile(r"^(?:[^:]{1,40}: )?(?:something|some (?:\w+ ){0,2}(?:stuff|things|news)|a lot(?:'s)?|lots|"
                       r"so much)\b(?:\s+\w+){0,4}?\s+(?:happened|has happened|has been going on|been going on|"
                       r"going on|to share|to tell)\b", re.IGNORECASE)


# A scene of the moment the speaker writes in ("Biscuit is staring at me, it's walk time", "my cat is sleeping on my
# keyboard"): what happens as they type, not a fact of their life ("I'm looking for a job" is not one).
_SCENE = re.compile(r"\b(?:is|are|am|'s|'re|'m)\s+(?:just\s+|now\s+|still\s+|currently\s+)?(?:staring|sitting|lying|"
                    r"sleeping|napping|snoring|barking|meowing|begging|whining|pawing|scratching|knocking|yelling)\b|"
                    r"\bit(?:'s| is) (?:\w+ )?time\b(?! (?:for|to|of|in|since)\b)", re.IGNORECASE)


# Said to or of the other person ("Melanie loves how you tell your stories"): about them, not the speaker.
_TO_YOU = canon.YOU


# Showing a photo ("Here's a photo of John in this pose", "Check out this pic"): what it shows is no statement.
_SHOWING = re.compile(r"^(?:\w+: )?(?:here's|here is|check (?:out )?this|look at this|take a look at)\b.{0,40}?"
                      r"\b(?:photo|pic|picture|shot|snap|pics|photos)\b", re.IGNORECASE)


# A judgement of something just shown or said ("That book is really something", "Family time is great",
# "Moments like that make Tim love sports"): about the moment, not a fact of the speaker's life.
_JUDGED = re.compile(r"^(?:\w+: )?(?:that|this|those|these|it|moments like (?:that|this|these)|\w+ time)\b(?:'s)?"
                     r"(?:\s+\w+){0,3}?\s+(?:is|was|are|were|'s|makes?|made|sounds?|looks?)\b", re.IGNORECASE)


def _one_memory(said: list[dict]) -> list[dict]:
    """What a named speaker says in one message, as one card (its body holds the whole of what they told): the
    first statement's title; a photo shown with nothing said is no memory; a state change stays a card of its
    own (it supersedes)."""
    keep = [c for c in said if c["kind"] == "state"]
    said = sorted(said, key=lambda c: bool(_ANNOUNCE.search(c["title"])))  # the news first, its herald last
    told = [c for c in said if c["kind"] != "state" and not _PHOTO_ONLY.match(c["title"])
            and not _CHEER.search(c["title"]) and not _TO_YOU.search(c["title"])
            and not _SHOWING.search(c["title"]) and not _JUDGED.search(c["title"]) and not _SCENE.search(c["title"])
            and _substance(c["body"], c["entities"][0] if c["entities"] else "") >= MIN_WORDS]
    return keep + told[:1]


MIN_WORDS = 2  # LoCoMo 0-2 gain little above 2 (F1 .565 -> .570 at 6) and the labelled people's set loses short facts


def _substance(text: str, name: str = "") -> int:
    """Words of substance in a card's text (three letters or more, not the light ones; in Chinese, a word for
    each three characters, the speaker's name left out), its question left out."""
    text = text.split("\n\n(")[0]
    cjk = sum(len(run) // 3 for run in CJK_RUN.findall(text.replace(name, " ") if name else text))
    return cjk + sum(1 for w in _CONTENT.findall(CJK_RUN.sub(" ", text)) if w.lower() not in _LIGHT)




FALLBACK_WORDS = 4
_LIGHT = frozenset("""
the and that this with have has had was were are for you your just but not all its it's they them their there
what when been from will would can could some about really much very also too like get got one more than so
then out now here know think thing things lot feel felt make made time great good awesome amazing glad happy
""".split())
_CONTENT = re.compile(r"[^\W\d_]{3,}|\d+")
_SAID_ON = re.compile(r"\b(?:(?:on|in) )?(?:(?:the week of )?\d{1,2} )?(?:January|February|March|April|May|June|July|"
                      r"August|September|October|November|December) \d{4}\b")


_YOU_FIRST = re.compile(r"\b(?:you|you're|you've|you'll|u)\b", re.IGNORECASE)  # "stoked for you", not "your recipe"
_WISH = re.compile(r"\b(?:would love to|someday|some day|one day)\b")
_REPORTED = re.compile(r"\b(?:says|said|told|heard|reads somewhere)\b")


def _told_words(text: str, name: str) -> int:
    """Words of substance a told message holds as the fallback counts them (a CJK run is one word), without the
    speaker's name and the day it was said, made absolute ("so tired today" -> "so tired on 10 March 2026": the
    date is no substance of its own)."""
    return sum(1 for w in _CONTENT.findall(_SAID_ON.sub(" ", text)) if w != name and w.lower() not in _LIGHT)


def _told_card(told: str, i: int, name: str) -> list[dict]:
    """A message of a named speaker in which no cue found a statement but which tells about the speaker (their
    name stands in it once the first person is resolved) and enough (FALLBACK_WORDS words of substance):
    one card of what it tells."""
    if _told_words(told, name) < FALLBACK_WORDS or name not in told:
        return []
    for title in canon.sentences(told):  # the first sentence that tells of the speaker
        title = title.rstrip(".!")
        if name in title and _told_words(title, name) >= 2 and not (
                canon.OF_IT.match(title) or _REPORTED.search(title) or _WISH.search(title) or _JUDGED.search(title)
                or _SHOWING.search(title) or _CHEER.search(title) or _SCENE.search(title)
                or _YOU_FIRST.search(re.split(r"[,;:]|\s[-–—]+\s", title)[0])):
            return [_card("create", "event", title, _cut(told, 900), (name,), i)]
    return []  # the speaker is not the subject, or says how they feel, wish or heard: no memory


def nothing(batch: list[Episode], data: dict) -> dict[str, int]:
    """How many of the batch's episodes gave no card, and why: every side in a language the cue tables do not
    read (anylang found nothing either), or no statement found."""
    used = {int(e[1:]) for c in data["cards"] for e in c.get("episodes", ()) if e[1:].isdigit()}
    out = {"unread_language": 0, "no_statement": 0}
    for i, ep in enumerate(batch):
        if i in used:
            continue
        texts = [t for _side, _name, t in voices(ep) if t.strip()]
        out["unread_language" if texts and all(anylang.unreadable(t) for t in texts) else "no_statement"] += 1
    return out


def _asked(batch: list[Episode], i: int, side: str, before: Episode | None = None) -> str | None:
    """The question a side answers: the user's in the same turn for the assistant, the assistant's last words
    before for the user (same session), when they end in one. A reply ("Watching the meteor shower with the
    kids") often only makes sense with it ("What's your best camping memory?")."""
    ep = batch[i]
    if side == "assistant":
        other, names = ep.user, (ep.speakers or {}).get("user")
    elif (prev := batch[i - 1] if i else before) is not None and prev.session == ep.session:
        other, names = prev.assistant, (prev.speakers or {}).get("assistant")
    else:
        return None
    q = personal.question_in(other)
    return f"{(names or ['Asked'])[0]} asked: {_cut(q, 200)}" if q else None


def _told(text: str, name: str | None, at: str | None, answering: bool = False) -> str:
    """What a named speaker tells in the whole message, in a memory's form: the body of each of its cards, so a
    card keeps what its clause is about ("We explored nature, roasted marshmallows…" after "Melanie went camping
    in the mountains on 1 May 2023")."""
    if not name:
        return ""
    zh = _is_zh(text)
    return " ".join(canon.canonical(s, name, at, _is_zh(s)) for s in canon.told(text, zh, answering)
                    if not disqualified(s))


_ENDS = (".", "!", "?", "。", "！", "？", "…")


def _proposal(st: Statement, ep: Episode, i: int, name: str | None, asked: str | None,
              cards: Mapping[str, Card], project: str, related: list[Card], told: str = "") -> dict:
    who = name or "The user"
    if name:  # the body holds the statement itself (its sentence may have been cut from the message: "…, huh?")
        said = canon.canonical(st.text, name, ep.at, _is_zh(st.text), future=st.plan)
        told = told if said in told else f"{said}{'' if said.endswith(_ENDS) else '.'} {told}".strip() if told \
            else said
    body = (_cut(told, 900) if told else f"{who} said: {_cut(st.text, 600)}") + (f"\n\n({asked})" if asked else "")
    entities = st.entities
    if name and name.casefold() not in {e.casefold() for e in entities}:
        entities = (name, *entities)
    if st.kind == "state":
        target = find_target(st, cards.values(), project)
        subject = st.subject or (target.subject if target is not None and target.kind == "state"
                                 else None) or st.old or ""
        title = f"{subject}: {st.new} (was {st.old})" if subject != st.old else f"{st.new} (was {st.old})"
        action, index = "create", None
        if target is not None:
            if target not in related:
                related.append(target)
            action, index = "supersede", related.index(target)
        card = _card(action, "state", title, body, entities, i)
        card.update(subject=_cut(subject, KEY_MAX), field=STATE_FIELD, value=_cut(st.new or "", KEY_MAX))
        if index is not None:
            card["target"] = index
        return card
    caption = personal.photo_caption(st.text) if st.kind == "event" else None
    if caption and personal.only_photo(st.text):
        title = f"{name or 'The user'} shared a photo of {caption}"
    elif name:
        title = canon.canonical(st.text, name, ep.at, _is_zh(st.text), future=st.plan)
        if name not in title:
            title = f"{name}: {title}"
    else:  # the day a relative date names, as a person's cards say it ("上周压测发现…" is read months later)
        title = canon.absolute_dates(st.text, ep.at, st.plan)
        if title[:1].islower() and st.text[:1].isupper():  # "Yesterday we…" -> "On 1 April 2026 we…"
            title = title[0].upper() + title[1:]
    card = _card("create", st.kind, title, body, entities, i)
    if st.kind == "event":  # what happened or will, on the day its words say (a decision holds from the turn)
        card["valid_from"] = dates.when(st.text, ep.at, future=st.plan)
    return card


_KIND_OF: dict[str, tuple[str, ...]] = {}
for _words, _names in KNOWN_KINDS.items():
    for _name in _names.split():
        _KIND_OF[_name] = _KIND_OF.get(_name, ()) + _words


def _card(action: str, kind: str, title: str, body: str, entities: tuple[str, ...], i: int) -> dict:
    tags = list(dict.fromkeys(w for e in entities for w in _KIND_OF.get(e.casefold(), ())))[:TAGS_MAX]
    return {"action": action, "kind": kind, "title": _cut(title, TITLE_MAX), "body": body,
            "entities": [_cut(e, ENTITY_MAX) for e in entities[:ENTITIES_MAX]], "valid_from": None,
            "confidence": CONFIDENCE, "episodes": [f"e{i}"], **({"tags": tags} if tags else {})}
