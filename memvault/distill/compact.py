"""The compact reply of prompts/distill.md (issue 33): a card is a list `["e0", "kind", "statement"]` (a change adds
subject, new value and old value), not an object with named keys. A small model writes a third of the tokens
for the same fact, and the statement is already the card a reader keeps: the speaker's name as subject,
pronouns resolved.

Here, with no quote to check, a statement is held to the turn it cites: at least half of its content words
(stop words, the speakers' names, date words and the subject's first word left out) must be words of what a person said in that turn
(its user side, and the other side when that is a person too). A date the statement names relatively ("last
Saturday") is resolved against the turn's day by the offline engine's date rules and written after it.
Pure: no files, no model.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from typing import Any

from memvault.model import Episode

GROUNDED_SHARE = 0.5  # of a statement's content words found in its turn
_DATE_WORDS = frozenset(
    "today tonight yesterday tomorrow morning evening afternoon night week weekend month year day ago last next "
    "this recent recently earlier later soon upcom past previous current "
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "monday tuesday wednesday thursday friday saturday sunday".split())
_DROP = re.compile(r"[\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CJK_FUNCTION = frozenset("的了是在我你他她它们这那个也就都和与及吧呢吗啊")


def _plain(text: str) -> str:
    return _DROP.sub("", unicodedata.normalize("NFKC", text).casefold())


def from_list(item: list[Any]) -> dict[str, Any]:
    """`["e0", "kind", "statement", subject?, value?, old?]` as the keyed card validate_output reads."""
    keys = ("episode", "kind", "title", "subject", "value", "old")
    out = {k: v for k, v in zip(keys, item)}
    if out.get("kind") == "state" and out.get("subject") and not out.get("value"):
        out["value"] = out.get("title")
    return out


def speaker_names(ep: Episode) -> list[str]:
    names: list[str] = []
    for side in ("user", "assistant"):
        for name in (ep.speakers or {}).get(side) or []:
            if name and name not in names:
                names.append(str(name))
    return names


def content_words(text: str, names: list[str]) -> list[str]:
    """The statement's words that carry its content (search's tokens: stemmed, stop words out)."""
    from memvault.search import tokenize

    for name in names:
        text = re.sub(re.escape(name), " ", text, flags=re.I)
    words = []
    for tok in tokenize.tokens(text):
        if tok in _DATE_WORDS or tok.isdigit() or tok in ("user", "users"):
            continue
        # CJK: characters, not bigrams (a paraphrase reorders words: "数据库改用 X" for "改用 X").
        for unit in ([ch for ch in tok if _CJK.match(ch)] if _CJK.search(tok) else [tok]):
            if unit not in words and unit not in _CJK_FUNCTION:
                words.append(unit)
    return words


def grounded_in(statement: str, sides: list[str], names: list[str]) -> tuple[bool, int]:
    """(whether the statement rests on these texts, index of the side it rests on most)."""
    from memvault.search import tokenize

    words = content_words(statement, names)
    if len(words) >= 3 and not _CJK.match(words[0]):
        words = words[1:]  # the subject: a name the turn need not say ("Alice", "The user's sister")
    if not words:
        return False, 0
    best, best_side = 0, 0
    for i, text in enumerate(sides):
        have = set(tokenize.tokens(text)) | set(_CJK.findall(text))
        raw = [_plain(w) for w in re.findall(r"\w+", text)]
        have.update(a + b for a, b in zip(raw, raw[1:]))  # "DoorDash" said as "Door Dash"
        hit = sum(1 for w in words if w in have)
        if hit > best:
            best, best_side = hit, i
    return best >= max(1, GROUNDED_SHARE * len(words)), best_side


def dated(title: str, at: str) -> tuple[str, str | None]:
    """(title, valid_from): a date the statement names, relative ones counted from the turn's day `at`; a
    relative one is written after the statement in brackets, so the card says when without its turn."""
    from memvault.distill.offline import dates

    day = dates.when(title, at)
    if day is None:
        return title, None
    # Relative when the same words name another day from another turn day.
    other = dates.when(title, f"{int(at[:4]) - 3}{at[4:]}")
    if other != day and day not in title:
        title = f"{title.rstrip()} ({day})"
    return title, day


# The talk itself, not a fact of a person: "Joanna and Nate discuss the movie", "Nate shares a photo of a dvd",
# "Joanna thanks Nate". What they discussed is the fact; a model that names the act says nothing it keeps.
_META = re.compile(r"^\W*(?:(?:also|then|just|again|often|both|briefly|happily)\s+)?(?:discuss|talk|chat|converse|share[sd]?\s+(?:a\s+|an\s+|the\s+)?"
                   r"(?:photo|picture|image|pic)|ask|tell|thank|congratulat|encourag|greet|agree|compliment|"
                   r"cheer|reassur|meet\s+for\s+the\s+first|wants?\s+to\s+know|wonder)\w*\b", re.I)
# A mood or an act of the moment, not a fact to keep: "Maya is tired today", "Maya is walking her dog".
_MOMENT = re.compile(r"^\W*(?:The user|[A-Z][\w'-]*)\s+(?:is|was|feels|felt|seems|am)\s+(?:so\s+|very\s+|really\s+|"
                     r"a bit\s+|pretty\s+|just\s+)?(?:tired|exhausted|happy|glad|excited|sad|stressed|busy|bored|"
                     r"sleepy|hungry|nervous|worried|thrilled|grateful|thankful|sorry|fine|good|great|okay|ok|relieved|"
                     r"curious|talking|walking|doing|heading|going\s+to\s+bed|back)\b", re.I)
# A negated plan or a choice not made yet: "The mini PC will not install anything yet".
_NOT_YET = re.compile(r"\bnot\b.*\byet\b|\bnot sure\b|\bwill not\b|\bwon't\b|还没|还不", re.I)


def is_meta(statement: str, names: list[str]) -> bool:
    """The statement is about the conversation (both speakers as subject, or a verb of talking right after the
    subject) or a mood of the moment, not a fact a person states."""
    flat = " ".join(statement.split())
    if len(names) >= 2 and re.match(rf"^\W*(?:{re.escape(names[0])}|{re.escape(names[1])})\s+(?:and|&)\s+"
                                     rf"(?:{re.escape(names[0])}|{re.escape(names[1])})\b", flat, re.I):
        return True
    if _MOMENT.match(flat) and len(flat.split()) <= 8:
        return True
    head = re.match(r"^\W*(?:The user|[A-Z][\w'-]*)(?:'s)?\s+(.*)$", flat)
    return bool(head and _META.match(head.group(1)) and _META.match(head.group(1)).end() <= 40)


def sentence_of(statement: str, text: str, names: list[str]) -> str:
    """The sentence of `text` that shares the most content words with the statement (the card's body)."""
    from memvault.search import tokenize

    words = set(content_words(statement, names))
    best, score = "", -1
    for m in re.finditer(r"[^.!?。！？\n]+[.!?。！？]*", text):
        s = m.group(0).strip()
        n = len(words & set(tokenize.tokens(s)))
        if s and n > score:
            best, score = s, n
    return best


# A change says so: a state card whose statement and sentence have none of these is a fact ("Jonah is a loan
# officer at Harbor Bank" written as a state with three made-up slots).
_CHANGE = re.compile(r"\b(?:now|instead|switch\w*|mov\w*|chang\w*|replac\w*|no longer|any ?more|new|became|"
                     r"become|started|quit|left|upgrad\w*|migrat\w*)\b|from\s.+\sto\s|改|换|不再|不用|搬|变成|升级", re.I)


_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|my|me|mine|we|our)\b|我")


def _speaker_fixed(title: str, who: str | None, names: list[str], said: str,
                   repairs: dict[str, int]) -> str:
    """"Maya quit Harbor Bank" from Jonah's "I quit Harbor Bank": the other speaker's name as the subject of
    what this speaker says of themselves becomes this speaker's name (small models mix up two speakers)."""
    if not who or not _FIRST_PERSON.search(said):
        return title
    for other in names:
        if other != who and re.match(rf"{re.escape(other)}\b(?!'s\b)", title):
            repairs["speaker_fixed"] = repairs.get("speaker_fixed", 0) + 1
            return who + title[len(other):]
    return title


def ground(p, batch: list[Episode], sides_of, repairs: dict[str, int]):
    """A quote-less proposal (the compact reply) checked against its turn, dated and given a body; None when
    its statement does not rest on what a person said in the turn it cites (or in any turn of the batch)."""
    from memvault.distill.offline.entities import entities_of

    where = list(p.episodes) or list(range(len(batch)))
    hits = []
    for i in where + [j for j in range(len(batch)) if j not in where]:
        names = speaker_names(batch[i])
        ok, side = grounded_in(p.title, sides_of(batch[i]), names)
        if ok:
            hits.append((i, side, names))
            break
    if hits and is_meta(p.title, hits[0][2]):
        repairs["meta_dropped"] = repairs.get("meta_dropped", 0) + 1
        return None
    if not hits or p.title.rstrip().endswith(("?", "？")):
        repairs["ungrounded_dropped"] = repairs.get("ungrounded_dropped", 0) + 1
        return None
    i, side, names = hits[0]
    ep = batch[i]
    from memvault.distill.decide import _is_question, _is_unsure

    said = sentence_of(p.title, sides_of(ep)[side], names)
    if _is_unsure(p.title) or _NOT_YET.search(p.title) or (said and (_is_question(said) or _is_unsure(said))):
        # A question, a what-if or a hedge in the turn ("Should Jellyfin go on the NAS?"), whatever the model
        # made of it: not a statement to keep.
        repairs["question_dropped"] = repairs.get("question_dropped", 0) + 1
        return None
    who = ((ep.speakers or {}).get("user" if side == 0 else "assistant") or [None])[0]
    title, day = dated(_speaker_fixed(p.title, who, names, said, repairs), ep.at)
    body = p.body or (f"{who}: {said}" if who and said else said)
    entities = p.entities or tuple(e for e in entities_of(title) if e not in names)[:10]
    changes = {}
    if p.old and p.value and re.search(rf"from\s+{re.escape(p.value)}\s+to\s+{re.escape(p.old)}|"
                                       rf"{re.escape(p.old)}\s+instead\s+of\s+{re.escape(p.value)}", title, re.I):
        changes = {"value": p.old, "old": p.value}  # the model swapped new and old; the statement says which
        repairs["kind_fixed"] = repairs.get("kind_fixed", 0) + 1
    elif p.kind == "state" and not _CHANGE.search(f"{title} {said}"):
        changes = {"kind": "fact", "old": None}
        repairs["kind_fixed"] = repairs.get("kind_fixed", 0) + 1
    elif p.old and _plain(p.old) not in _plain(" ".join(sides_of(ep))):
        # Trigger: an "old value" the turn never names (small models fill every slot of the list). Outcome: no
        # change, so no card of another fact is superseded; the statement stays a fact.
        changes = {"old": None, **({"kind": "fact"} if p.kind == "state" else {})}
        repairs["old_dropped"] = repairs.get("old_dropped", 0) + 1
    return dataclasses.replace(p, episodes=(i,), title=title, body=body, valid_from=p.valid_from or day,
                               entities=entities, **changes)
