"""Value checks and finders for credentials written in code and on command lines (used by redact.rules).

Pure; stdlib and memvault.redact.names only (finders, prose and rules import this). Every finder takes
(text, lowered text) and yields (start, end) spans of the secret VALUE only: the key, flag or call around
it stays readable.
Every quantifier is bounded or possessive, and every scan starts from a lowercase literal found with a plain
regex over the lowered text, so the cost stays linear on 1 MB lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memvault.redact.names import STRONG, key_strength

Span = tuple[int, int]


class Lazy:
    """A regex compiled on first use: `memvault search` imports this module and most shapes never run there."""

    __slots__ = ("_args", "_rx", "match", "search", "finditer", "fullmatch", "findall", "split")  # set on first use

    def __init__(self, pattern: str, flags: int = 0):
        self._args, self._rx = (pattern, flags), None

    def __getattr__(self, name: str):
        # Reached only while a slot is unset: compile, then bind the common methods so that later calls
        # skip this function (a 1 MB line can call them hundreds of thousands of times).
        rx = object.__getattribute__(self, "_rx")
        if rx is None:
            rx = re.compile(*object.__getattribute__(self, "_args"))
            object.__setattr__(self, "_rx", rx)
            for method in ("match", "search", "finditer", "fullmatch", "findall", "split"):
                object.__setattr__(self, method, getattr(rx, method))
        return getattr(rx, name)


def distinct_lines(low: str) -> str:
    """`low` with each line kept once: a keyword (never spanning lines) occurs in it exactly when it occurs in
    `low`, and code and logs repeat their lines, so each `in` test scans a fraction of the text."""
    return "\n".join(dict.fromkeys(low.split("\n"))) if len(low) > 4096 else low


def find_words(low: str, words: tuple[str, ...]) -> list[int]:
    """Sorted start offsets of every occurrence of each lowercase word: str.find runs at memchr speed, far
    faster than a regex alternation tried at every position."""
    hits: list[int] = []
    for w in words:
        i = low.find(w)
        while i >= 0:
            hits.append(i)
            i = low.find(w, i + 1)
    hits.sort()
    return hits

# --------------------------------------------------------------------------- value checks

# Values that stand for a secret in documentation: empty, types, template variables, "your-key-here", xxxx.
PLACEHOLDER = Lazy(
    r"(?i)^(?:|null|none|nil|true|false|undefined|str|string|int|bytes|bool|boolean|number|any|optional"
    r"|secret|password|passwd|pass|pwd|token|redacted|changeme|change[-_]me|required|example|guest|foobared"
    r"|\*+|\.\.\.+|…|<[^>]*>|\$\{?[\w.]*\}?|\$\{.*\}|\$\(.*|\{\{.*\}\}|%\(?\w*\)?s?|%[\w.-]+%"
    r"|\{[\w.:-]*\}|#\{.*\}|\[[A-Z_]+\]"  # {SumoAccessKey}, %DbPassword%, #{token}, [TOKEN]
    r"|os\.environ.*|process\.env.*|getenv.*|env\(.*"
    r"|your[-_ ].*|.*[-_]here|.*(?:xxxx|\.\.\.|\*\*\*).*"
    r"|(?-i:[A-Z]+(?:_[A-Z]+)++|[A-Z]{2,}+))$"  # YOUR_API_KEY, PASSWORD (a digit makes it a value)
)


_DIGIT = Lazy(r"\d")  # has_digit runs on nearly every candidate value: a C search, not a Python loop


def has_digit(s: str) -> bool:
    return _DIGIT.search(s) is not None


def shaped(val: str) -> bool:
    """A machine-made value: long enough, and a digit or mixed case (not a word, not a number)."""
    mixed = val != val.lower() and val != val.upper() and not val.istitle()
    return len(val) >= 8 and not val.isdigit() and (has_digit(val) or mixed)


def value_ok(key: str, val: str) -> bool:
    """Is `val`, assigned to `key`, a secret? Strong keys (password, secret) take any non-placeholder value;
    other keys (token, api key, *_KEY) only a value that looks machine-made; names of no secret none."""
    strength = key_strength(key)
    if not strength or PLACEHOLDER.match(val):
        return False
    return strength == STRONG or shaped(val)


# --------------------------------------------------------------------------- command lines

_VALUE = r"(?:'(?P<sq>[^'\n]{1,200})'|\"(?P<dq>[^\"\n]{1,200})\"|(?P<bare>[^\s'\"|;&<>()`]{1,200}+))"
_CMD = Lazy(
    r"(?<![\w.-])(?P<cmd>mysql(?:dump|admin|import|sh|slap)?|mariadb(?:-dump)?|mycli|sshpass|redis-cli"
    r"|mongo(?:sh|dump|restore|import|export)?|curl|wget|docker|podman|nerdctl|smbclient|openssl)(?![\w-])")
# A command's arguments: up to a newline, pipe, ';' or '&' outside quotes (-p'a&&b' is one argument).
_ARGS = Lazy(r"(?:'[^'\n]{0,200}+'|\"[^\"\n]{0,200}+\"|[^'\"\n|;&])*+")
_OPTS = {
    # mysql: -p glued to its value (a space after -p means "prompt me"), or --password=…
    "mysql": Lazy(r"(?<!\S)(?:-p(?=\S)|--password=|--password[ \t]+)" + _VALUE),
    "sshpass": Lazy(r"(?<!\S)-p[ \t]*+" + _VALUE),
    "redis-cli": Lazy(r"(?<!\S)(?:-a|--pass)[ \t]++" + _VALUE),
    "mongo": Lazy(r"(?<!\S)(?:-p|--password)(?:[ \t]++|=)" + _VALUE),
    "docker": Lazy(r"(?<!\S)(?:-p|--password)(?:[ \t]++|=)" + _VALUE),
    "curl": Lazy(r"(?<!\S)(?:-u[ \t]*+|--user(?:[ \t]++|=))" + _VALUE),
    "wget": Lazy(r"(?<!\S)--(?:http-|ftp-|proxy-)?password(?:[ \t]++|=)" + _VALUE),
    "smbclient": Lazy(r"(?<!\S)(?:-U|--user)(?:[ \t]++|=)" + _VALUE),
    "openssl": Lazy(r"(?<!\S)-pass(?:in|out)?[ \t]++(?:pass|env|file):" + _VALUE),
}
_FAMILY = {"mysqldump": "mysql", "mysqladmin": "mysql", "mysqlimport": "mysql", "mysqlsh": "mysql",
           "mysqlslap": "mysql", "mariadb": "mysql", "mariadb-dump": "mysql", "mycli": "mysql",
           "podman": "docker", "nerdctl": "docker"}
_GENERIC_FLAG = Lazy(
    r"--(?<![\w-]--)"
    r"(?i:(?:[a-z0-9]+-)*+(?:password|passwd|pass|token|api-key|apikey|auth-token|access-token))"
    r"(?:[ \t]++|=)(?!-)" + _VALUE)


def _value_span(m: re.Match[str]) -> tuple[Span, str]:
    g = "sq" if m["sq"] is not None else "dq" if m["dq"] is not None else "bare"
    return m.span(g), m[g]


def _secret_value(val: str) -> bool:
    return len(val) >= 3 and not val.startswith(("$", "<", "%", "-")) and not PLACEHOLDER.match(val)


def find_command_line(text: str, low: str) -> Iterator[Span]:
    """Secrets passed as command-line flags: mysql -pSECRET, sshpass -p, curl -u user:SECRET, docker login."""
    # Every shape has a flag after a space: visit each line holding " -" once, and look for commands there.
    line_end = -1
    for i in find_words(low, (" -",)):
        if i < line_end:
            continue
        line_start = low.rfind("\n", max(0, i - 2000), i) + 1
        nl = low.find("\n", i, i + 2000)
        line_end = nl if nl >= 0 else min(len(low), i + 2000)  # long lines: a window per 2000 characters
        yield from _commands(text, low, max(line_start, i - 2000), line_end)


def _commands(text: str, low: str, start: int, stop: int) -> Iterator[Span]:
    for m in _CMD.finditer(low, start, stop):
        cmd = m["cmd"]
        fam = _FAMILY.get(cmd) or ("mongo" if cmd.startswith("mongo") else cmd)
        seg_end = _ARGS.match(text, m.end(), m.end() + 400).end()
        if fam == "docker" and not re.match(r"[ \t]+login\b", text[m.end():seg_end]):
            continue
        opt = _OPTS.get(fam)
        if opt is None:
            continue
        for o in opt.finditer(text, m.end(), seg_end):
            (s, e), val = _value_span(o)
            if fam in ("curl", "smbclient"):
                sep = ":" if fam == "curl" else "%"
                cut = val.find(sep)
                if cut < 0:
                    continue  # curl -u user: asks for the password
                s, val = s + cut + 1, val[cut + 1:]
            if _secret_value(val):
                yield s, e


def find_generic_flag(text: str, low: str) -> Iterator[Span]:
    """--password SECRET / --token=SECRET on any command (not --password-stdin, not $VAR)."""
    for m in _GENERIC_FLAG.finditer(text):
        (s, e), val = _value_span(m)
        if _secret_value(val) and (len(val) >= 6 or has_digit(val)):
            yield s, e


# --------------------------------------------------------------------------- API client constructors

CALL_ANCHORS = ("client", "twilio", "algoliasearch", "auth")  # SearchClient.create, Twilio.init: by name
_CALLEE = Lazy(
    r"(?i)(?:(?:[a-z_]\w{0,40}\.){0,3}(?:client|twilio|restclient|twiliorestclient|init|algoliasearch|create"
    r"|httpbasicauth|httpdigestauth|basicauth|digestauth)"
    r"|require\(\s*['\"]twilio['\"]\s*\)|auth[ \t]*=[ \t]*)"
    r"[ \t]*\((?P<args>[^()\n]{0,400}+)\)")
_LITERAL = Lazy(r"(['\"])(?P<v>[^'\"\n]{1,200})\1")
_KEYISH = Lazy(r"[A-Za-z0-9_+/=.-]{16,200}")


def find_client_args(text: str, low: str) -> Iterator[Span]:
    """Secrets passed by position: Client("AC…", "<token>"), require('twilio')(sid, token),
    algoliasearch(appId, key), auth=("user", "pass"), HTTPBasicAuth(user, pass)."""
    done = 0
    for i in find_words(low, CALL_ANCHORS):
        if i < done:
            continue
        j = low.find("(", i, i + 60)
        if j < 0:
            continue  # no call opens near the word
        start = i
        while start > 0 and start > i - 60 and (text[start - 1].isalnum() or text[start - 1] in "_.$"):
            start -= 1
        if low.startswith("require(", max(0, i - 9)) or low.startswith("require(", max(0, i - 10)):
            start = low.rfind("require(", max(0, i - 12), i)
        m = _CALLEE.match(text, start)
        if m is None:
            continue
        done = m.end()
        auth = "auth" in m.group(0)[:m.start("args") - m.start()].lower()
        args, base = m["args"], m.start("args")
        for lit in _LITERAL.finditer(args):
            index = args.count(",", 0, lit.start())
            val = lit["v"]
            if index < 1 or PLACEHOLDER.match(val) or val.startswith(("$", "<", "http")):
                continue
            if auth and index == 1 and len(val) >= 4 and " " not in val:
                yield base + lit.start("v"), base + lit.end("v")
            elif not auth and _KEYISH.fullmatch(val) and has_digit(val) and not val.isdigit():
                yield base + lit.start("v"), base + lit.end("v")


# --------------------------------------------------------------------------- XML and server configs

_KEY_WORD = Lazy(r"(?i)passw(?:or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
                       r"|auth[_-]?key|credential|(?<![a-z])pass(?![a-z])|(?<=[a-z_.-])key$")
_XML_ADD = Lazy(r"<add[ \t]++(?:key|name)[ \t]*=[ \t]*\"(?P<k>[^\"\n]{1,80}+)\""
                      r"[ \t]++value[ \t]*=[ \t]*"
                      r"\"(?P<v>[^\"\n]{0,300}+)\"", re.I)
_XML_ELEM = Lazy(r"<(?P<tag>[A-Za-z_][\w:.-]{0,40}+)>(?P<v>[^<>\n]{1,300}+)</(?P=tag)>")
SERVER_WORDS = ("requirepass", "masterauth", "auth_pass")
_SERVER = Lazy(r"(?:requirepass|masterauth|auth_pass)[ \t]++"
                     r"(?:'(?P<sq>[^'\n]{1,200})'|\"(?P<dq>[^\"\n]{1,200})\"|(?P<bare>[^\s'\"]{1,200}+))", re.I)


def find_config_xml(text: str, low: str) -> Iterator[Span]:
    """<add key="Password" value="…"/> (.NET), <password>…</password> (Maven, XML configs)."""
    if "<add" in low:
        for m in _XML_ADD.finditer(text):
            if _KEY_WORD.search(m["k"]) and value_ok(m["k"], m["v"].strip()):
                yield m.span("v")
    for m in _XML_ELEM.finditer(text):
        if _KEY_WORD.search(m["tag"]) and value_ok(m["tag"], m["v"].strip()):
            yield m.span("v")


def find_server_config(text: str, low: str) -> Iterator[Span]:
    """redis.conf requirepass / masterauth, keepalived auth_pass."""
    for i in find_words(low, SERVER_WORDS):
        m = _SERVER.match(text, i)
        if m is None or (i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_.-")):
            continue
        (s, e), val = _value_span(m)
        if _secret_value(val):
            yield s, e


# --------------------------------------------------------------------------- "creds: user / password"

_USER_SLASH = Lazy(r"(?:creds?|credentials|login|账号密码|用户名密码)[ \t]*[:：][ \t]*+[^\s/]{1,64}+[ \t]*/[ \t]*"
                         r"(?P<v>[^\s，。、,;]{4,200}+)", re.I)


def find_user_slash_password(text: str, low: str) -> Iterator[Span]:
    """creds: alice / Secret123, 账号密码：root / …: the part after the slash, when it looks made."""
    for i in find_words(low, ("cred", "login", "密码")):
        if low.startswith("密码", i):
            i = i - 2 if low.startswith("账号", i - 2) else i - 3 if low.startswith("用户名", i - 3) else -1
            if i < 0:
                continue
        m = _USER_SLASH.match(text, i)
        if m is None or (i > 0 and text[i - 1].isascii() and text[i - 1].isalnum()):
            continue
        val = m["v"].rstrip(".!?)")
        if has_digit(val) and not PLACEHOLDER.match(val) and not val.startswith(("$", "<", "%", "http")):
            yield m.start("v"), m.start("v") + len(val)
