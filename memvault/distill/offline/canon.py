"""A statement in the canonical form of a memory (issue 32): the speaker's name as the subject, the first person
resolved, relative dates made absolute. "I went to a LGBTQ support group yesterday" said by Caroline on
2023-05-08 reads "Caroline went to a LGBTQ support group on 7 May 2023". Pure, deterministic, English and Chinese.

Only what a named speaker says is rewritten (a two-person chat, a role-play character): an AI chat's user has no
name to put in, and there the project is the subject already ("the deploy target is Hetzner").
"""

from __future__ import annotations

import re
from datetime import date

from memvault.distill.offline import dates, personal

_I = re.IGNORECASE
_MONTH_NAMES = ("January February March April May June July August September October November "
                "December").split()

# The first person and what follows it, English. Auxiliaries take the third person; "I" + a verb in the
# present gets its -s ("I love" -> "Caroline loves"); a past form or a modal stays as it is.
_AUX = {"am": "is", "'m": "is", "have": "has", "'ve": "has", "do": "does", "don't": "doesn't", "was": "was",
        "'ll": "will", "'d": "would", "haven't": "hasn't", "ain't": "isn't"}
_KEEP = frozenset("""
will would can could should might must may shall did didn't won't wouldn't can't couldn't shouldn't had hadn't
was wasn't used also just really still never always even only actually finally recently already usually often
sometimes totally definitely absolutely truly especially currently now then once first
""".split())
# Verbs a person uses of themselves in the present; any other word after "I" is left as it is (a past form:
# "I went", "I ran"; an adverb), so a rare verb reads "Caroline paint" rather than a past tense turned wrong.
_PRESENT = frozenset("""
love like enjoy hate prefer adore dislike want need hope wish think feel know believe remember miss work live
teach study play run go write read paint draw cook bake sing dance swim hike travel volunteer own have make take
plan try keep spend watch listen collect practice practise train coach lead manage mentor help care support
visit attend use drive ride wear eat drink find get see mean struggle look seem stay usually always often
""".split())
_PRONOUN = re.compile(r"\b(?:I(?P<clitic>'m|'ve|'ll|'d)|I\s+(?P<aux>am|have|do|don't|haven't|ain't)\b|I\b"
                      r"(?P<adv>\s+(?:usually|always|often|also|really|still|just|now|sometimes|never|too))?"
                      r"(?P<verb>\s+[a-z]+)?|(?P<my>[Mm]y|[Mm]ine|[Mm]yself|[Mm]e)\b)")
_VERB_ES = re.compile(r"(?:s|sh|ch|x|z|o)$")
_VERB_IES = re.compile(r"[^aeiou]y$")


def _third(verb: str) -> str:
    if verb in _KEEP or verb not in _PRESENT:
        return verb
    if verb == "have":
        return "has"
    if _VERB_IES.search(verb):
        return verb[:-1] + "ies"
    return verb + ("es" if _VERB_ES.search(verb) else "s")


def _speaker_en(text: str, name: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group("clitic"):
            return f"{name} {_AUX[m.group('clitic')]}"
        if m.group("aux"):
            return f"{name} {_AUX[m.group('aux')]}"
        if m.group("my"):
            word = m.group("my").lower()
            return {"my": f"{name}'s", "mine": f"{name}'s", "myself": name, "me": name}[word]
        verb = m.group("verb")
        if verb is None:
            return name + (m.group("adv") or "")
        return f"{name}{m.group('adv') or ''} {_third(verb.strip())}"

    return _PRONOUN.sub(sub, text)


_ZH_ME = re.compile(r"我(?!们)")


def speaker_as_subject(text: str, name: str | None, zh: bool) -> str:
    """The first person singular replaced by the speaker's name ("we" stays: it is the speaker and others)."""
    if not name:
        return text
    if zh:
        return _ZH_ME.sub(lambda m: _spaced(name, m.string, m.start(), m.end()), text)
    return _speaker_en(text, name)


_CJK_OR_DIGIT = re.compile(r"[\u3400-\u9fff\uf900-\ufaff0-9]")


def _spaced(name: str, text: str, start: int, end: int) -> str:
    """A Latin name set in Chinese text with a space on each side that touches a Chinese character or a digit
    ("Mel 2023年5月17日去南京", not "Mel2023年5月17日去南京"); a Chinese name as it is."""
    if not name[:1].isascii() and not name[-1:].isascii():
        return name
    before = " " if start and name[:1].isascii() and _CJK_OR_DIGIT.match(text[start - 1]) else ""
    after = " " if name[-1:].isascii() and end < len(text) and _CJK_OR_DIGIT.match(text[end]) else ""
    return f"{before}{name}{after}"


def _phrase(day: date, name: str, zh: bool) -> str:
    if zh:  # as the English below: a year names no month ("明年" -> "2024年"), a week is the week of its Monday
        return (f"{day.year}年" if name == "year" else f"{day.year}年{day.month}月" if name == "month"
                else f"{day.year}年{day.month}月{day.day}日" + ("那一周" if name == "week" else ""))
    month = _MONTH_NAMES[day.month - 1]
    if name == "month":
        return f"in {month} {day.year}"
    if name == "year":
        return f"in {day.year}"
    if name == "week":
        return f"in the week of {day.day} {month} {day.year}"
    return f"on {day.day} {month} {day.year}"


_RELATIVE = {"day_rel", "zh_day", "weekday", "weekend", "zh_weekday", "zh_weekend", "ago", "zh_ago", "span",
             "zh_span", "en_my", "zh_month"}


def absolute_dates(text: str, at: str | None, future: bool = False) -> str:
    """The text with its first relative date expression ("yesterday", "last Friday", "上周") replaced by the day
    it names ("on 7 May 2023", "2023年5月7日"), resolved as dates.when resolves it; unchanged without one."""
    found = dates.first_expression(text, at, future)
    if found is None:
        return text
    name, match, day = found
    if name not in _RELATIVE:
        return text
    unit = (match.groupdict().get("unit") or match.group(0)).lower()
    grain = ("year" if ("year" in unit or "年" in unit and "月" not in match.group(0)) and name in ("span", "ago", "zh_span")
             else "month" if "month" in unit or name in ("en_my", "zh_month") or unit.endswith(("月", "月份"))
             else "week" if ("week" in unit or "周" in unit or "星期" in unit) and name in ("span", "zh_span")
             else "day")
    zh = name.startswith("zh_")
    start, end = match.span()
    lead = text[:start]
    if re.search(r"(?:每|每个|\bevery|\beach)\s*$", lead, _I) or re.match(r"每", match.group(0)):
        return text  # a habit ("every Wednesday", "每周三") names no day
    if not zh:
        lead = re.sub(r"\b(?:on|in|during|over|at)\s+$", "", lead, flags=_I)  # "on last Friday" reads once
        if _NAMED_TIME.match(text[end:]) and (not lead.strip(" \"'(") or re.search(r"[.!?]\s+$", lead)):
            # the time is the subject ("Last week was wild"): a name for it, not "In the week of … was wild"
            said = "the weekend of" + _phrase(day, "day", zh)[2:] if name == "weekend" else _phrase(day, grain, zh)
            said = re.sub(r"^(?:in|on) ", "", said)
            return lead + said[0].upper() + said[1:] + text[end:]
    said = _phrase(day, grain, zh)
    if re.search(r"[.!?]\s+$", lead):  # a sentence's first words ("Hi! Last week I…" -> "Hi! In the week of…")
        said = said[0].upper() + said[1:]
    return lead + said + text[end:]


_NAMED_TIME = re.compile(r"\s*(?:was|is|has been|had been|'s been|will be|were)\b", _I)


_CAP = re.compile(r"^[a-z]")


def canonical(text: str, name: str | None, at: str | None, zh: bool, future: bool = False) -> str:
    """A statement in a memory's form: the named speaker as subject, relative dates absolute, a capital first."""
    out = absolute_dates(speaker_as_subject(text, name, zh), at, future)
    return _CAP.sub(lambda m: m.group(0).upper(), out.strip())


OF_IT = re.compile(r"^(?:it|that)(?:'s| is| was| has)\b", _I)
_ME = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|myself)\b", _I)
YOU = re.compile(r"\b(?:you|your|you're|you've|yours)\b", _I)  # said to the other person
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？!?；;])|\n+")


# A sentence that drops its "I" ("Been rehearsing hard", "Gonna volunteer at shelters next month", "Started
# to learn marketing tools today"), as people do in chat: the subject is put back, so it reads as what it is.
_DROPPED = [
    (re.compile(r"^(?=(?:been|gonna be) (?:a|an|the|such|so long|too long|ages|hectic|crazy|tough|rough|hard|"
                r"wild|nuts)\b)", _I), "It's "),
    (re.compile(r"^been\b", _I), "I've been"),
    (re.compile(r"^(?=(?:gonna|working on|heading|planning|thinking about|looking into|researching|"
                r"rehearsing|getting ready)\b)", _I), "I'm "),
    (re.compile(r"^(?=(?:just )?(?:started|finished|went|bought|joined|signed up|moved|adopted|visited|tried|"
                r"took|got back|spent|picked up|ran|met)\b)", _I), "I "),
]


def with_subject(text: str) -> str:
    """English sentences that drop their first person, with the "I" put back; any other text as it is."""
    def fix(sentence: str) -> str:
        for pat, subject in _DROPPED:
            m = pat.match(sentence)
            if m:
                rest = sentence[m.end():]
                return subject + rest[:1].lower() + rest[1:] if subject.endswith(" ") else subject + rest
        return sentence

    return "".join(fix(part) for part in _SPLIT_KEEP.split(text or ""))


_SPLIT_KEEP = re.compile(r"((?<=[.!?])\s+)")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if s.strip()]


def told(text: str, zh: bool, answering: bool = False) -> list[str]:
    """The sentences of a message in which its speaker tells something: no question, greeting, thanks, cheer or
    remark about the other person ("That's so cool!", "I'm so proud of you"); lead words off, time words kept.
    `answering`: the message answers a question, so an "It was …" opening it tells what was asked about."""
    out: list[str] = [""] if answering else []
    for sentence in _SENTENCE.split(text or ""):
        s = sentence.strip()
        if not s or s.endswith(("?", "？")):
            continue
        core = personal.strip_lead(s)
        if not core or personal.is_remark(core, zh) and not (out and not zh and OF_IT.match(core)
                                                             and not YOU.search(core)
                                                             and (_ME.search(core) or personal.topical(core))):
            continue  # a remark; but what the speaker says of what they just told ("It's like therapy for me") stays
        out.append(personal.strip_lead(s, title=True))
    return [s for s in out if s]
