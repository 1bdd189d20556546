"""Privacy filter: text -> (clean text, findings). Pure; stdlib only.

Provider token shapes are curated from the gitleaks default rule set and checked against each provider's
documented format:

    gitleaks (https://github.com/gitleaks/gitleaks), MIT License,
    Copyright (c) 2019 Zachary Rice.
    Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
    associated documentation files (the "Software"), to deal in the Software without restriction, including
    without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
    copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the
    following conditions: The above copyright notice and this permission notice shall be included in all
    copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF
    ANY KIND, EXPRESS OR IMPLIED.

Differences from gitleaks, on purpose:
- Tokens start at an ASCII boundary, not ``\\b``: ``密钥ghp_…`` has no word boundary in Unicode mode.
- Tokens take the whole run of the provider's alphabet (possessive ``{n,}+``) and need no end boundary, so a
  key followed by ``，`` ``。`` or ``)`` is caught whole and no tail survives a prefix match.
- Every quantifier that could backtrack is possessive or bounded: the engine stays linear on 1 MB lines.

Credentials written in code, configs and command lines (XML configs, mysql -p…, Client("AC…", token), …) are
found by memvault.redact.shapes; every rule belongs to a family (_FAMILIES) that findings carry.

Overlapping secret matches merge into one redaction named after the most specific rule. Emails and home
directories yield to secrets. Existing markers (``[REDACTED:…]``, ``[email]``) and ``data:image/…;base64,``
payloads are never matched again, which keeps ``redact`` idempotent.
"""

from __future__ import annotations

import bisect
import functools
import re
import string
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from memvault.errors import UsageError
from memvault.redact.shapes import KEY_IGNORE as _KEY_IGNORE
from memvault.redact.shapes import PLACEHOLDER as _PLACEHOLDER
from memvault.redact.shapes import STRONG_KEY as _STRONG_KEY
from memvault.redact.shapes import (CALL_ANCHORS, SERVER_WORDS, find_client_args, find_command_line,
                                    find_config_xml, find_generic_flag, find_server_config,
                                    find_user_slash_password, shaped)

__all__ = ["Finding", "Redaction", "Rules", "compile_rules", "default_rules", "redact", "count_by_rule"]


class Finding(NamedTuple):  # NamedTuple, not a dataclass: `dataclasses` costs ~8 ms at search start-up
    rule: str  # rule id
    start: int  # span in the ORIGINAL text
    end: int
    line: int  # 1-based line number in the original text
    family: str = ""  # the rule's family (provider-token, config, prose, command-line, …)


class Redaction(NamedTuple):
    text: str
    findings: tuple[Finding, ...]


Span = tuple[int, int]
Finder = Callable[[str, str], Iterable[Span]]  # (text, lowered text) -> spans

_SECRET, _EMAIL, _HOME = 0, 1, 2


class _Rule(NamedTuple):
    id: str
    find: Finder
    keywords: tuple[str, ...]  # lowercase literals; the rule runs only if one occurs in the lowered text
    kind: int = _SECRET
    family: str = ""  # filled from _FAMILIES by rule id (see below the table)


class Rules:
    """A compiled rule set. Opaque; build with compile_rules() or default_rules() and reuse."""

    __slots__ = ("_rules",)

    def __init__(self, rules: Sequence[_Rule]):
        self._rules = tuple(rules)

    def __repr__(self) -> str:
        return f"Rules({len(self._rules)} rules)"


# --------------------------------------------------------------------------- finder builders

_NOT_TOKEN = r"(?<![A-Za-z0-9_])"  # ASCII boundary: CJK and punctuation before a token are fine
_NOT_TOKEN_DASH = r"(?<![A-Za-z0-9_-])"


def _regex(*patterns: str, group: int | str = 0,
           check: Callable[[re.Match[str]], bool] | None = None) -> Finder:
    """Search each pattern. Patterns should open with a literal: _sre then scans for it in C, ~10x faster
    than trying a leading lookbehind at every position (so boundaries go after the literal, see _tok)."""
    rxs: list[re.Pattern[str]] = []

    def find(text: str, low: str) -> Iterator[Span]:
        if not rxs:  # compiled on first use: most rules never fire in a process (search start-up)
            rxs.extend(re.compile(p) for p in patterns)
        for rx in rxs:
            for m in rx.finditer(text):
                if check is not None and not check(m):
                    continue
                s, e = m.span(group)
                if e > s:
                    yield s, e

    return find


def _anchored(pattern: str, anchors: Sequence[str], back: str = "", check=None) -> Finder:
    """Case-insensitive rules with no literal to scan for: find the lowercase anchors with str.find (memchr
    speed) and try `pattern` only there, starting up to 40 `back` characters before the anchor."""
    compiled: list[Any] = []

    def find(text: str, low: str) -> Iterator[Span]:
        if not compiled:  # compiled on first use, like _regex
            compiled.extend((
                re.compile(pattern),
                re.compile("|".join(re.escape(a) for a in sorted(anchors, key=len, reverse=True))),
                frozenset(c for c in string.printable if re.fullmatch(f"[{back}]", c)) if back else frozenset(),
            ))
        rx, anchor_rx, back_set = compiled
        done = 0
        for a in anchor_rx.finditer(low):
            i = a.start()
            if i < done:
                continue
            start, floor = i, max(0, i - 40)
            while start > floor and text[start - 1] in back_set:
                start -= 1
            m = rx.match(text, start)
            if m is None:
                continue
            done = m.end()
            span = check(text, m) if check is not None else m.span()
            if span is not None and span[1] > span[0]:
                yield span

    return find


def _has_digit(s: str) -> bool:
    return any(c.isdigit() for c in s)


# --------------------------------------------------------------------------- PEM private keys

_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-----")
# Body of a block whose END line is missing: base64 chunks (>= 16 chars, a PEM line is 64) or "Name: value"
# header lines, separated by whitespace or JSON-escaped newlines; a short last chunk only if padded or alone
# on its line. Prose stops it: its words are short and separated by single spaces.
_PEM_BODY = re.compile(
    r"(?:(?:[ \t]|\r?\n|\\r|\\n)*+(?:[A-Za-z0-9+/]{16,}+={0,2}|[A-Z][A-Za-z-]{1,30}: [^\n\\]*+))*+"
    r"(?:(?:[ \t]|\r?\n|\\r|\\n)*+[A-Za-z0-9+/]{1,15}+(?:={1,2}|(?=[ \t]*(?:\r?\n|\\n|\Z))))?"
)
_PEM_MAX = 64 * 1024  # how far to look for END: a 16384-bit RSA key is ~12 KB of PEM


def _find_pem(text: str, low: str) -> Iterator[Span]:
    pos = 0
    while (m := _PEM_BEGIN.search(text, pos)) is not None:
        start, body = m.start(), m.end()
        nxt = _PEM_BEGIN.search(text, body, body + _PEM_MAX)
        limit = nxt.start() if nxt else len(text)
        end_m = _PEM_END.search(text, body, min(limit, body + _PEM_MAX))
        if end_m is not None:
            end = end_m.end()
        else:
            # Trigger: no END line (truncated paste). Why: the key material is still a secret.
            # Outcome: redact the key-shaped body after BEGIN, however long; stop at the first prose.
            end = _PEM_BODY.match(text, body, limit).end()
        yield start, end
        pos = end


# --------------------------------------------------------------------------- GCP service-account JSON

_GCP_SA = re.compile(r'"private_key"\s*+:\s*+"((?:[^"\\\n]++|\\.)*+)"?')


def _find_gcp_sa(text: str, low: str) -> Iterator[Span]:
    for m in _GCP_SA.finditer(text):
        s, e = m.span(1)
        if e - s >= 16:
            yield s, e


# --------------------------------------------------------------------------- Discord bot tokens

# No literal prefix to search for, so search the distinctive ".xxxxxx.<27+>" tail (literal '.', fast) and
# check the user-id part backwards.
_DISCORD_TAIL = re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}+")
_DISCORD_HEAD = re.compile(r"(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,27}$")


def _find_discord(text: str, low: str) -> Iterator[Span]:
    for m in _DISCORD_TAIL.finditer(text):
        s = m.start()
        head = _DISCORD_HEAD.search(text, max(0, s - 28), s)
        if head is not None and head.start() > 0 and _is_tokenish(text[head.start() - 1]):
            continue
        if head is not None:
            yield head.start(), m.end()


def _is_tokenish(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c in "_-")


# --------------------------------------------------------------------------- config / .env / JSON / YAML

_KEYWORD = (r"passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
            r"|auth[_-]?key|credentials?|(?<![A-Za-z])(?:ssh)?pass(?![A-Za-z])|(?<=[_.-])key(?![A-Za-z])")
_KEY_CHARS = "A-Za-z0-9_.-"
_ASSIGN = (
    r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z0-9_.-]{0,40}?(?i:" + _KEYWORD + r")[A-Za-z0-9_.-]{0,40}?)"
    r"(?P<kq>[\"'\]]?)[ \t]{0,8}(?P<sep>:=|=>|=(?![=~])|:(?![:/]))[ \t]{0,8}"
    r"(?P<val>\"(?P<dq>(?:[^\"\\\n]++|\\.)*+)\"|'(?P<sq>[^'\n]*+)'|(?P<bare>[^\s\"'`,;]++))"
)
_CODE_VALUE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|[()\[\]{}]")
_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")


def _assignment_value(text: str, m: re.Match[str]) -> Span | None:
    if _KEY_IGNORE.search(m["key"]):
        return None
    if m["bare"] is not None:
        group, val = "bare", m["bare"]
        if m["sep"] == ":":
            # A bare value after ':' must end the line (YAML); "Password: at least 8 chars" is prose.
            eol = text.find("\n", m.end(), m.end() + 200)
            rest = text[m.end():eol if eol >= 0 else m.end() + 200].strip()
            if rest and not rest.startswith(("#", "//", "}", "]")):
                return None
        if val.startswith(("$", "%", "@", "&", "*", "!", "#", "/", "~", "-")):
            return None
        # `password=config.db_password` is code; `PGPASSWORD=ab.Cd9` (an environment variable) is a value
        env_style = m["key"].isupper() and m["sep"] == "=" and text[m.start("sep") - 1] != " "
        if _CODE_VALUE.search(val) and not (env_style and "(" not in val):
            return None
        if text[m.start("sep") - 1] == " " and _IDENT.match(val) and not _has_digit(val):
            return None  # `password = password`: a variable, not a value
    else:
        group = "dq" if m["dq"] is not None else "sq"
        val = m[group]
    val = val.strip()
    if _PLACEHOLDER.match(val):
        return None
    if not _STRONG_KEY.search(m["key"]) and not shaped(val):
        return None  # token / api key / *_KEY: the value must look machine-made, not like a word or a number
    return m.span(group)


# --------------------------------------------------------------------------- prose (English, Chinese)

_PROSE_EN = (
    r"(?i)(?<![A-Za-z0-9_-])(?:password|passphrase|passcode|pin code|pin|api key|secret key|access key|token"
    r"|secret)s?"
    r"(?:(?:[ \t]+(?:for|of|to|on)[ \t]+[\w.'-]{1,30}(?:[ \t]+[\w.'-]{1,30}){0,2}?)?"
    r"[ \t]+(?P<verb>is|was|is now|will be|to|changed to|set to)[ \t]*:?[ \t]+"
    r"|[ \t]*:[ \t]*|(?P<bare>[ \t]+)(?=[^\s\"']{0,200}[0-9]))"
    r"(?P<val>(?P<q>[\"'“‘`「])?[^\s\"'“”‘’`「」]{4,}+[\"'”’`」]?)"
)
_ZH_VERB = r"(?:是|为|改成|改为|设为|设置为|设置成|设成|换成|变成|改了)了?"
_PROSE_ZH = (
    r"(?:(?P<kw>密码|口令|密钥|秘钥|私钥|令牌)(?P<mid>[\u4e00-\u9fff]{0,4}?)[ \t]*(?:" + _ZH_VERB + r"|:|：|=)"
    r"|(?P<glued>密码|口令)[ \t]*+(?=[!-~])"  # 账号 X 密码 Y, WiFi 密码 Y: no verb, no colon
    r"|(?i:password|passwd|api[ _-]?key|token|(?:aws[ _-]?)?secret(?:[ _-]?access[ _-]?key)?)[ \t]*(?:"
    + _ZH_VERB + r"|：))"
    r"[ \t]*[:：]?[ \t]*(?P<val>[\"'“‘`「『]?[!-~]{4,}+)"
)
_PROSE_TRAIL = ".,;:!?)]}\"'`”’」』"
_PROSE_STOP = frozenset(
    "incorrect wrong invalid expired required missing empty correct being still stored saved set reset changed "
    "long short weak strong secure hashed encrypted needed optional valid revoked leaked compromised rotated "
    "generated sent shown displayed hidden visible unique different same case-sensitive sensitive important "
    "never always usually not also only just the a an your my our their this that there here null none true "
    "false unknown sha256 base64 bearer basic json yaml https http sha1 sha512 md5 bcrypt argon2 argon2id "
    "pbkdf2 scrypt aes256 rsa2048 rsa4096 utf-8 utf8 ascii".split()
)
_ZH_MID_STOP = re.compile(r"长度|数量|个数|上限|大小|有效期|位数|格式|类型|哈希|散列|摘要|长|数|量")


def _prose_value(text: str, m: re.Match[str]) -> Span | None:
    s, e = m.span("val")
    val = m["val"]
    lead = 1 if val[:1] in "\"'“‘`「『" else 0
    trail = 0
    while trail < len(val) - lead and val[len(val) - 1 - trail] in _PROSE_TRAIL:
        trail += 1
    s, e = s + lead, e - trail
    v = text[s:e]
    if e - s < 4 or v.lower() in _PROSE_STOP or _PLACEHOLDER.match(v):
        return None
    return s, e


def _prose_en(text: str, m: re.Match[str]) -> Span | None:
    span = _prose_value(text, m)
    if span is None:
        return None
    v = text[span[0]:span[1]]
    # An unquoted lowercase word ("the token is expired") is prose; a secret has a digit, a symbol or an
    # inner capital.
    made = _has_digit(v) or not v.isalpha() or v[1:] != v[1:].lower()
    if v.startswith("!") and v[1:].isalpha():
        return None  # password: !vault (a YAML tag)
    if m["bare"] is not None and not (_has_digit(v) and not v.isdigit() and len(v) >= 6):
        return None  # `password reset123`-like prose needs a digit and a letter when there is no verb
    if (m["q"] is not None or made) and not _CODE_VALUE.search(v) and not v.startswith(("$", "<", "%")):
        return span
    return None


def _prose_zh(text: str, m: re.Match[str]) -> Span | None:
    if m["mid"] and _ZH_MID_STOP.search(m["mid"]):
        return None  # 密钥长度为4096位: a property of the key, not the key
    span = _prose_value(text, m)
    if span is None:
        return None
    v = text[span[0]:span[1]]
    if (v.isdigit() and len(v) < 6) or v.startswith(("http://", "https://", "$", "<", "%")):
        return None
    if m["glued"] is not None and not (_has_digit(v) or not v.isalnum()):
        return None  # 密码 RSA: no verb, so the value must not be a plain word
    return span


def _url_password(m: re.Match[str]) -> bool:
    """user:password@ in a URL, not a documentation placeholder (user:password@localhost, <user>:<token>@)."""
    pw = m["p"]
    if pw.endswith(":") or _PLACEHOLDER.match(pw) or pw.startswith(("$", "<", "%", "{")):
        return False
    return not (pw.isalpha() and pw.islower() and pw == m["u"])  # guest:guest, postgres:postgres


# --------------------------------------------------------------------------- emails, home directories

# Search from the '@' (a literal, fast) and check the local part backwards: a leading [local]+ would be
# tried at every position and go quadratic on long runs.
_EMAIL_AT = re.compile(r"@(?P<dom>(?:[A-Za-z0-9-]{1,63}+\.)+[A-Za-z]{2,24})(?![A-Za-z0-9-])(?!:[\w~./-])")
_EMAIL_LOCAL = re.compile(r"[A-Za-z0-9._%+-]{1,64}$")
_RETINA = re.compile(r"^\d+x\.")  # icon@2x.png is a file name


def _find_email(text: str, low: str) -> Iterator[Span]:
    for m in _EMAIL_AT.finditer(text):
        at = m.start()
        local = _EMAIL_LOCAL.search(text, max(0, at - 64), at)
        if local is None or _RETINA.match(m["dom"]):
            continue
        s = local.start()
        if s > 0 and text[s - 1] in "._%+-" or text[s - 1:s].isascii() and text[s - 1:s].isalnum():
            continue  # local part longer than 64: not an address
        if text[max(0, s - 3):s] == "://":
            continue  # ssh://git@host is a URL user, not an address
        yield s, m.end()


_HOME_UNIX = (r"/home/(?<![A-Za-z0-9_.~-]/home/)[A-Za-z0-9._-]{1,64}+",
              r"/Users/(?<![A-Za-z0-9_.~-]/Users/)[A-Za-z0-9._-]{1,64}+")
# Literal ':' first (fast scan), drive letter checked behind it; `users` in any case.
_HOME_WIN = re.compile(r":(?<=[A-Za-z]:)(?:\\{1,2}|/)(?i:users)(?:\\{1,2}|/)(?P<user>[\w.$-]{1,64}+)")
# Profiles that belong to no person: macOS /Users/Shared, Windows Public, Default, "All Users", Guest.
_NOT_A_PERSON = frozenset({"shared", "public", "default", "default user", "all", "all users", "guest"})
_unix_home = _regex(*_HOME_UNIX)


def _find_home_win(text: str, low: str) -> Iterator[Span]:
    for m in _HOME_WIN.finditer(text):
        s = m.start() - 1
        if m["user"].lower() in _NOT_A_PERSON:
            continue
        if s == 0 or not _is_tokenish(text[s - 1]):
            yield s, m.end()


_TELEGRAM = re.compile(r":A(?<=[0-9]:A)[A-Za-z0-9_-]{34,}+")
_DIGITS_BEFORE = re.compile(r"(?<![0-9])[0-9]{5,16}$")


def _find_telegram(text: str, low: str) -> Iterator[Span]:
    for m in _TELEGRAM.finditer(text):
        d = _DIGITS_BEFORE.search(text, max(0, m.start() - 17), m.start())
        if d is not None:
            yield d.start(), m.end()


def _find_home_unix(text: str, low: str) -> Iterator[Span]:
    for s, e in _unix_home(text, low):
        if text[s + 6:e].lower() in _NOT_A_PERSON or text[s + 7:e].lower() in _NOT_A_PERSON:
            continue  # /Users/Shared, /home/guest … hold no person's name
        if s > 0 and text[s - 1] == "/" and not text.endswith("file://", 0, s):
            continue  # https://host//home/… or a relative path, not a home directory
        yield s, e


# --------------------------------------------------------------------------- the rule table

def _tok(prefix: str, body: str, boundary: str = "A-Za-z0-9_") -> str:
    """A token: literal `prefix` not glued to a word before it, then `body` (the whole run, possessive)."""
    p = re.escape(prefix)
    return f"{p}(?<![{boundary}]{p})" + body


def _tok_re(prefix_re: str, width: int, body: str, boundary: str = "A-Za-z0-9_") -> str:
    """Like _tok for a prefix regex of fixed `width`."""
    return f"{prefix_re}(?<![{boundary}].{{{width}}})" + body


_DASH = "A-Za-z0-9_-"

# Order is specificity: where matches overlap, the merged redaction is named after the earliest rule.
_BUILTIN: tuple[_Rule, ...] = (
    _Rule("gcp-service-account", _find_gcp_sa, ('"private_key"',)),
    _Rule("private-key", _find_pem, ("-----begin",)),
    _Rule("anthropic-api-key", _regex(_tok("sk-ant-", r"[A-Za-z0-9_-]{20,}+", _DASH)), ("sk-ant-",)),
    _Rule("openai-api-key", _regex(_tok(
        "sk-", r"(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}+|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9_-]{20,}+)",
        _DASH)), ("sk-",)),
    _Rule("deepseek-api-key", _regex(_tok("sk-", r"[0-9a-f]{32}(?![A-Za-z0-9_-])", _DASH)), ("sk-",)),
    _Rule("sk-api-key", _regex(_tok("sk-", r"[A-Za-z0-9_-]{20,}+", _DASH), check=lambda m: _has_digit(m[0][3:])),
          ("sk-",)),
    _Rule("aws-access-key-id", _regex(
        _tok_re("(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)", 4, r"[A-Z0-9]{16,}+(?![a-z])")),
        ("akia", "asia", "abia", "acca", "a3t")),
    _Rule("aws-secret-access-key", _anchored(
        r"(?i:aws[_ .-]?secret[_ .-]?(?:access[_ .-]?)?key|secret[_ -]?access[_ -]?key)"
        r"[\"'\]]?[ \t]*(?:=>|:=|[:=：]|is|是|为)[ \t]*[\"'“「]?(?P<s>[A-Za-z0-9/+]{30,}+={0,2})", ("aws", "secret"),
        check=lambda text, m: m.span("s")), ("secret",)),
    _Rule("github-fine-grained-pat", _regex(_tok("github_pat_", r"[A-Za-z0-9_]{50,}+")), ("github_pat_",)),
    _Rule("github-pat", _regex(_tok("ghp_", r"[A-Za-z0-9]{30,}+")), ("ghp_",)),
    _Rule("github-oauth", _regex(_tok("gho_", r"[A-Za-z0-9]{30,}+")), ("gho_",)),
    _Rule("github-app-token", _regex(_tok_re("gh[su]_", 4, r"[A-Za-z0-9]{30,}+")), ("ghs_", "ghu_")),
    _Rule("github-refresh-token", _regex(_tok("ghr_", r"[A-Za-z0-9]{30,}+")), ("ghr_",)),
    *(_Rule("gitlab-token", _regex(_tok(p, r"[A-Za-z0-9_-]{20,}+(?:\.[A-Za-z0-9_-]++)*+")), (p.lower(),))
      for p in ("glpat-", "gldt-", "glrt-", "glft-", "glsoat-", "glffct-", "glimt-", "glagent-", "gloas-",
                "glcbt-", "glptt-", "GR1348941")),
    _Rule("slack-webhook", _regex(
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}+",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}+"), ("hooks.slack.com",)),
    _Rule("slack-token", _regex(_tok_re("xox[abposre]-", 5, r"[A-Za-z0-9-]{10,}+")), ("xox",)),
    _Rule("slack-app-token", _regex(_tok_re(r"xapp-\d-", 7, r"[A-Za-z0-9-]{10,}+")), ("xapp-",)),
    _Rule("stripe-key", _regex(
        _tok_re("[sr]k_(?:live|test|prod)_", 8, r"(?![xX]{4})[A-Za-z0-9]{10,}+"),
        _tok("whsec_", r"[A-Za-z0-9]{20,}+")), ("k_live_", "k_test_", "k_prod_", "whsec_")),
    _Rule("gcp-api-key", _regex(_tok("AIza", r"[A-Za-z0-9_-]{30,}+")), ("aiza",)),
    _Rule("gcp-oauth-secret", _regex(_tok("GOCSPX-", r"[A-Za-z0-9_-]{20,}+")), ("gocspx-",)),
    _Rule("gcp-oauth-token", _regex(_tok("ya29.", r"[A-Za-z0-9_-]{30,}+")), ("ya29.",)),
    _Rule("azure-storage-key", _anchored(
        r"(?i:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/]{20,}+={0,2})", ("accountkey=", "sharedaccesskey="),
        check=lambda text, m: m.span("s")), ("accountkey=", "sharedaccesskey=")),
    _Rule("twilio-api-key", _regex(_tok("SK", r"[0-9a-fA-F]{32}(?![A-Za-z0-9])")), ("sk",)),
    _Rule("twilio-account-sid", _regex(_tok("AC", r"[0-9a-f]{32}(?![A-Za-z0-9])")), ("ac",)),
    _Rule("sendgrid-api-key", _regex(_tok("SG.", r"[A-Za-z0-9_-]{16,}+\.[A-Za-z0-9_-]{16,}+")), ("sg.",)),
    _Rule("npm-token", _regex(_tok("npm_", r"[A-Za-z0-9]{36,}+")), ("npm_",)),
    _Rule("pypi-token", _regex(_tok("pypi-AgEIcHlwaS5vcmc", r"[A-Za-z0-9_-]{50,}+")), ("pypi-",)),
    _Rule("huggingface-token", _regex(_tok("hf_", r"[A-Za-z0-9]{30,}+"), _tok("api_org_", r"[A-Za-z0-9]{30,}+")),
          ("hf_", "api_org_")),
    _Rule("telegram-bot-token", _find_telegram, (":a",)),
    _Rule("discord-webhook", _regex(
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}+"),
        ("discord",)),
    _Rule("discord-bot-token", _find_discord, (".",)),
    _Rule("jwt", _regex(_tok("eyJ", r"[A-Za-z0-9_-]{10,}+\.eyJ[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]*+={0,2}")),
          ("eyj",)),
    _Rule("digitalocean-token", _regex(_tok_re("do[opr]_v1_", 7, r"[a-f0-9]{64,}+")), ("_v1_",)),
    _Rule("shopify-token", _regex(_tok_re("shp(?:at|ca|pa|ss)_", 6, r"[a-fA-F0-9]{32,}+")), ("shp",)),
    _Rule("groq-api-key", _regex(_tok("gsk_", r"[A-Za-z0-9]{40,}+")), ("gsk_",)),
    _Rule("perplexity-api-key", _regex(_tok("pplx-", r"[A-Za-z0-9]{40,}+")), ("pplx-",)),
    _Rule("linear-api-key", _regex(_tok("lin_api_", r"[A-Za-z0-9]{40,}+")), ("lin_api_",)),
    _Rule("age-secret-key", _regex(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58,}+"),
          ("age-secret-key-1",)),
    _Rule("authorization-header", _anchored(
        r"(?i)(?<![A-Za-z0-9_])authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?:(?:bearer|basic|token|digest|negotiate|apikey|api-key|ssws|sso-key)[ \t]+)?"
        r"(?P<s>[A-Za-z0-9._~+/=:-]{8,}+)", ("authorization",),
        check=lambda text, m: m.span("s") if not _PLACEHOLDER.match(m["s"])
        and (_has_digit(m["s"]) or len(m["s"]) >= 20) else None), ("authorization",)),
    _Rule("bearer-token", _anchored(
        r"(?i)(?<![A-Za-z0-9_-])bearer[ \t]+(?P<s>[A-Za-z0-9._~+/-]{16,}+=*)", ("bearer",),
        check=lambda text, m: m.span("s") if _has_digit(m["s"]) and not _PLACEHOLDER.match(m["s"]) else None),
        ("bearer",)),
    _Rule("url-credentials", _regex(
        r"://(?<=[A-Za-z0-9]://)(?P<s>(?P<u>[^\s:/?#@\[\]]{0,256}+):(?P<p>[^\s/?#@]{1,256}+))@", group="s",
        check=_url_password), ("://",)),
    _Rule("password-assignment", _anchored(
        _ASSIGN, ("pass", "pwd", "secret", "token", "key", "credential"), back=_KEY_CHARS, check=_assignment_value),
        ("pass", "pwd", "secret", "token", "key", "credential")),
    _Rule("config-secret", find_config_xml, ("</", "<add")),
    _Rule("config-secret", find_server_config, SERVER_WORDS),
    _Rule("command-line-secret", find_command_line, (" -",)),
    _Rule("command-line-secret", find_generic_flag, ("--",)),
    _Rule("client-args-secret", find_client_args, CALL_ANCHORS),
    _Rule("password-prose", find_user_slash_password, ("cred", "login", "密码")),
    _Rule("password-prose", _anchored(
        _PROSE_EN, ("pass", "pin", "api", "secret", "access", "token"), check=_prose_en),
        ("pass", "pin", "api key", "secret", "access key", "token")),
    _Rule("password-prose", _anchored(
        _PROSE_ZH, ("密码", "口令", "密钥", "秘钥", "私钥", "令牌", "pass", "api", "token", "secret"), check=_prose_zh),
        ("密码", "口令", "密钥", "秘钥", "私钥", "令牌", "pass", "api", "token", "secret")),
    _Rule("email", _find_email, ("@",), _EMAIL),
    _Rule("home-dir", _find_home_unix, ("/home/", "/users/"), _HOME),
    _Rule("home-dir", _find_home_win, (":\\", ":/users"), _HOME),
)

# Every rule id belongs to one family; `memvault redact --json` names it. Ids not listed are provider tokens.
_FAMILIES = {
    "gcp-service-account": "private-key", "private-key": "private-key",
    "authorization-header": "http-auth", "bearer-token": "http-auth", "url-credentials": "url-credentials",
    "password-assignment": "config", "config-secret": "config", "aws-secret-access-key": "config",
    "azure-storage-key": "config", "command-line-secret": "command-line", "client-args-secret": "client-args",
    "password-prose": "prose", "email": "personal-data", "home-dir": "personal-data",
}
_BUILTIN = tuple(r._replace(family=_FAMILIES.get(r.id, "provider-token")) for r in _BUILTIN)

_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]{1,64}\]|\[email\]")
_DATA_IMAGE = re.compile(r"data:image/[\w.+-]{1,40};base64,[A-Za-z0-9+/=\s]++")
_REPLACEMENT = {_EMAIL: "[email]", _HOME: "~"}
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


# --------------------------------------------------------------------------- public API

def compile_rules(deny: Sequence[str] = ()) -> Rules:
    """Built-in rules plus the user's deny regexes (memvault.yaml `redact.deny`), ids user-deny-1, -2, …"""
    extra = []
    for i, pattern in enumerate(deny, start=1):
        try:
            rx = re.compile(pattern)
        except (re.error, TypeError) as exc:
            # The pattern is configuration, not captured text, but its index is all a person needs.
            raise UsageError(f"redact.deny pattern #{i} is not a valid regular expression: {exc}") from None
        extra.append(_Rule(f"user-deny-{i}", _deny_finder(rx), (), family="user-deny"))
    return Rules(_BUILTIN + tuple(extra))


def _deny_finder(rx: re.Pattern[str]) -> Finder:
    def find(text: str, low: str) -> Iterator[Span]:
        for m in rx.finditer(text):
            if m.end() > m.start():
                yield m.span()

    return find


@functools.cache
def default_rules() -> Rules:
    return Rules(_BUILTIN)


def redact(text: str, rules: Rules | None = None) -> Redaction:
    """Replace every secret, email and home directory in `text`; spans in findings refer to `text`."""
    rules = rules or default_rules()
    low = text.lower()
    if len(low) != len(text):
        # A few characters lower to two (İ -> i̇); anchors found in `low` must index `text`.
        low = text.translate(_ASCII_LOWER)
    protected = [m.span() for m in _MARKER.finditer(text)] if "[" in text else []
    if "data:image/" in text:
        protected += [m.span() for m in _DATA_IMAGE.finditer(text)]
        protected.sort()

    secrets: list[tuple[int, int, int]] = []  # start, end, rule index (lower = more specific)
    soft: list[tuple[int, int, int]] = []
    present: dict[str, bool] = {}  # rules share keywords; each costs a scan of the text
    for idx, rule in enumerate(rules._rules):
        if rule.keywords and not any(present[k] if k in present else present.setdefault(k, k in low)
                                     for k in rule.keywords):
            continue
        for s, e in rule.find(text, low):
            for ps, pe in _outside(s, e, text, protected):
                (secrets if rule.kind == _SECRET else soft).append((ps, pe, idx))
    if not secrets and not soft:
        return Redaction(text, ())

    chosen = _merge(secrets)
    chosen += _fit(soft, chosen)
    chosen.sort()

    out: list[str] = []
    findings: list[Finding] = []
    pos, line = 0, 1
    for s, e, idx in chosen:
        rule = rules._rules[idx]
        out.append(text[pos:s])
        out.append(_REPLACEMENT.get(rule.kind) or f"[REDACTED:{rule.id}]")
        line += text.count("\n", pos, s)
        findings.append(Finding(rule.id, s, e, line, rule.family))
        line += text.count("\n", s, e)
        pos = e
    out.append(text[pos:])
    return Redaction("".join(out), tuple(findings))


def count_by_rule(findings: Iterable[Finding]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.rule] = counts.get(f.rule, 0) + 1
    return dict(sorted(counts.items()))


def redact_tree(data: Any, rules: Rules | None = None) -> Any:
    """Every string inside nested dicts/lists/tuples redacted: output of reading commands (show, timeline,
    graph) is filtered once more, for vaults written by older versions or by hand."""
    if isinstance(data, str):
        return redact(data, rules).text if data else data
    if isinstance(data, dict):
        return {k: redact_tree(v, rules) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(redact_tree(v, rules) for v in data)
    return data


# --------------------------------------------------------------------------- span arithmetic

def _outside(s: int, e: int, text: str, protected: list[Span]) -> Iterator[Span]:
    """The parts of [s, e) outside protected spans that still hold something worth hiding."""
    if not protected:
        yield s, e
        return
    i = bisect.bisect_right(protected, (s, len(text) + 1)) - 1
    i = max(i, 0)
    cur = s
    while i < len(protected) and protected[i][0] < e:
        ps, pe = protected[i]
        if pe > cur:
            if ps > cur:
                yield from _worth(cur, min(ps, e), text)
            cur = max(cur, pe)
        i += 1
    if cur < e:
        yield from _worth(cur, e, text)


def _worth(s: int, e: int, text: str) -> Iterator[Span]:
    if any(c.isalnum() for c in text[s:e]):
        yield s, e


def _merge(spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Union overlapping secret spans; the merged span keeps the most specific rule."""
    spans.sort()
    merged: list[list[int]] = []
    for s, e, idx in spans:
        if merged and s < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], e)
            last[2] = min(last[2], idx)
        else:
            merged.append([s, e, idx])
    return [(s, e, idx) for s, e, idx in merged]


def _fit(soft: list[tuple[int, int, int]], taken: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Emails and home directories that overlap no secret and no earlier soft match."""
    starts = [s for s, _, _ in taken]
    ends = [e for _, e, _ in taken]
    out: list[tuple[int, int, int]] = []
    last_end = -1
    for s, e, idx in sorted(soft, key=lambda t: (t[0], t[2])):
        if s < last_end:
            continue
        i = bisect.bisect_right(starts, s) - 1
        if i >= 0 and ends[i] > s:
            continue
        j = bisect.bisect_left(starts, s)
        if j < len(starts) and starts[j] < e:
            continue
        out.append((s, e, idx))
        last_end = e
    return out
