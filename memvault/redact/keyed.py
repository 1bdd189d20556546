"""Values next to key-like names in ANY syntax, judged by their shape; and Kubernetes Secret manifests.

Pure; stdlib and memvault.redact.names/shapes/tokens only. The older finders (finders.ASSIGN, shapes.find_config_xml)
know the common `key = value` forms one by one. `find_keyed` instead finds every identifier that names a secret
(api_key, xToken, X-Signing-Secret, db.password, PGPASSWORD, …), reads whatever glue follows it in any language
(`=`, `:=`, `::=`, `:::=`, `?=`, `.=`, `=>`, `:`, `,` after a quoted key, a type annotation such as
`: String =` or Go's `string =`, `>` of an XML element even across lines, a YAML block scalar, `name: … value:`
pairs) and then judges the value itself: placeholders, code, paths and words stay; a machine-made value
(not words, enough entropy) goes, and next to a strong name (password, secret) so does a made-up password.
So a form nobody listed is still caught, and prose that merely names a secret is left alone.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator

from memvault.redact.names import CAMEL, NAMED, STRONG, WEAK, key_strength
from memvault.redact.shapes import PLACEHOLDER, Lazy, find_words
from memvault.redact.tokens import placeholder_token

Span = tuple[int, int]

ANCHORS = ("pass", "pwd", "secret", "token", "key", "credential", "auth", "creds")
_IDENT_BACK = Lazy(r"[A-Za-z0-9_.$-]*")
_IDENT_FWD = Lazy(r"[A-Za-z0-9_.-]{0,60}")
# Glue after the key name, then the value. `op` is empty for whitespace-separated forms (ENV K v, #define K "v").
_GLUE = Lazy(
    r"(?P<kq>\\?[\"'`])?\]?"
    r"(?:[ \t]*:[ \t]*&?'?[A-Za-z_][\w\[\]<>.]{0,24}[ \t]*(?==))?"  # : String =   : &str =   : Final[str] =
    r"(?(kq)|(?:[ \t]+(?:\[\])?(?:string|int\d*|uint\d*|bool|float\d*|byte|rune|any)[ \t]*(?==))?)"  # Go: var x string =
    r"[ \t]*(?P<op>:::=|::=|:=|\?=|\+=|\.=|\|\|=|\?\?=|=>|->|<<?-|(?<=[ \t])-(?=[ \t])|=(?!=)|(?<=[A-Za-z0-9_])=(?==[^=\s])"
    r"|:(?![:/\\])|,|>)?"
    r"(?P<gap>[ \t]*(?:[|>][-+]?[ \t]*)?(?:\r?\n[ \t]*)?(?:(?:new[ \t]+)?[A-Za-z_][\w:.]{0,24}\((?=\\?[\"'`]))?)"
    r"(?:(?P<q>\\?[\"'`])(?P<qv>[^\"'`\\\n]{1,300})(?P<qe>\\?[\"'`])"
    r"|(?P<bv>[^\s\"'`,;<>(){}\[\]&|\\]{1,300}))"
)
# `- name: API_TOKEN` / `value: "…"`, `name="db.password" value="…"`, Terraform `variable "x" { default = "…" }`
_PAIR = Lazy(
    r"(?P<kq>[\"'])?[ \t]*\{?[ \t]*(?:[^\n]{0,60}\n){0,3}?[ \t]*-?[ \t]*(?i:value|default|content)[\"']?[ \t]*[:=][ \t]*"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\\\n]{1,300})(?P=q)|(?P<bv>[^\s\"'`,;<>(){}\[\]&|\\]{1,300}))"
)
_PAIR_LEAD = Lazy(r"(?i:name|key)[\"']?[ \t]*[:=][ \t]*[\"']?$")
_PLIST = Lazy(r"</key>\s{0,40}<string>(?P<v>[^<\n]{1,300})</string>")  # <key>apiToken</key><string>…</string>
_CODE_REF = Lazy(r"(?:os\.|process\.env|system\.getenv|env\.|environ|getenv|settings\.|config\.|secrets\.|vars\.)",
                 re.I)
_IDENT_CHAIN = Lazy(r"^[A-Za-z_$@][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*$")
_PATHLIKE = Lazy(r"^(?:~|\.{1,2}|[A-Za-z]:)?(?:[/\\][\w.@+-]+)+[/\\]?$|^[\w.-]+\.(?:pem|key|json|txt|crt|p12|pfx|env"
                 r"|ya?ml|toml|ini|conf|cfg|gpg|asc|jks|keystore|der|csr|pub)$")
_GENERIC_PH = frozenset(
    "changeme change_me replace_me replaceme todo tbd dummy example sample test testing secret password passwd "
    "token apikey api_key key none null nil undefined placeholder redacted hidden masked default empty notset "
    "not_set unset your_key your_token mysecret my_secret mypassword my_password foobar foo bar baz xyz abc qwerty "
    "letmein admin root guest user".split())


def entropy(v: str) -> float:
    """Shannon entropy per character of (the first 64 characters of) `v`."""
    v = v[:64]
    n = len(v)
    return -sum(k / n * math.log2(k / n) for k in map(v.count, set(v)))


_NON_ALNUM = Lazy(r"[^A-Za-z0-9]+")
_INTERLEAVED = Lazy(r"[A-Za-z](?=\d)|\d(?=[A-Za-z])")
_VOWEL = Lazy(r"[aeiouyAEIOUY]")
_DIGIT = Lazy(r"\d")


def wordy(v: str) -> bool:
    """Made of words and small numbers (a phrase, an identifier, a path), not of random characters."""
    for part in _NON_ALNUM.split(v[:96]):
        if len(_INTERLEAVED.findall(part)) >= 3:
            return False  # letters and digits interleaved: HJSOMX93AIN945TY, not py311 or sha256
        for chunk in CAMEL.findall(part):
            if chunk.isdigit():
                if len(chunk) > 4:
                    return False
            elif len(chunk) < 2 and part != chunk or len(chunk) > 16 or len(chunk) > 5 and not _VOWEL.search(chunk):
                return False  # smtp, http, pwd are words here; xkcdqrtz is not
    return True


@functools.lru_cache(maxsize=8192)
def machine_made(v: str) -> bool:
    """Random-looking: long enough, not words, more than one kind of character, enough entropy per character."""
    if len(v) < 8 or v.isdigit():
        return False
    kinds = (v != v.upper()) + (v != v.lower()) + (_DIGIT.search(v) is not None) + (not v.isalnum())
    return kinds >= 2 and not wordy(v) and entropy(v) >= min(3.0, 0.75 * math.log2(len(v)))


@functools.lru_cache(maxsize=8192)
def placeholder_value(v: str) -> bool:
    low = v.lower()
    return (PLACEHOLDER.match(v) is not None or low.strip("_-. ") in _GENERIC_PH or placeholder_token(v, loose=True)
            or v.startswith(("$", "%", "{", "<", "#")) or "${" in v or "{{" in v
            or re.fullmatch(r"[!*&@][A-Za-z_][\w.-]*", v) is not None and wordy(v[1:]))  # YAML tag, alias


_NAME_PART = Lazy(r"[a-z]*[aeiouy][a-z]*$|[a-z0-9]{0,3}$|\d{1,4}$")
_SEPS = Lazy(r"[._-]")
_OBJECT_ID = Lazy(r"[a-z]{2,8}_")  # cus_…, evt_…: a service's object id


def random_beyond_doubt(v: str) -> bool:
    """A value no one types and no system uses as a name: 24+ characters mixing upper case, lower case and
    digits, not words, high entropy (a UUID, a hex hash, a nanoid of 21 or a YouTube id fail)."""
    return (len(v) >= 24 and machine_made(v) and not _OBJECT_ID.match(v) and v != v.lower() and v != v.upper()
            and _DIGIT.search(v) is not None and entropy(v) >= 3.8)


@functools.lru_cache(maxsize=8192)
def value_is_secret(strength: int, v: str, quoted: bool, after: str) -> bool:
    """Is `v`, assigned to a name of this strength, a secret? `after` is the character following a bare value."""
    if len(v) < 4 or " " in v or "://" in v:
        return False
    if strength == NAMED:
        return random_beyond_doubt(v) and not placeholder_value(v)
    if v.islower() and "." in v and all(_NAME_PART.match(p) for p in _SEPS.split(v)):
        return False  # jetbrains.mps.v8_elimination: a dotted name, not a value
    if not quoted and (after and after in "(.[" or _IDENT_CHAIN.match(v) and _DIGIT.search(v) is None):
        return False  # code: a call, an attribute, a variable
    if machine_made(v):
        secret = len(v) >= 10 or strength == STRONG
    elif strength == STRONG:
        # a password someone made up: words need a digit or a symbol (Velvet-Orbit-42, not current-password)
        secret = len(v) >= 6 and re.search(r"[0-9]|[^A-Za-z0-9_.-]", v) is not None
    else:
        secret = False
    if not secret or placeholder_value(v) or _CODE_REF.match(v):
        return False
    return not (_PATHLIKE.match(v) and wordy(v.replace("/", " ").replace("\\", " ")))


def find_keyed(text: str, low: str) -> Iterator[Span]:
    done = 0
    n = len(text)
    rev = None  # the text reversed: the name's start is found by one C-level match backwards
    back = _IDENT_BACK.match
    fwd = _IDENT_FWD.match
    # same context, same answer (repeated lines cost one look): (relative span or None, relative end of the value)
    seen: dict[tuple[int, int, str], tuple[tuple[int, int] | None, int]] = {}
    for i in find_words(low, ANCHORS):  # str.find per anchor: memchr speed
        if i < done:
            continue
        if rev is None:
            rev = text[::-1]
        s = i - (back(rev, n - i, n - max(0, i - 60)).end() - (n - i))
        e = fwd(text, i).end()
        while e > s and text[e - 1] in ".-":  # `password.` ends a sentence, `token-` a word
            e -= 1
        done = e
        ident = text[s:e].lstrip("$@.-")
        if not ident or (s > 0 and text[s - 1].isascii() and (text[s - 1].isalnum() or text[s - 1] == ":")):
            continue  # glued to a word, or a segment of arn:…:secret:name
        if text.startswith("</", s - 2):
            continue  # a closing tag: its value, if any, was read at the opening one
        strength = key_strength(ident)
        if not strength:
            continue
        lo = max(0, s - 16)
        ctx = (s - lo, e - lo, text[lo:e + _WINDOW + 41])  # all that _value may read
        if ctx in seen:
            rel, rel_end = seen[ctx]
            span, end = (None if rel is None else (rel[0] + lo, rel[1] + lo)), rel_end + lo
        else:
            span, end = _value(text, s, e, strength)
            seen[ctx] = (None if span is None else (span[0] - lo, span[1] - lo)), end - lo
        done = max(done, end)  # a name inside the value just read is no key of its own
        if span is not None:
            yield span


_WINDOW = 300
# the name, its glue, and 24 characters a random value is made of, all checked in C before any Python runs
_ID_RX = Lazy(r"(?:id|user|uid)(?=[\"'`\]]?[ \t]*(?:[:=>]|-[ \t>])[=>]?[ \t]*(?:\r?\n[ \t]*)?[\"'`]?"
              r"[A-Za-z0-9+/=_.~-]{24})")
_ID_WORDS = ("id", "user", "uid")


def find_id_keyed(text: str, low: str) -> Iterator[Span]:
    """Values of names that name no secret (id, user, client_id, <id>…</id>), when random beyond doubt."""
    done = 0
    for a in _ID_RX.finditer(low):
        e = a.end()
        if e <= done:
            continue
        s = a.start()
        while s > max(0, e - 60) and (text[s - 1].isalnum() or text[s - 1] in "_.-"):
            s -= 1
        ident = text[s:e]
        words = CAMEL.findall(ident.split("_")[-1].split(".")[-1].split("-")[-1])
        if not ident or not words or words[-1].lower() not in _ID_WORDS or key_strength(ident):
            continue
        span, done = _value(text, s, e, NAMED)
        if span is not None:
            yield span
_CLOSE_TAG = Lazy(r"\s*</")


def _value(text: str, s: int, e: int, strength: int) -> tuple[Span | None, int]:
    """The secret value after the name at [s, e), if any; and where the value that was read ends."""
    xml = s > 0 and text[s - 1] == "<"
    quoted_key = s > 0 and text[s - 1] in "\"'`"
    stop = min(len(text), e + _WINDOW)
    end = e
    m = _GLUE.match(text, e, stop)
    if m is not None:
        op, gap = m["op"] or "", m["gap"]
        ok = True
        if op == ">" and not (xml or quoted_key) or op == "," and not quoted_key:
            ok = False
        if "\n" in gap and op not in (">", ":") and not gap.strip(" \t\r\n").startswith(("|", ">")):
            ok = False
        if op == ":" and "\n" in gap and not gap.strip(" \t\r\n"):
            ok = False  # `password:` then a nested mapping
        if not op:
            # whitespace only: `ENV API_KEY value`, `#define API_KEY "v"`, `(def api-key "v")`, `PASSWORD 'v'`
            ok = "\n" not in gap and (m["q"] is not None or text[s:e].isupper() and "_" in text[s:e])
        if op == ">" and not _CLOSE_TAG.match(text, m.end(), min(len(text), m.end() + 40)):
            ok = False  # <password>value</password>, not <password>@host
        if ok:
            span = _judge(text, m, strength)
            if span is not None:
                return span, span[1]
            if m["qv"] is not None and "\n" not in gap and not _IDENT_FWD.fullmatch(m["qv"]):
                end = m.end()  # `api_key="x=…"` was read and is no secret; `key="db.password"` names the next key
    if text.endswith("<key>", 0, s) and (p := _PLIST.match(text, e)) is not None:
        v = p["v"].strip()
        if value_is_secret(strength, v, True, ""):
            start = p.start("v") + p["v"].index(v)
            return (start, start + len(v)), start + len(v)
    if quoted_key or _PAIR_LEAD.search(text, max(0, s - 16), s):
        p = _PAIR.match(text, e, stop)
        if p is not None:
            span = _judge(text, p, strength)
            if span is not None:
                return span, span[1]
    return None, end


def _judge(text: str, m: re.Match[str], strength: int) -> Span | None:
    if m["qv"] is not None:
        if m.groupdict().get("qe") is not None and m["qe"][-1] != m["q"][-1]:
            return None
        v, span, quoted, after = m["qv"], m.span("qv"), True, ""
    else:
        v, span, quoted = m["bv"], m.span("bv"), False
        after = text[span[1]:span[1] + 1]
    stripped = v.rstrip(".")
    if stripped != v and not quoted:
        span = (span[0], span[0] + len(stripped))
        v = stripped
    return span if value_is_secret(strength, v, quoted, after) else None


# --------------------------------------------------------------------------- Kubernetes Secret manifests

_K8S_KIND = Lazy(r"kind[\"']?[ \t]*:[ \t]*[\"']?Secret[\"']?[ \t]*,?[ \t]*(?:\r?\n|$)")
_YAML_DATA = Lazy(r"(?m)^(?P<ind>[ \t]*)(?P<kind>data|stringData):[ \t]*\r?$")
_YAML_ENTRY = Lazy(r"(?m)^(?P<ind>[ \t]+)[\"']?[\w.-]+[\"']?[ \t]*:[ \t]*(?:(?P<q>[\"'])(?P<qv>[^\"'\n]*)(?P=q)"
                   r"|(?P<bv>[^\s#][^\n#]*?))[ \t]*\r?$")
_JSON_DATA = Lazy(r"\"(?P<kind>data|stringData)\"[ \t]*:[ \t]*\{(?P<body>[^{}]{0,8000})\}")
_JSON_ENTRY = Lazy(r"\"[\w.-]+\"[ \t\r\n]*:[ \t\r\n]*\"(?P<v>[^\"\\]*)\"")


def find_k8s_secret(text: str, low: str) -> Iterator[Span]:
    """Every value under `data:` / `stringData:` of a `kind: Secret` manifest (YAML or JSON)."""
    for k in _K8S_KIND.finditer(text):
        line = text[text.rfind("\n", 0, k.start()) + 1:k.start()]
        if line.strip(" \t\"'{"):
            continue  # `kind: Secret` must open its line (a YAML key, or a JSON member)
        lo = text.rfind("\n---", 0, k.start()) + 1
        hi = text.find("\n---", k.end())
        hi = len(text) if hi < 0 else hi
        lo, hi = max(lo, k.start() - 8000), min(hi, k.end() + 8000)
        for d in _YAML_DATA.finditer(text, lo, hi):
            pos, ind = d.end() + 1, len(d["ind"])
            while pos < hi:
                ent = _YAML_ENTRY.match(text, pos, hi)
                if ent is None or len(ent["ind"]) <= ind:
                    break
                v, span = (ent["qv"], ent.span("qv")) if ent["qv"] is not None else (ent["bv"], ent.span("bv"))
                if _k8s_value(v, d["kind"]):
                    yield span
                pos = ent.end() + 1
        for d in _JSON_DATA.finditer(text, lo, hi):
            for ent in _JSON_ENTRY.finditer(d["body"]):
                if _k8s_value(ent["v"], d["kind"]):
                    base = d.start("body")
                    yield base + ent.start("v"), base + ent.end("v")


def _k8s_value(v: str, kind: str) -> bool:
    v = v.strip()
    if len(v) < 4 or placeholder_value(v):
        return False
    if kind == "data":
        return re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", v) is not None
    return True
