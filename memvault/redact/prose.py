"""Secrets named in a sentence: "the password is …", "密码是 …", "token: …". Pure; stdlib, redact.shapes/finders.

English and Chinese patterns each pair with a check that turns a match into the span of the value, or None
when the value is prose itself (a plain word, a placeholder, a property of the key such as 密钥长度为4096位).
"""

from __future__ import annotations

import re

from memvault.redact.finders import CODE_VALUE, Span
from memvault.redact.shapes import PLACEHOLDER, Lazy, has_digit
from memvault.redact.tokens import placeholder_token

PROSE_EN = (
    r"(?i)(?<![A-Za-z0-9_-])(?:password|passphrase|passcode|pin code|pin|api key|secret key|access key|token"
    r"|secret)s?"
    r"(?:(?:[ \t]+(?:for|of|to|on)[ \t]+[\w.'-]{1,30}(?:[ \t]+[\w.'-]{1,30}){0,2}?)?"
    r"[ \t]+(?P<verb>is|was|is now|will be|to|changed to|set to)[ \t]*:?[ \t]+"
    r"|[ \t]*:[ \t]*|(?P<bare>[ \t]+)(?=[^\s\"']{0,200}[0-9]))"
    r"(?P<val>(?P<q>[\"'“‘`「])?[^\s\"'“”‘’`「」]{4,}+[\"'”’`」]?)"
)
_ZH_VERB = r"(?:是|为|改成|改为|设为|设置为|设置成|设成|换成|变成|改了)了?"
PROSE_ZH = (
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
_PROTOCOL = Lazy(r"(?i)(?:https?|h2|spdy|tls|ssl|v)?/?\d+(?:\.\d+)*\b|[a-z]+/\d+(?:\.\d+)*\b")
_ZH_MID_STOP = Lazy(r"长度|数量|个数|上限|大小|有效期|位数|格式|类型|哈希|散列|摘要|长|数|量")


def _prose_value(text: str, m: re.Match[str]) -> Span | None:
    s, e = m.span("val")
    val = m["val"]
    if val.endswith(("...", "…")) or placeholder_token(val):
        return None  # eyJhbGciOi..., AKIA…EXAMPLE: documentation
    if s > 0 and text[m.start() - 1:m.start()] == ":" or text[e:e + 4].lstrip(" \t").startswith("="):
        return None  # arn:…:secret:prod/db names a secret; `PASSPHRASE: &str =` is a type
    lead = 1 if val[:1] in "\"'“‘`「『" else 0
    trail = 0
    while trail < len(val) - lead and val[len(val) - 1 - trail] in _PROSE_TRAIL:
        trail += 1
    s, e = s + lead, e - trail
    v = text[s:e]
    if e - s < 4 or v.lower() in _PROSE_STOP or PLACEHOLDER.match(v):
        return None
    return s, e


def prose_en(text: str, m: re.Match[str]) -> Span | None:
    span = _prose_value(text, m)
    if span is None:
        return None
    v = text[span[0]:span[1]]
    # An unquoted lowercase word ("the token is expired") is prose; a secret has a digit, a symbol or an
    # inner capital.
    made = has_digit(v) or not v.isalpha() or v[1:] != v[1:].lower()
    if v.startswith("!") and v[1:].isalpha():
        return None  # password: !vault (a YAML tag)
    if m["bare"] is not None and not (has_digit(v) and not v.isdigit() and len(v) >= 6):
        return None  # `password reset123`-like prose needs a digit and a letter when there is no verb
    if m["bare"] is not None and _PROTOCOL.match(v):
        return None  # GET /api/tokens HTTP/1.1, tokens v2.1.0: a protocol or a version
    if (m["q"] is not None or made) and not CODE_VALUE.search(v) and not v.startswith(("$", "<", "%")):
        return span
    return None


def prose_zh(text: str, m: re.Match[str]) -> Span | None:
    if m["mid"] and _ZH_MID_STOP.search(m["mid"]):
        return None  # 密钥长度为4096位: a property of the key, not the key
    span = _prose_value(text, m)
    if span is None:
        return None
    v = text[span[0]:span[1]]
    if (v.isdigit() and len(v) < 6) or v.startswith(("http://", "https://", "$", "<", "%")):
        return None
    if m["glued"] is not None and not (has_digit(v) or not v.isalnum()):
        return None  # 密码 RSA: no verb, so the value must not be a plain word
    return span
