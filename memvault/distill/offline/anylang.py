"""Statements in a language the cue tables do not read (French, German, Spanish, Japanese, Korean…), found by
signs that hold in any language (issue 32): a 42-turn French or Korean log must not give nothing.

A clause of the user's message is a statement when it is not asked ("?" anywhere in its sentence), not code or a
quote, and names something a reader would keep: a code identifier (`x`), a version or a number with a unit
("PostgreSQL 16", "8443", "85 %"), a made-up name (CamelCase, ALLCAPS, a dotted or dashed name: "Next.js",
"tienda-lupita.mx"), a Latin-script name inside Japanese, Chinese or Korean text ("Rails 7 でいく"), a capitalised
name inside a sentence where capitals are not every noun's (German), or a message opened by a short label and a
colon ("Règle :", "Update:", "ルール："). Clauses that name nothing go with the statement before them. The kind
comes from a small table of rule and choice words per language, else `fact`. Pure, deterministic.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
_HANGUL_KANA = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÿ]+")
# English and Chinese are read by the cue tables; a Latin text whose function words are another language's is not.
_ENGLISH = frozenset("the a an and is are was to of we i you it this that for with on in be will our my use "
                     "let's please always never from not".split())
_OTHER = frozenset("""
le la les des du un une et est sont pour avec sur dans pas on nous je tu qu que ce c'est ne
der die das und ist sind nicht wir ich du mit für auf von zu den dem ein eine bitte
el los las y es son para con en por no nosotros yo que una del al
o os as um uma para com em não nós eu
""".split())
_GERMAN = frozenset("der die das und ist sind nicht wir ich mit für auf von zu den dem ein eine bitte".split())
_SENTENCE = re.compile(r"(?<=[.!])\s+|(?<=[。！])\s*|\n+")
_CLAUSE = re.compile(r"\s*[,;，、；]\s*|\s+[:：]\s+|(?<=[^\s\d])[:：]\s*")
_HEADER = re.compile(r"^\s*[^\s:：,.?!]{1,20}(?:\s+[^\s:：,.?!]{1,20}){0,2}\s*[:：]\s*\S")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_QUOTE = re.compile(r"「[^」]*」|“[^”]*”|\"[^\"\n]{3,}\"|『[^』]*』|«[^»]*»|„[^“]*“")
_CODE = re.compile(r"`[^`\n]+`")
_NUMBER = re.compile(r"\d{3,}|\d+[.,]\d+|\d+\s*%|\b[A-Z][\w.+#-]*\s+\d+(?:\.\d+)*\b")
_MADE_UP = re.compile(r"\b(?:[A-Za-z]+[A-Z][a-z]+\w*|[a-z]+[A-Z]\w*|[A-Z]{2,}\w*|\w+[.\-_/]\w+[\w.\-_/]*)")
_CAPITAL = re.compile(r"(?<=\s)[A-Z][a-zà-ÿ]{2,}")
_ASIAN_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9.+#-]{1,}")
# Words that say what kind of statement it is, in the languages of the multilingual set and their neighbours.
_RULE = re.compile(r"r[èe]gle|regel|regla|regra|jamais|toujours|immer|niemals|\bnie\b|siempre|nunca|sempre|"
                   r"nunca|必ず|禁止|絶対|いつも|ルール|규칙|항상|절대|금지|무조건|반드시|doit|muss|debe|deve|"
                   r"non négociable|obligatoire|pflicht|obligatorio", _I)
_DECISION = re.compile(r"on part sur|on garde|on prend|on choisit|décid|wir nehmen|entschieden|vamos a usar|"
                       r"vamos con|decidimos|nos quedamos|escolhemos|vamos usar|ことにし|でいく|にします|에?로 하기로|"
                       r"하기로|결정", _I)
_PREFERENCE = re.compile(r"préf[èe]r|je préfère|lieber|bevorzug|prefiero|prefer|antworte|réponds|responde|"
                         r"てください|ほしい|주세요|좋아", _I)
_STATE = re.compile(r"finalement|désormais|maintenant|umgestiegen|gewechselt|jetzt|dejamos|ahora|cambio de|"
                    r"移行|変更|옮겼|바꿨|변경", _I)
_REPORTED_NO = re.compile(r"n'ai jamais dit|nie gesagt|nunca dije|nunca disse|言ってない|안 했", _I)


def unread(text: str) -> bool:
    """True when the cue tables cannot read the text: Japanese kana or Korean hangul, or Latin text whose
    function words are mostly another language's than English."""
    if _HANGUL_KANA.search(text):
        return True
    words = [w.lower() for w in _LATIN_WORD.findall(text)]
    other = sum(w in _OTHER for w in words)
    return other >= 2 and other > 2 * sum(w in _ENGLISH for w in words)


def _asian(text: str) -> bool:
    return bool(_HANGUL_KANA.search(text) or re.search(r"[\u4e00-\u9fff]", text))


def _names(clause: str, german: bool, asian: bool) -> bool:
    if _CODE.search(clause) or _NUMBER.search(clause) or _MADE_UP.search(clause):
        return True
    if asian:
        return bool(_ASIAN_LATIN.search(clause))
    return not german and bool(_CAPITAL.search(" " + clause.strip()[1:]))


def kind_of(text: str) -> str:
    if _STATE.search(text) and re.search(r"\b(?:von|de|from)\b.+\b(?:auf|à|a|to)\b|から|에서", text, _I):
        return "fact"  # a change: the new value is a fact (the supersede comes from the cues where they read it)
    if _RULE.search(text):
        return "rule"
    if _DECISION.search(text):
        return "decision"
    if _PREFERENCE.search(text):
        return "preference"
    return "fact"


def statements(text: str) -> list[tuple[str, str]]:
    """(kind, clause) for each statement of a message in a language the cue tables do not read."""
    text = _QUOTE.sub(" ", _FENCE.sub(" ", text or ""))
    words = {w.lower() for w in _LATIN_WORD.findall(text)}
    german = len(words & _GERMAN) >= 2
    headed = bool(_HEADER.match(text))
    out: list[list[str]] = []
    for sentence in _SENTENCE.split(text):
        s = sentence.strip()
        if not s or "?" in s or "？" in s or _REPORTED_NO.search(s):
            continue
        asian = _asian(s)
        parts: list[list] = []
        # Separators inside `code` are not clause ends; the label of a headed message ("Règle :") is no clause.
        guarded = _CODE.sub(lambda m: m.group(0).replace(",", "\0").replace(":", "\1"), s)
        clauses = [c.replace("\0", ",").replace("\1", ":") for c in _CLAUSE.split(guarded)]
        if headed and not out and len(clauses) > 1 and len(clauses[0].split()) <= 3:
            clauses = clauses[1:]
        for clause in clauses:
            c = clause.strip(" .。!！")
            if not c or _CODE.fullmatch(c):
                continue  # an error message or a name in backticks alone is output, not a statement
            if parts and len(c.split()) <= 2 and not asian:
                parts[-1][1] += ", " + c  # "…, pas Flask", "…, wegen JSONB": a detail of the clause before
                continue
            if _names(c, german, asian) or (headed and not out and not parts and len(c) > 8):
                parts.append([kind_of(s), c])
            elif parts:
                parts[-1][1] += (", " if not asian else "、") + c
        out.extend(parts)
    return [(k, c) for k, c in out]
