"""Statements in a language the cue tables do not read (French, German, Spanish, Japanese, Korean…), found by
signs that hold in any language (issue 32): a 42-turn French or Korean log must not give nothing.

A clause of the user's message is a statement when it is not asked ("?" anywhere in its sentence), not code or a
quote, and names something a reader would keep: a code identifier (`x`), a version or a number with a unit
("PostgreSQL 16", "8443", "85 %"), a made-up name (CamelCase, ALLCAPS, a dotted or dashed name: "Next.js",
"tienda-lupita.mx"), a Latin-script name inside Japanese, Chinese or Korean text ("Rails 7 でいく"), a capitalised
name inside a sentence where capitals are not every noun's (German), or a message opened by a short label and a
colon ("Règle :", "Update:", "ルール："), or says always or never ("回答はいつも短めで"; then each clause of that
instruction with its own topic is one too). Not a statement: a hedge, a belief or a hypothetical ("peut-être",
"je pense que", "falls", "もし"), what someone else said, what is said of the moment ("heute…") unless it decides or
rules, a question without its "?", output pasted without a fence, thanks or a greeting. Clauses that name nothing go with the statement before them (one that comes first,
"Le serveur de staging, c'est …", opens the next); "X for this and Y for that" (et, und, y…) is two statements
when each side names something. What is not used ("React Native 는 안 써요") or dropped ("on abandonne
PostgreSQL 16 : on passe à SQLite") goes with the statement beside it, and a negation alone is no card; "never X,
always Y" is one rule. The kind comes from a small table of rule and choice words per language (how to answer is a
preference), else `fact`; a clause that says a switch by its from/to markers is a change of state (change_of:
"von MariaDB auf PostgreSQL 16 umgestiegen", "Firebase 에서 Supabase 로 옮겼어요") and supersedes the card that held
the old value. Pure, deterministic.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
_HANGUL_KANA = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÿ]+")
# English and Chinese are read by the cue tables; a Latin text whose function words are another language's is not.
# The most frequent function words of each language; a word both write ("a", "on", "in", "die") counts for neither.
_ENGLISH = frozenset("""
the an and is are was were to of we i you it this that for with be will our my use let's please always
never from not have has do does did can should would there they he she his her at by as or if but so just what how
when which
""".split())
_OTHER = frozenset("""
le la les de des du un une et est sont pour avec sur dans pas nous je tu qu que qui ce c'est ne mais ou où donc très
aussi sera être avoir fait il elle ils elles au aux cette ces mon ma mes ton ta notre votre leur l j toujours jamais
merci ça à tout tous toute toutes comme bien même sans chez depuis alors
der die das und ist sind nicht wir ich du mit für auf von zu den dem ein eine einen einem einer bitte auch noch nur
schon wird werden wurde kein keine keinen sich er ihr uns unser mein oder aber wenn dass wie im vom zum zur bei nach
jeder jede jedes habe haben immer nie sonst weil wäre würde würden kann können soll sollte muss
el los las y es son para con en por no nosotros yo una del al lo se está están pero muy también siempre nunca mis
su sus nuestro este esta esto ese hay como más ya porque cuando fue ser vamos tenemos mucho muchas gracias qué
o os um uma com em não nós eu você da dos das na ao pelo pela é são mas muito sempre ele ela isso esse essa estou
estamos temos
il gli della di che è sono non questo questa anche mai sul nel nella sulla alla dal dei delle per
het een niet wij ik je van op te met voor maar ook altijd nooit
""".split())
_GERMAN = frozenset("""der die das und ist sind nicht wir ich mit für auf von zu den dem ein eine einen bitte immer
wieder auch noch nur schon wird kein keine sich oder aber wenn dass wie im vom zum zur bei nach jeder sonst weil
du mir mich dich uns unser unsere""".split())
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
# A Latin word is a whole word ("Codeberg" holds no "debe"); CJK words stand anywhere.
_RULE = re.compile(r"\b(?:r[èe]gles?|regeln?|reglas?|regras?|jamais|toujours|immer|niemals|nie|siempre|nunca|"
                   r"sempre|doit|doivent|muss|müssen|debe|deben|deve|devem|non négociable|obligatoire|pflicht|"
                   r"obligatorio)\b|"
                   r"必ず|禁止|絶対|いつも|ルール|규칙|항상|절대|금지|무조건|반드시", _I)
_DECISION = re.compile(r"\b(?:on part sur|on garde|on prend|on choisit|décid|wir nehmen|entschieden|vamos a usar|"
                       r"vamos con|decidimos|nos quedamos|escolhemos|vamos usar)|ことにし|でいく|にします|에?로 하기로|"
                       r"하기로|기로 했|결정", _I)
_PREFERENCE = re.compile(r"\b(?:préf[èe]r|lieber|bevorzug|prefiero|prefer|antworte|réponds|responde)|"
                         r"てください|ほしい|주세요|좋아", _I)
_STATE = re.compile(r"\b(?:finalement|désormais|maintenant|umgestiegen|gewechselt|jetzt|dejamos|ahora|cambio de)|"
                    r"移行|変更|옮겼|바꿨|변경", _I)
_REPORTED_NO = re.compile(r"n'ai jamais dit|nie gesagt|nunca dije|nunca disse|言ってない|안 했", _I)
# How the assistant should answer (its language, length, style) is a preference, even said with "always".
_ANSWER = re.compile(r"\b(?:r[ée]pon[ds]|antwort|respond|respuesta|rispond)|回答|返答|返事|답변|대답|답장", _I)
# Not a statement: a hedge, a belief or a hypothetical ("peut-être un jour", "je pense que", "falls wir", "もし…"),
# what someone else said ("mi jefe dice que…"), thanks or a greeting.
_UNSURE = re.compile(r"\bpeut-être\b|\bprobablement\b|\bvielleicht\b|\beventuell\b|\birgendwann\b|\bfalls\b|"
                     r"\bwas wäre\b|\bquizás?\b|\btal vez\b|\ba lo mejor\b|\btalvez\b|\bforse\b|\bet si\b|\by si\b|"
                     r"\bsi jamais\b|\bse um dia\b|\bje (?:pense|crois) que\b|\bil me semble\b|\bpas sûr|"
                     r"\bich (?:glaube|denke|vermute)\b|\bnicht sicher\b|\bcreo que\b|\bme parece\b|"
                     r"\bno estoy seguro|\bacho que\b|\bpenso che\b|\bcredo che\b|\b(?:dit|dice|sagt),? (?:que|dass)\b|"
                     r"たぶん|多分|かもしれ|もし|と思います|と思う|気がする|아마|혹시|만약|것 같아|제 생각엔|잘 모르겠", _I)
# Said of the moment ("heute arbeite ich am Backend", "on reprend dans 10 minutes", "오늘은 여기까지"): no memory
# unless it also says a rule, a choice, a preference or a change.
_MOMENT = re.compile(r"\b(?:aujourd'hui|ce soir|ce matin|tout à l'heure|dans \d+ minutes|heute|gleich|morgen früh|"
                     r"hoy|esta tarde|esta noche|hoje|oggi|stasera|ahorita)\b|今日は|今夜|さっき|오늘은|이따가|방금", _I)
# Asked without a "?" (typed in a hurry): an opening that only asks, or a Japanese or Korean question ending.
_ASKED = re.compile(r"^(?:est-ce que|pourquoi|comment (?:on|je|tu|faire)|tu peux|peux-tu|pouvez-vous|warum|wieso|"
                    r"weshalb|kann man|kannst du|könntest du|können sie|por qué|cómo (?:puedo|se|hago)|puedes|"
                    r"podrías|por que|como (?:posso|faço)|você pode|puoi|potresti)\b|(?:ですか|ますか|でしょうか|까요|나요)\W*$", _I)
# Output pasted without a fence: a traceback, a compiler's or a shell's line.
_OUTPUT = re.compile(r"^\s*(?:Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|at \S+ \(\S+:\d+|"
                     r"[\w.]*(?:Error|Exception)\b:|panic:|npm ERR!|\$ |>>> )")
_SMALL_TALK = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:muchas |mil |vielen )?(?:merci(?! de| d')|danke(?!, dass)|"
                         r"gracias|obrigad[oa]|grazie|bedankt|ありがとう|감사|고마워|고맙|"
                         r"bonjour|bonsoir|salut|hallo|guten (?:morgen|tag|abend)|hola|buenos días|buenas|olá|ciao|"
                         r"こんにちは|おはよう|안녕)|ありがとう|감사합니다|고마워|고맙습니다", _I)
_GREETING = re.compile(r"\W*(?:bonjour|bonsoir|salut|hallo|hola|buenas|olá|ciao|coucou|moin|servus|こんにちは|"
                       r"안녕하세요|안녕)\W*(?:\s+\w+)?\W*", _I)
# A clause that says what is not used ("React Native 는 안 써요", "kein Java mehr") tells the statement beside it and
# is no card alone (a negation is no memory); one that also says never/always is a rule ("ne … jamais"). What is
# dropped ("on abandonne PostgreSQL 16") goes with what replaces it, and alone is a card ("we dropped Redis").
# (Spanish "no" before a verb or a pronoun: Portuguese "no" is "in the", "no projeto")
_NOT = re.compile(r"\bne\b|\bn'|\bpas\b|\bkein\w*|\bnicht\b|\bno (?:me|te|se|lo|la|le|les|nos|hay|es|son|"
                  r"está|están|sé|uso|usa|usan|funciona|sirve|quiero|tengo|tiene|puedo|puede|\w+(?:amos|emos|imos))\b|\bnão\b|\bnon\b|\bniet\b|\bgeen\b|"
                  r"ない|ません|(?:^|\s)안\s|않|못\s", _I)
_DROP = re.compile(r"abandonn|laisse tomber|aufgegeben|\bdejamos\b|\babandon|やめ|止め|그만", _I)
# Never / always: a standing instruction even when it names nothing ("回答はいつも短めで"); a prohibition then
# what to do instead ("jamais de print(), toujours logging") is one rule.
_NEVER = re.compile(r"jamais|\bnie\b|niemals|nunca|\bnever\b|禁止|しない|금지|절대|하지 마", _I)
_ALWAYS = re.compile(r"toujours|immer|siempre|sempre|\balways\b|必ず|いつも|常に|무조건|반드시|항상", _I)
# German writes every noun with a capital, so a name is no sign there: a choice or a rule word is ("Wir nehmen
# Caddy als Proxy").
_CUED = re.compile(r"\b(?:wir nehmen|nehmen wir|entschieden|regel|immer|niemals|nie|muss|müssen|bitte)\b", _I)
_TOPIC = re.compile(r"\Sは|\S[은는]\s")
# "Still" and "ever more", not "always": "ça plante toujours", "j'ai toujours l'erreur", "immer wieder".
_STILL = re.compile(r"immer noch|immer wieder|immer mehr|toujours pas|toujours aussi|ça \w+ toujours|j'ai toujours|"
                    r"il y a toujours|c'est toujours|siempre que|noch nie", _I)
# What opens a clause with a subject of its own: a determiner, a pronoun, a name ("y el hosting…", "y Stripe…",
# not "und sitzt in Hamburg", whose subject is the one before).
_OWN_SUBJECT = re.compile(r"(?i:(?:le|la|les|l'|un|une|on|nous|il|elle|el|los|las|lo|der|die|das|den|ein|eine|wir|"
                          r"er|sie|es|gli|o|os|as|um|uma|mon|ma|mes|notre|nos|mi|mis|nuestro|nuestra|unser|unsere|"
                          r"mein|meine)\b)|[A-Z0-9`]")
_AND = re.compile(r"\s+(?:et|und|y|e|and|sowie|ainsi que)\s+", _I)
_LEAD = re.compile(r"^(?:et|und|y|e|and|mais|aber|pero|but|donc|also|pues|puis|dann|ok|okay|bon|alors)\b[\s,]*", _I)


def unread(text: str) -> bool:
    """True when the cue tables cannot read the text: Japanese kana or Korean hangul, or Latin text whose
    function words are mostly another language's than English."""
    if _HANGUL_KANA.search(text):
        return True
    words = [w.lower() for w in _LATIN_WORD.findall(_CODE.sub(" ", _FENCE.sub(" ", text)))]
    other = sum(w in _OTHER for w in words)
    return other >= 2 and other > 2 * sum(w in _ENGLISH for w in words)


# Scripts no cue table reads at all (Cyrillic, Greek, Armenian, Hebrew, Arabic, the Indic scripts, Thai, Lao,
# Georgian, Ethiopic, Cherokee): a turn written in one is counted as unread, not as one that stated nothing.
_OTHER_SCRIPT = re.compile(r"[\u0370-\u03ff\u0400-\u052f\u0530-\u08ff\u0900-\u0dff\u0e00-\u0eff\u10a0-\u10ff"
                           r"\u1200-\u13ff]")


def unreadable(text: str) -> bool:
    """unread(), or most of the text's letters are in a script no table reads: why a turn gave no card."""
    if unread(text):
        return True
    if not _OTHER_SCRIPT.search(text):  # most turns: no letter of such a script, nothing to count
        return False
    letters = sum(ch.isalpha() for ch in text)
    return letters > 0 and 2 * len(_OTHER_SCRIPT.findall(text)) > letters


def _asian(text: str) -> bool:
    return bool(_HANGUL_KANA.search(text) or re.search(r"[\u4e00-\u9fff]", text))


def _names(clause: str, german: bool, asian: bool) -> bool:
    if _CODE.search(clause) or _NUMBER.search(clause) or _MADE_UP.search(clause):
        return True
    if asian:
        return bool(_ASIAN_LATIN.search(clause))
    # a capital that opens the clause is no sign ("¡Genial", "Stripe para…" after "y" is one: see _split_and)
    return not german and bool(_CAPITAL.search(" " + clause.strip(" ¡¿\"'(«")[1:]))


def kind_of(text: str) -> str:
    if _STATE.search(text) and re.search(r"\b(?:von|de|from)\b.+\b(?:auf|à|a|to)\b|から|에서", text, _I):
        return "fact"  # a change whose values change_of cannot tell apart: the new value is a fact
    if _ANSWER.search(text):
        return "preference"
    if _RULE.search(text):
        return "rule"
    if _DECISION.search(text):
        return "decision"
    if _PREFERENCE.search(text):
        return "preference"
    return "fact"


def _words(clause: str, asian: bool) -> int:
    return len(clause) // 3 if asian else len(clause.split())


def _split_and(clause: str, german: bool, asian: bool) -> list[str]:
    """"X para el frontend y Stripe para los pagos": two statements when each side names something and says
    more than a name (a bare "FastAPI et PostgreSQL" stays one)."""
    if asian:
        return [clause]
    out = [clause]
    for m in reversed(list(_AND.finditer(clause))):
        left, right = clause[: m.start()], clause[m.end():]
        if len(left.split()) >= 3 and len(right.split()) >= 3 and _OWN_SUBJECT.match(right) \
                and _names(left, german, asian) and _names(m.group(0).strip() + " " + right, german, asian):
            # (the right side is named with its "y": "Stripe" there is no sentence-initial capital)
            return [*_split_and(left, german, asian), clause[m.start():].strip()]  # _LEAD drops the "y"
    return out


def _standing(clause: str) -> bool:
    """Says always or never (not "still"): an instruction that holds, even when it names nothing."""
    return bool((_ALWAYS.search(clause) or _NEVER.search(clause)) and not _STILL.search(clause))


def _own_topic(clause: str, asian: bool) -> bool:
    """A clause with its own topic ("코드 주석은 …", "コメントは …"), not the rest of the one before ("コマンド中心に
    してください"); in a Latin language, any clause of three words or more."""
    return bool(_TOPIC.search(clause)) if asian else len(clause.split()) >= 3


def _negated(clause: str) -> bool:
    """Says what is not used, and no rule ("ne … jamais", "금지" are rules; "toujours pas" is "still not")."""
    return bool(_NOT.search(clause)) and not _RULE.search(_STILL.sub(" ", clause))


def _aside(clause: str) -> bool:
    """Tells the statement beside it, not one of its own: what is not used or what is dropped."""
    return _negated(clause) or bool(_DROP.search(clause))


def _rule_pair(a: str, b: str) -> bool:
    """A prohibition and what to do instead, either way round: "jamais de print(), toujours logging"."""
    return bool(_NEVER.search(a) and _ALWAYS.search(b) or _ALWAYS.search(a) and _NEVER.search(b))


def _joined(a: str, b: str, asian: bool) -> str:
    return a + ("、" if asian else ", ") + b


def statements(text: str) -> list[tuple[str, str]]:
    """(kind, clause) for each statement of a message in a language the cue tables do not read."""
    text = _QUOTE.sub(" ", _FENCE.sub(" ", text or ""))
    text = "\n".join(line for line in text.splitlines() if not _OUTPUT.match(line))
    words = {w.lower() for w in _LATIN_WORD.findall(text)}
    german = len(words & _GERMAN) >= 2
    headed = bool(_HEADER.match(text))
    out: list[list] = []  # [kind, clause, aside: it only tells what is not used or is dropped (_aside)]
    for sentence in _SENTENCE.split(text):
        s = sentence.strip()
        if not s or "?" in s or "？" in s or _ASKED.search(s) or _REPORTED_NO.search(s) or _UNSURE.search(s) \
                or _SMALL_TALK.search(s):
            continue
        if _MOMENT.search(s) and not any(r.search(s) for r in (_RULE, _DECISION, _PREFERENCE, _ANSWER, _CHANGE)):
            continue
        asian = _asian(s)
        parts: list[list] = []
        topic = ""  # a clause naming nothing before the sentence's first statement: what the next one is about
        # Separators inside `code` are not clause ends; the label of a headed message ("Règle :") is no clause.
        guarded = _CODE.sub(lambda m: m.group(0).replace(",", "\0").replace(":", "\1"), s)
        clauses = [c.replace("\0", ",").replace("\1", ":") for c in _CLAUSE.split(guarded)]
        if headed and not out and len(clauses) > 1 and len(clauses[0].split()) <= 3:
            clauses = clauses[1:]
        clauses = [x for c in clauses for x in _split_and(c, german, asian)]
        # "Always answer in Korean, and write comments in English": each request of an instruction is a statement
        standing = any(_standing(c) for c in clauses)
        for clause in clauses:
            named = _names(clause, german, asian)
            c = _LEAD.sub("", clause.strip(" .。!！:：")).strip()
            if not c or _CODE.fullmatch(c) or _GREETING.fullmatch(c):
                continue  # an error message or a name in backticks alone is output, not a statement
            if parts and len(c.split()) <= 2 and not asian:
                parts[-1][1] += ", " + c  # "…, pas Flask", "…, wegen JSONB": a detail of the clause before
                continue
            prev = parts[-1] if parts else (out[-1] if out else None)
            if prev and (_aside(c) or prev[2] or parts and _rule_pair(prev[1], c)):
                # what is dropped goes with what replaces it; "never X, always Y" is one rule
                prev[1] = _joined(prev[1], c, asian)
                prev[2] = prev[2] and _aside(c)
                continue
            cued = german and _CUED.search(c) and not _STILL.search(c)
            if named or cued or (headed and not out and not parts and len(c) > 8) or (
                    _words(c, asian) >= 3 and (_standing(c) or standing and _own_topic(c, asian))):
                parts.append([kind_of(_STILL.sub(" ", s)), _joined(topic, c, asian) if topic else c, _aside(c)])
                topic = ""
            elif parts:
                parts[-1][1] = _joined(parts[-1][1], c, asian)
            elif _words(c, asian) >= 3 and not headed and not _negated(c):
                topic = _joined(topic, c, asian) if topic else c
        out.extend(parts)
    return [(k, c) for k, c, aside in out if not (aside and _negated(c))]


# A change of state, by its from/to markers: "von MariaDB auf PostgreSQL 16 umgestiegen", "de Vercel à Railway",
# "dejamos Vercel y pasamos el hosting a Railway", "さくらのVPSから AWS Lightsail に移行", "Firebase 에서 Supabase
# 로 옮겼어요". A change verb must stand in the clause; the values are names (as `_names` reads them).
_CHANGE = re.compile(r"umgestiegen|gewechselt|migriert|umgezogen|\bpass(?:e|ons|é) (?:à|a|sur)|\bmigr[éeo]|"
                     r"\bbascul|\bpasamos|\bmigramos|\bcambiamos|\bmudamos|移行|変更|乗り換え|切り替え|옮겼|바꿨|"
                     r"변경|이전했|갈아탔", _I)
_VALUE = r"[\w.+#/-]*[A-Za-z0-9][\w.+#/-]*(?:\s+(?:[A-Z0-9][\w.+#/-]*))*"  # "PostgreSQL 16", "AWS Lightsail"
_FROM_TO = (
    re.compile(rf"\b(?:von|de|desde|from)\s+(?P<old>{_VALUE})\s+(?:auf|zu|nach|à|a|vers|para|to)\s+(?P<new>{_VALUE})"),
    re.compile(rf"\b(?i:abandonn\w*|dejamos|quitamos|verlassen)\s+(?P<old>{_VALUE}).*?\b(?:à|a|auf|para|vers)\s+"
               rf"(?:(?:el|la|los|las|le|les|den|die|das) (?P<subject>\w+) a\s+)?(?P<new>{_VALUE})"),
    re.compile(r"(?:(?P<subject>[^\s、,を]{1,12})を\s*)?(?P<old>[^\s、,を]+?)\s*から\s*(?P<new>[^、,]+?)\s*[にへ]"),
    re.compile(r"(?:(?P<subject>\S+?)[을를]\s+)?(?P<old>\S+)\s*에서\s+(?P<new>\S+(?:\s\d\S*)?)\s*(?:으로|로)\s"),
)


def change_of(clause: str) -> tuple[str | None, str, str] | None:
    """(subject or None, old, new) when the clause states a change of state, else None."""
    if not _CHANGE.search(clause):
        return None
    for pattern in _FROM_TO:
        m = pattern.search(clause)
        if m and m.group("old").strip() and m.group("new").strip():
            subject = (m.groupdict().get("subject") or "").strip() or None
            return subject, m.group("old").strip(), m.group("new").strip()
    return None
