"""Which names name a secret: one list of secret words and of the words that make a name a secret's property
or a key that is no secret (cache key, max_tokens, secret_name, public_key). Pure; stdlib only.

Every finder that reads `name = value` asks key_strength (memvault.redact.keyed for any syntax, finders.ASSIGN
for the common forms, shapes for XML configs), so a name is judged the same way everywhere.
"""

from __future__ import annotations

import functools
import re


class _Lazy:
    """A regex compiled on first use (shapes.Lazy cannot be imported here: shapes imports this module)."""

    __slots__ = ("_pattern", "_rx")

    def __init__(self, pattern: str):
        self._pattern, self._rx = pattern, None

    def findall(self, text: str) -> list[str]:
        if self._rx is None:
            self._rx = re.compile(self._pattern)
        return self._rx.findall(text)


CAMEL = _Lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
STRONG, WEAK, NAMED = 2, 1, 3  # NAMED: id, user, … name no secret; only a value random beyond doubt goes
_STRONG_WORDS = ("password", "passwd", "passphrase", "passcode", "secret", "credential", "credentials", "creds",
                 "pwd", "pass", "pw")
_WEAK_WORDS = ("token", "key", "auth", "skey")
_COMPOUND_KEYS = ("apikey", "secretkey", "accesskey", "privatekey", "authkey", "masterkey",
                  "encryptionkey", "licensekey", "appkey", "apitoken", "authtoken", "accesstoken", "bottoken",
                  "sessiontoken", "refreshtoken", "idtoken")
# Words after the secret word that make the key a property of the secret, not the secret.
_ATTR = frozenset(
    "id ids name names type types url uri urls endpoint path paths file files dir length len size count limit max min "
    "ttl expiry expires expiration expire hash hashed digest salt prefix suffix hint label placeholder field format "
    "policy rotation version header param method mode env var ref arn region algorithm alg usage provider manager "
    "store required enabled disabled index column regex pattern rule rules strength reset changed created updated at "
    "timeout location source helper process command cmd prompt message msg text title description desc error help "
    "input output display ui bits lifetime age days hours seconds secs minutes ms valid validity status state kind "
    "class scheme schema encoding fingerprint fp vault holder owner user username login email account tenant "
    "client config settings options option flag flags enabled exists set missing".split())
# Words before "key" / "token" that name a non-secret key or token.
_NOT_SECRET_KEY = frozenset(
    "idempotency cache sort partition primary foreign public publishable object s3 redis dedupe dedup routing hash "
    "range row lookup translation i18n composite unique natural surrogate join group map dict site shortcut hot "
    "sequence bucket schema index secondary search shard sharding compound idx next prev previous last start end "
    "verify verification sitekey anon react list item column table dynamo cursor page sort_key metric label "
    "foreign_key storage_path ssh_public public_key gpg pgp gnupg host fingerprint".split())  # public ones
_NOT_SECRET_TOKEN = frozenset(
    "max min num total input output completion prompt context special pad bos eos unk cls sep mask start end stop "
    "next page pagination continuation cursor sync lexer parser csrf xsrf first last cancel cancellation "
    "reasoning cached cache thinking tokens".split())


@functools.lru_cache(maxsize=4096)
def key_strength(ident: str) -> int:
    """STRONG (password, secret…), WEAK (token, api key…) or 0 for a name that does not name a secret (a
    property of one: secret_name, token_count; a key that is none: cache_key, max_tokens, public_key)."""
    words = [w.lower() for part in re.split(r"[_.$-]+", ident) for w in CAMEL.findall(part)]
    last = -1
    strength = 0
    for i, w in enumerate(words):
        s = 0
        if w in _STRONG_WORDS or w.endswith(("password", "passwd", "secret")) and len(w) > 6:
            s = STRONG
        elif w in _WEAK_WORDS or w in _COMPOUND_KEYS or w.endswith(("apikey", "token")) and len(w) > 5:
            s = WEAK
        if s:
            last, strength = i, s
    if last < 0:
        return 0
    if words[last + 1:] == ["id"] and words[last] == "secret":
        return WEAK  # an AppRole secret_id is a secret, a machine-made one
    if any(w in _ATTR for w in words[last + 1:]):
        return 0
    word, before = words[last], words[last - 1] if last > 0 else ""
    if word == "key" and before in _NOT_SECRET_KEY or word == "token" and before in _NOT_SECRET_TOKEN:
        return 0
    if word in ("keys", "tokens", "secrets", "passwords"):
        return 0
    if word == "auth" and len(words) > 1 and words[-1] != "auth":
        return 0
    return strength
