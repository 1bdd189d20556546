"""Finders: code that turns a pattern, or a shape no single regex states, into spans of secrets.

Pure; stdlib, memvault.redact.names/shapes only. A finder takes (text, lowered text) and yields (start, end) spans.
`regex` and `anchored` build finders from patterns (compiled on first use); the rest are finders for PEM
blocks, GCP service-account JSON, Discord and Telegram bot tokens, `key = value` assignments, URL passwords,
emails and home directories. Every quantifier that could backtrack is possessive or bounded: linear on 1 MB lines.
The rule table (memvault.redact.rules) says which finder runs under which rule id; prose sentences are in
memvault.redact.prose.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from typing import Any

from memvault.redact.names import STRONG, key_strength
from memvault.redact.shapes import PLACEHOLDER, Lazy, find_words, has_digit, shaped
from memvault.redact.tokens import placeholder_token

Span = tuple[int, int]
Finder = Callable[[str, str], Iterable[Span]]  # (text, lowered text) -> spans


# --------------------------------------------------------------------------- finder builders

def regex(*patterns: str, group: int | str = 0,
           check: Callable[[re.Match[str]], bool] | None = None, lead: int = 0) -> Finder:
    """Search each pattern. Patterns should open with a literal: _sre then scans for it in C, ~10x faster
    than trying a leading lookbehind at every position (so boundaries go after the literal, see _tok).
    `lead`: the span of the FIRST pattern starts this many characters before its match (a prefix checked
    by a lookbehind, such as Stripe's s/r before `k_live_`)."""
    rxs: list[re.Pattern[str]] = []

    def find(text: str, low: str) -> Iterator[Span]:
        if not rxs:  # compiled on first use: most rules never fire in a process (search start-up)
            rxs.extend(re.compile(p) for p in patterns)
        for n, rx in enumerate(rxs):
            back = lead if n == 0 else 0
            for m in rx.finditer(text):
                if check is not None and not check(m):
                    continue
                s, e = m.span(group)
                if e > s:
                    yield s - back, e

    return find


def anchored(pattern: str, anchors: Sequence[str], back: str = "", check=None) -> Finder:
    """Case-insensitive rules with no literal to scan for: find the lowercase anchors with str.find (memchr
    speed) and try `pattern` only there, starting up to 40 `back` characters before the anchor."""
    compiled: list[Any] = []
    words = tuple(sorted(set(anchors)))

    def find(text: str, low: str) -> Iterator[Span]:
        if not compiled:  # compiled on first use, like regex
            import string

            compiled.extend((
                re.compile(pattern),
                frozenset(c for c in string.printable if re.fullmatch(f"[{back}]", c)) if back else frozenset(),
            ))
        rx, back_set = compiled
        done = -1
        for i in find_words(low, words):  # str.find per anchor: memchr speed, not a regex tried everywhere
            if i <= done:
                continue
            start, floor = i, max(0, i - 40)
            while start > floor and text[start - 1] in back_set:
                start -= 1
            m = rx.match(text, start)
            if m is None:
                done = i
                continue
            done = m.end() - 1
            span = check(text, m) if check is not None else m.span()
            if span is not None and span[1] > span[0]:
                yield span

    return find

# --------------------------------------------------------------------------- PEM private keys

_PEM_BEGIN = Lazy(r"-----BEGIN[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = Lazy(r"-----END[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-----")
# Body of a block whose END line is missing: base64 chunks (>= 16 chars, a PEM line is 64) or "Name: value"
# header lines, separated by whitespace or JSON-escaped newlines; a short last chunk only if padded or alone
# on its line. Prose stops it: its words are short and separated by single spaces.
_PEM_BODY = Lazy(
    r"(?:(?:[ \t]|\r?\n|\\r|\\n)*+(?:[A-Za-z0-9+/]{16,}+={0,2}|[A-Z][A-Za-z-]{1,30}: [^\n\\]*+))*+"
    r"(?:(?:[ \t]|\r?\n|\\r|\\n)*+[A-Za-z0-9+/]{1,15}+(?:={1,2}|(?=[ \t]*(?:\r?\n|\\n|\Z))))?"
)
_PEM_MAX = 64 * 1024  # how far to look for END: a 16384-bit RSA key is ~12 KB of PEM


def find_pem(text: str, low: str) -> Iterator[Span]:
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
        if end_m is not None and not _PEM_CHUNK.search(text, body, end_m.start()):
            pos = end  # documentation: BEGIN … <your key here> … END holds no key material
            continue
        yield start, end
        pos = end


_PEM_CHUNK = Lazy(r"[A-Za-z0-9+/=]{16}")

# --------------------------------------------------------------------------- GCP service-account JSON

_GCP_SA = Lazy(r'"private_key"\s*+:\s*+"((?:[^"\\\n]++|\\.)*+)"?')


def find_gcp_sa(text: str, low: str) -> Iterator[Span]:
    for m in _GCP_SA.finditer(text):
        s, e = m.span(1)
        if e - s >= 16:
            yield s, e


# --------------------------------------------------------------------------- Discord bot tokens

# No literal prefix to search for, so search the distinctive ".xxxxxx.<27+>" tail (literal '.', fast) and
# check the user-id part backwards.
_DISCORD_TAIL = Lazy(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}+")
_DISCORD_HEAD = Lazy(r"(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,27}$")


def find_discord(text: str, low: str) -> Iterator[Span]:
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
KEY_CHARS = "A-Za-z0-9_.-"
ASSIGN = (
    r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z0-9_.-]{0,40}?(?i:" + _KEYWORD + r")[A-Za-z0-9_.-]{0,40}?)"
    r"(?P<kq>[\"'\]]?)[ \t]{0,8}(?P<sep>:=|=>|=(?![=~])|:(?![:/]))[ \t]{0,8}"
    r"(?P<val>\"(?P<dq>(?:[^\"\\\n]++|\\.)*+)\"|'(?P<sq>[^'\n]*+)'|(?P<bare>[^\s\"'`,;]++))"
)
CODE_VALUE = Lazy(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|[()\[\]{}]")
_IDENT = Lazy(r"^[a-z_][a-z0-9_]*$")


def assignment_value(text: str, m: re.Match[str]) -> Span | None:
    strength = key_strength(m["key"])
    if not strength:
        return None
    if m["bare"] is not None:
        group, val = "bare", m["bare"]
        if m.start() > 0 and text[m.start() - 1] in "?&" and "&" in val:
            # a query string: ?app_secret=REPLACE_ME&page=2 -- the value ends at the next parameter
            val = val[:val.index("&")]
            if PLACEHOLDER.match(val) or placeholder_token(val, loose=True) or not val:
                return None
            s = m.start("bare")
            return (s, s + len(val)) if strength == STRONG or shaped(val) else None
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
        if CODE_VALUE.search(val) and not (env_style and "(" not in val):
            return None
        if text[m.start("sep") - 1] == " " and _IDENT.match(val) and not has_digit(val):
            return None  # `password = password`: a variable, not a value
    else:
        group = "dq" if m["dq"] is not None else "sq"
        val = m[group]
    val = val.strip()
    if PLACEHOLDER.match(val):
        return None
    if strength != STRONG and not shaped(val):
        return None  # token / api key / *_KEY: the value must look machine-made, not like a word or a number
    return None if placeholder_token(val, loose=True) else m.span(group)



def url_password(m: re.Match[str]) -> bool:
    """user:password@ in a URL, not a documentation placeholder (user:password@localhost, <user>:<token>@)."""
    pw = m["p"]
    if pw.endswith(":") or PLACEHOLDER.match(pw) or pw.startswith(("$", "<", "%", "{")):
        return False
    return not (pw.isalpha() and pw.islower() and pw == m["u"])  # guest:guest, postgres:postgres


# --------------------------------------------------------------------------- emails, home directories

# Search from the '@' (a literal, fast) and check the local part backwards: a leading [local]+ would be
# tried at every position and go quadratic on long runs.
_EMAIL_AT = Lazy(r"@(?P<dom>(?:[A-Za-z0-9-]{1,63}+\.)+[A-Za-z]{2,24})(?![A-Za-z0-9-])(?!:[\w~./-])")
_EMAIL_LOCAL = Lazy(r"[A-Za-z0-9._%+-]{1,64}$")
_RETINA = Lazy(r"^\d+x\.")  # icon@2x.png is a file name


def find_email(text: str, low: str) -> Iterator[Span]:
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
_HOME_WIN = Lazy(r":(?<=[A-Za-z]:)(?:\\{1,2}|/)(?i:users)(?:\\{1,2}|/)(?P<user>[\w.$-]{1,64}+)")
# Profiles that belong to no person: macOS /Users/Shared, Windows Public, Default, "All Users", Guest.
_NOT_A_PERSON = frozenset({"shared", "public", "default", "default user", "all", "all users", "guest"})
_unix_home = regex(*_HOME_UNIX)


def find_home_win(text: str, low: str) -> Iterator[Span]:
    for m in _HOME_WIN.finditer(text):
        s = m.start() - 1
        if m["user"].lower() in _NOT_A_PERSON:
            continue
        if s == 0 or not _is_tokenish(text[s - 1]):
            yield s, m.end()


_TELEGRAM = Lazy(r":A(?<=[0-9]:A)[A-Za-z0-9_-]{34,}+")
_DIGITS_BEFORE = Lazy(r"(?<![0-9])[0-9]{5,16}$")


def find_telegram(text: str, low: str) -> Iterator[Span]:
    for m in _TELEGRAM.finditer(text):
        d = _DIGITS_BEFORE.search(text, max(0, m.start() - 17), m.start())
        if d is not None:
            yield d.start(), m.end()


def find_home_unix(text: str, low: str) -> Iterator[Span]:
    for s, e in _unix_home(text, low):
        if text[s + 6:e].lower() in _NOT_A_PERSON or text[s + 7:e].lower() in _NOT_A_PERSON:
            continue  # /Users/Shared, /home/guest … hold no person's name
        if s > 0 and text[s - 1] == "/" and not text.endswith("file://", 0, s):
            continue  # https://host//home/… or a relative path, not a home directory
        yield s, e

