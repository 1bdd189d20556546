"""One episode -> the statements its USER made outright (issue 10's offline engine). Pure, deterministic.

Steps: drop what is not the user speaking for themselves (code blocks, `>` quotes, 「quoted」 words, role-play
narration outside OOC), cut the rest into sentences, drop every sentence that is asked, hedged, hypothetical,
negated or chit-chat, then cut each sentence into clauses and classify them with the cue tables (cues.py):
state change (old and new value) > rule > decision > preference > fact. A clause without a cue is the reason
of the card before it in the same sentence. The assistant's text is never read.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from memvault.distill.offline import cues, personal
from memvault.distill.offline.entities import entities_of

_I = re.IGNORECASE


def _c(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_QUESTION_EN = _c(cues.QUESTION_EN, _I)
_QUESTION_ZH = _c(cues.QUESTION_ZH)
_HYPO_EN = _c(cues.HYPOTHETICAL_EN, _I)
_HYPO_ZH = _c(cues.HYPOTHETICAL_ZH)
_HEDGE_EN = _c(cues.HEDGE_EN, _I)
_HEDGE_ZH = _c(cues.HEDGE_ZH)
_NEG_EN = _c(cues.NEGATED_EN, _I)
_NEG_ZH = _c(cues.NEGATED_ZH)
_CHIT = _c(cues.CHITCHAT, _I)
_STATE_EN = [_c(p, _I) for p in cues.STATE_EN]
_STATE_ZH = [_c(p) for p in cues.STATE_ZH]
_RULE_EN = _c(cues.RULE_EN, _I)
_EPISTEMIC_EN = _c(cues.EPISTEMIC_EN, _I)
_RULE_NEVER_EN = _c(cues.RULE_NEVER_EN, _I)
_RULE_ZH = _c(cues.RULE_ZH)
_PREF_EN = _c(cues.PREFERENCE_EN, _I)
_PREF_ALWAYS_EN = _c(cues.PREFERENCE_ALWAYS_EN, _I)
_PREF_NEVER_EN = _c(cues.PREFERENCE_NEVER_EN, _I)
_PREF_ZH = _c(cues.PREFERENCE_ZH)
_DEC_EN = _c(cues.DECISION_EN, _I)
_DEC_ZH = _c(cues.DECISION_ZH)
_FACT_NOUN_EN = _c(cues.FACT_NOUN_EN, _I)
_FACT_VERB_EN = _c(cues.FACT_VERB_EN, _I)
_FACT_ZH_IS = _c(r"^(?P<subj>.{1,20}?)(?:是|为|用的是|在用|现在是|现在在)\s*(?P<val>.+)$")
_FACT_ZH_NOUN = _c(cues.FACT_ZH_NOUN + r"$")
_FACT_ZH_OTHER = _c(r"过敏|(?:每天|每周|每月).{0,12}(?:跑|执行|运行|备份)|(?:项目|我们|现在|目前)(?:用|使用)\s*[A-Za-z]")
_MEM_EN = _c(cues.MEMORY_EN, _I)
_MEM_TAIL_EN = _c(cues.MEMORY_TAIL_EN, _I)
_MEM_ZH = _c(cues.MEMORY_ZH)
_MEM_TAIL_ZH = _c(cues.MEMORY_TAIL_ZH)
_LEAD_EN = _c(cues.LEAD_EN, _I)
_LEAD_ZH = _c(cues.LEAD_ZH)
_NARRATION = _c(cues.NARRATION)
_OOC = _c(cues.OOC, _I)
_FENCE = _c(r"```.*?(?:```|\Z)", re.S)
_QUOTED = _c(r"「[^」]*」|“[^”]*”|\"[^\"\n]{3,}\"|『[^』]*』")
_CJK = _c(r"[\u3400-\u9fff]")
_SENTENCE = _c(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？!?；;])")
_CLAUSE_ZH = _c(r"[，,；;：:]")
_CLAUSE_EN = _c(r"\s*(?:;|:\s|,\s+|\s+-\s+|\s+and\s+(?=(?:it|we|i|the|my|our|always|never|also)\b)"
                r"|\s+but\s+)\s*", _I)
_CONTRAST_ZH = _c(r"^(?:别用|不要用|不用)\s*\S")
_USES_ZH = _c(r"用\s*\S")
_DECIDED_ONLY = _c(r"^(?:那就|这个|就这么)?定了[吧啊。！!]*$|^that's decided$|^it's decided$|^decided$|"
                   r"^(?:好)?就按你说的(?:办|来)?$|^(?:ok )?as you said$", _I)
_RULE_HEADER = _c(cues.RULE_HEADER, _I)
_DECIDED_HEAD = _c(r"^(?:我们|那|那就|好)?(?:决定了|定了|就这么定了?)$|^(?:ok(?:ay)?,?\s+)?(?:it's\s+|that's\s+)?decided$", _I)
_KIND_HEADER = _c(cues.KIND_HEADER, _I)
_ZH_HEADER = {"决定": "decision", "结论": "decision", "偏好": "preference", "规则": "rule"}
_DEFERRAL = _c(cues.DEFERRAL, _I)
_CONTINUES = _c(cues.CONTINUES, _I)
_CHOICE_ZH = _c(r"用\s*[A-Za-z]")
_MARK_DECIDED = _c(cues.MARK_DECIDED, _I)
_MARK_RULE = _c(cues.MARK_RULE, _I)
_CONTRAST = _c(cues.CONTRAST, _I)
_NOUN_VALUE_EN = _c(cues.NOUN_VALUE_EN, _I)
_EVALUATION_EN = _c(cues.EVALUATION_EN, _I)
_VALUE_HINT = _c(r"\d|://|[/~]\w|`|\b[A-Z][\w.+-]*[A-Za-z0-9]|《")
_STATE_TAIL_EN = _c(r"\s+(?:over the weekend|last (?:week|sprint|month|night)|yesterday|today|this (?:morning|week|"
                    r"sprint|month)|for now|now)\b.*$|[,;].*$|\.$", _I)
_STATE_TAIL_ZH = _c(r"[，,。；;！!].*$|了$")
_ARTICLE = _c(r"^(?:the|our|my|we|i|we've|we have)\s+", _I)
_SPACES = _c(r"\s+")

KINDS = ("state", "rule", "decision", "preference", "fact")


@dataclass(frozen=True)
class Statement:
    """One thing the user stated outright. `line` is the 1-based line of the user's message it is on."""

    kind: str
    text: str  # the user's words, lead-ins and memory-request words removed
    line: int
    entities: tuple[str, ...]
    subject: str | None = None  # state changes only
    old: str | None = None
    new: str | None = None
    plan: bool = False  # a life event still to come (personal.py): a bare weekday in it is the next one


def _is_zh(text: str) -> bool:
    return len(_CJK.findall(text)) >= 2


def _user_text(text: str) -> str:
    """What the user says for themselves: no code blocks, quotes or role-play narration."""
    text = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # keep line numbers
    ooc = [m.group("ooc") for m in _OOC.finditer(text)]
    if ooc or _NARRATION.search(text):
        return "\n".join(ooc)  # role-play: only what is said out of character counts
    lines = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(">") or (stripped.startswith(("    ", "\t")) and not _is_zh(stripped)):
            lines.append("")
            continue
        lines.append(_QUOTED.sub(_unquote, line))
    return "\n".join(lines)


def _unquote(m: re.Match[str]) -> str:
    """Quoted words go, but a short quoted name stays, unquoted (a book: 'I reread "The Alchemist"')."""
    inner = m.group(0)[1:-1].strip()
    if m.group(0)[0] in "\"“" and 0 < len(inner.split()) <= 6 and inner[:1].isupper() and not _CJK.search(inner) \
            and not re.search(r"[.!?,;:]", inner):
        return inner
    return " "


def _disqualified(sentence: str) -> bool:
    s = sentence.strip()
    if not s:
        return True
    if s.endswith(("?", "？")) or _CHIT.search(s):
        return True
    if _is_zh(s):
        return bool(_QUESTION_ZH.search(s.rstrip("。！!～~ ")) or _HYPO_ZH.search(s) or _HEDGE_ZH.search(s)
                    or _NEG_ZH.search(s) or _HEDGE_EN.search(s))
    return bool(_QUESTION_EN.search(s) or _HYPO_EN.search(s) or _HEDGE_EN.search(s) or _NEG_EN.search(s))


def _strip_lead(text: str) -> tuple[str, bool]:
    """Remove lead-ins and memory-request words; say whether it was an explicit memory request."""
    t = text.strip().strip("。.!！ ")
    asked = False
    for _ in range(3):
        before = t
        t = _LEAD_EN.sub("", t)
        t = _LEAD_ZH.sub("", t)
        for pat in (_MEM_EN, _MEM_ZH, _MEM_TAIL_EN, _MEM_TAIL_ZH):
            new = pat.sub("", t)
            if new != t:
                asked = True
                t = new
        t = t.strip().strip("。.!！,，:： ")
        if t == before:
            break
    return t, asked


def _clean_value(value: str, zh: bool) -> str:
    value = (_STATE_TAIL_ZH if zh else _STATE_TAIL_EN).sub("", value.strip())
    return value.strip().strip("。.!！,，'\" ")


def _subject(raw: str | None) -> str:
    s = _SPACES.sub(" ", (raw or "").strip(" ,，:：")).strip()
    s = _ARTICLE.sub("", s)
    s = re.sub(r"^(?:we|i)\s+(?:moved|switched|migrated|changed)\s*", "", s, flags=_I)
    return s.strip()


def _state(sentence: str) -> Statement | None:
    zh = _is_zh(sentence)
    for pat in (_STATE_ZH if zh else _STATE_EN):
        m = pat.search(sentence)
        if not m:
            continue
        old = _clean_value(m.group("old"), zh)
        new = _clean_value(m.group("new"), zh)
        if not old or not new or old.casefold() == new.casefold():
            continue
        groups = m.groupdict()
        subj = _subject(groups.get("subj2") or groups.get("subj"))
        if zh:
            subj = re.sub(r"^(?:我们|我|咱们)", "", subj).strip()
        return Statement("state", sentence, 0, (), subject=subj or None, old=old, new=new)
    return None


def _fact_en(text: str) -> bool:
    """A subject with a value: a verb of being/using, and a value-taking noun before it or a value (number,
    path, URL, name) after it. `text` keeps its case: capitalised names are values."""
    m = _FACT_VERB_EN.search(text)
    if not m:
        return False
    before, after = text[:m.start()], text[m.end():]
    head = before.strip().lower()
    if _EVALUATION_EN.match(after):
        return False
    if head in ("", "it", "that", "this", "there", "what", "which", "everything") and not \
            text.lower().startswith(("we use", "we're using", "we are using")) and head != "it":
        return bool(_VALUE_HINT.search(after)) and head != "that"
    return bool(_FACT_NOUN_EN.search(before)) or bool(_VALUE_HINT.search(after))


def _fact_by_noun(text: str) -> bool:
    if _is_zh(text):
        m = _FACT_ZH_IS.search(text)
        return bool(m and (_FACT_ZH_NOUN.search(m.group("subj").strip()) or m.group("subj").startswith("我的")))
    m = _FACT_VERB_EN.search(text)
    return bool(m and _FACT_NOUN_EN.search(text[:m.start()]))


def _kind(clause: str, original: str) -> str | None:
    """The kind a clause states, or None. `original` keeps the case (names and values are hints)."""
    if _is_zh(clause):
        if _RULE_ZH.search(clause):
            return "rule"
        if _DEC_ZH.search(clause):
            return "decision"
        if _PREF_ZH.search(clause):
            return "preference"
        m = _FACT_ZH_IS.search(original)
        if m and (_FACT_ZH_NOUN.search(m.group("subj").strip()) or _VALUE_HINT.search(m.group("val"))
                  or m.group("subj").startswith("我的")):
            return "fact"
        if _FACT_ZH_OTHER.search(original):
            return "fact"
        return None
    low = clause.lower()
    if _PREF_NEVER_EN.search(low):
        return "preference"
    if _RULE_EN.search(_EPISTEMIC_EN.sub(" ", low)) or _RULE_NEVER_EN.search(low):
        return "rule"
    if _DEC_EN.search(low):
        return "decision"
    if _PREF_EN.search(low) or _PREF_ALWAYS_EN.search(low):
        return "preference"
    if _fact_en(original):
        return "fact"
    return None


def _clauses(sentence: str) -> list[str]:
    pat = _CLAUSE_ZH if _is_zh(sentence) else _CLAUSE_EN
    return [c.strip() for c in pat.split(sentence) if c and c.strip()]


def statements(user: str) -> list[Statement]:
    """Every statement the user makes outright in one message, in order."""
    out: list[Statement] = []
    for lineno, line in enumerate(_user_text(user).split("\n"), start=1):
        if not line.strip():
            continue
        for sentence in _SENTENCE.split(line):
            if _disqualified(sentence):
                # A hedge or a question in one clause does not take back what another states outright:
                # "I adopted a kitten yesterday, so I might be slow to reply", "我对花生过敏，有什么办法吗？".
                # In chit-chat ("…, lol") only a clause where the speaker says what they did.
                found, _whole = _personal(sentence, lineno, whole=False, first_only=bool(_CHIT.search(sentence)))
                out.extend(found)
                continue
            sentence, asked = _strip_lead(sentence)
            if not sentence:
                continue
            mark = "decision" if _MARK_DECIDED.match(sentence) else "rule" if _MARK_RULE.match(sentence) else None
            if mark:
                # "Decided with the team yesterday." / "That's a hard rule.": about the statement before it.
                if out and out[-1].line == lineno and out[-1].kind != "state":
                    out[-1] = dataclasses.replace(out[-1], kind=mark)
                continue
            state = _state(sentence)
            if state is not None:
                out.append(Statement("state", sentence, lineno, entities_of(sentence), state.subject,
                                     state.old, state.new))
                continue
            cued = _sentence_cards(sentence, lineno, asked)
            if asked or any(st.kind in ("decision", "rule") for st in cued):
                out.extend(cued)  # a choice or a constraint, or asked to be remembered: the work-chat cues decide
            else:
                # A life told as a whole ("I'm a loan officer at Harbor Bank, …, I can't say I love it") before a
                # weak cue ("I love" of a preference) cut from it; else the cues, else the clauses that tell one.
                found, whole = _personal(sentence, lineno)
                out.extend(found if found and (whole or not cued) else cued)
    return out


def _personal(sentence: str, lineno: int, whole: bool = True, first_only: bool = False
              ) -> tuple[list[Statement], bool]:
    """What the sentence tells about the speaker's life (personal.py), and whether the whole sentence does:
    the whole sentence, else each clause that does so on its own. With `whole=False` the sentence as a whole
    is disqualified (asked, hedged…): only its clauses that are not count; with `first_only`, only those
    whose subject is the speaker."""
    zh = _is_zh(sentence)
    found = personal.kind_of(sentence, zh) if whole else None
    if found is not None:
        return [Statement(found[0], found[2], lineno, entities_of(sentence), plan=found[1])], True
    out = []
    clauses = personal.parts(sentence, zh)
    for clause in clauses if len(clauses) > 1 else ():
        if not whole and _disqualified(clause):
            continue
        found = personal.kind_of(clause, zh)
        if found is not None and not (first_only and not personal.first_person(found[2], zh)):
            out.append(Statement(found[0], found[2], lineno, entities_of(clause), plan=found[1]))
    return out, False


def _sentence_cards(sentence: str, lineno: int, asked: bool) -> list[Statement]:
    zh = _is_zh(sentence)
    decided = joined = False
    forced: str | None = None  # a header clause named the kind of what follows
    heading = ""
    parts: list[list] = []  # [kind | None, text]
    for clause in _clauses(sentence):
        continues = bool(_CONTINUES.match(clause.strip()))
        text, clause_asked = _strip_lead(clause)
        asked = asked or clause_asked
        if not text:
            continue
        if _DECIDED_ONLY.match(text):
            decided = True
            continue
        if not parts and _DECIDED_HEAD.match(text):
            decided = joined = True  # "决定了，用 Astro，部署到 Cloudflare Pages": one decision, all it names
            heading = text
            continue
        header = _KIND_HEADER.match(text)
        if header:
            forced = header.group("kind") or _ZH_HEADER[header.group("zh")]
            forced = forced.lower()
            heading = text  # kept in the title of what follows: "Decision: RQ + Redis for alerts"
            continue
        if _RULE_HEADER.match(text):
            forced = "rule"
            continue
        if _DEFERRAL.search(text):
            continue
        kind = _kind(text, text)
        if kind is None and not zh and parts and parts[-1][0] == "fact" and _NOUN_VALUE_EN.match(text):
            kind = "fact"  # "…, region eu-central-1"
        if kind == "preference" and parts and parts[-1][0] == "rule" and _PREF_ALWAYS_EN.match(text):
            parts[-1][1] += ", " + text  # "never write X, always Y": one instruction
            continue
        if kind == "preference" and zh and parts and parts[-1][0] == "preference":
            parts[-1][1] += "，" + text  # "以后少一点动作描写，我喜欢对话多一些": one preference and its reason
            continue
        if parts and (parts[-1][0] is not None and continues or kind is None and _CONTRAST.match(text)):
            parts[-1][1] += ("，" if zh else ", ") + text
            continue
        if kind == "fact" and parts and parts[-1][0] in ("decision", "rule", "preference") \
                and not _fact_by_noun(text):
            # "我决定…学日语，目标是年底考 N3": a value that details the statement before it.
            parts[-1][1] += ("，" if zh else ", ") + text
            continue
        if kind is None and zh and parts and _CONTRAST_ZH.match(text):
            # "依赖管理用 uv，别用 poetry": one choice against another is a decision.
            if parts[-1][0] in (None, "fact") and _USES_ZH.search(parts[-1][1]):
                parts[-1][0] = "decision"
            parts[-1][1] += "，" + text
            continue
        if kind == "preference" and zh and parts and parts[-1][0] is not None and re.match(r"^(?:别再|不要再)", text):
            parts[-1][1] += "，" + text  # "我不喜欢背单词 app，别再推荐了": one preference
            continue
        if kind is None and zh and _CHOICE_ZH.search(text):
            parts.append([None, text])  # "依赖管理用 uv" may become a choice with the next clause
            continue
        if kind is None and parts and parts[-1][0] is not None:
            parts[-1][1] += ("，" if zh else ", ") + text  # the reason goes with its statement
            continue
        parts.append([kind, text])
    if joined and parts:
        parts = [["decision", ("，" if zh else ", ").join(text for _kind, text in parts)]]
    cards = []
    context = ""  # a clause with no cue just before a statement says what it is about ("beta 来不及了，推迟…")
    for kind, text in parts:
        if forced and (kind is None or kind == "fact"):
            kind = forced
        elif kind is None and (decided or asked) and len(text) <= 80:
            kind = "decision" if decided else "fact"
        elif decided and kind in ("preference", "fact"):
            kind = "decision"
        if kind is None:
            context = text if len(text) <= 40 else ""
            continue
        if context:
            text = context + ("，" if zh else ", ") + text
            context = ""
        if heading:
            text = heading + ("：" if zh else ": ") + text
            heading = ""
        cards.append(Statement(kind, text, lineno, entities_of(text)))
    return cards
