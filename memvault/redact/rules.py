"""The built-in rule table: which finder runs under which rule id, on which keywords, in which family.

Data, reviewed apart from the code that runs it (memvault.redact.engine) and the finders that need code
(memvault.redact.finders, .prose, .shapes). Order is specificity: where matches overlap, the merged redaction
is named after the earliest rule. Pure: stdlib and memvault.redact only.

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
found by memvault.redact.shapes; every rule belongs to a family (FAMILIES) that findings carry.
"""

from __future__ import annotations

from collections import namedtuple

import re

from memvault.redact.finders import (ASSIGN, KEY_CHARS, Finder, anchored, assignment_value, find_discord,
                                     find_email, find_gcp_sa, find_home_unix, find_home_win, find_pem,
                                     find_telegram, regex, url_password)
from memvault.redact.keyed import ANCHORS, find_id_keyed, find_k8s_secret, find_keyed
from memvault.redact.prose import PROSE_EN, PROSE_ZH, prose_en, prose_zh
from memvault.redact.shapes import (CALL_ANCHORS, PLACEHOLDER, SERVER_WORDS, find_client_args,
                                    find_command_line, find_config_xml, find_generic_flag, find_server_config,
                                    find_user_slash_password, has_digit)
from memvault.redact.tokens import find_tokens, placeholder_token

SECRET, EMAIL, HOME = 0, 1, 2  # kinds: a secret becomes [REDACTED:<id>], an email [email], a home dir ~


# id (str), find (a Finder), keywords (lowercase literals: the rule runs only if one occurs in the lowered
# text), kind (SECRET or a softer kind), family (filled from FAMILIES by rule id, see below the table).
# collections.namedtuple, not typing's NamedTuple: a search redacts what it shows and must not import `typing`.
Rule = namedtuple("Rule", "id find keywords kind family", defaults=(SECRET, ""))


def _tok(prefix: str, body: str, boundary: str = "A-Za-z0-9_") -> str:
    """A token: literal `prefix` not glued to a word before it, then `body` (the whole run, possessive)."""
    p = re.escape(prefix)
    return f"{p}(?<![{boundary}]{p})" + body


def _tok_re(prefix_re: str, width: int, body: str, boundary: str = "A-Za-z0-9_") -> str:
    """Like _tok for a prefix regex of fixed `width`."""
    return f"{prefix_re}(?<![{boundary}].{{{width}}})" + body


_DASH = "A-Za-z0-9_-"
_LONG_RUN = re.compile(r"[A-Za-z0-9]{16}")

# Order is specificity: where matches overlap, the merged redaction is named after the earliest rule.
BUILTIN: tuple[Rule, ...] = (
    Rule("gcp-service-account", find_gcp_sa, ('"private_key"',)),
    Rule("private-key", find_pem, ("-----begin",)),
    Rule("anthropic-api-key", regex(_tok("sk-ant-", r"[A-Za-z0-9_-]{20,}+", _DASH)), ("sk-ant-",)),
    Rule("openai-api-key", regex(_tok(
        "sk-", r"(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}+|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9_-]{20,}+)",
        _DASH)), ("sk-",)),
    Rule("deepseek-api-key", regex(_tok("sk-", r"[0-9a-f]{32}(?![A-Za-z0-9_-])", _DASH)), ("sk-",)),
    # a digit, or the documented legacy shape (48 alphanumerics) with or without one; and a random run of 16,
    # not words joined by dashes (sk-tower-night-view-1920x1080.png)
    Rule("sk-api-key", regex(_tok("sk-", r"[A-Za-z0-9_-]{20,}+", _DASH), check=lambda m: (
        has_digit(m[0][3:]) or len(m[0]) == 51 and m[0][3:].isalnum()) and _LONG_RUN.search(m[0]) is not None),
          ("sk-",)),
    Rule("aws-access-key-id", regex(
        _tok_re("(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)", 4, r"[A-Z0-9]{16,}+(?![a-z])")),
        ("akia", "asia", "abia", "acca", "a3t")),
    Rule("aws-secret-access-key", anchored(
        r"(?i:aws[_ .-]?secret[_ .-]?(?:access[_ .-]?)?key|secret[_ -]?access[_ -]?key)"
        r"[\"'\]]?[ \t]*(?:=>|:=|[:=：]|is|是|为)[ \t]*[\"'“「]?(?P<s>[A-Za-z0-9/+]{30,}+={0,2})", ("aws", "secret"),
        check=lambda text, m: None if placeholder_token(m["s"]) else m.span("s")), ("secret",)),
    Rule("github-fine-grained-pat", regex(_tok("github_pat_", r"[A-Za-z0-9_]{50,}+")), ("github_pat_",)),
    Rule("github-pat", regex(_tok("ghp_", r"[A-Za-z0-9]{30,}+")), ("ghp_",)),
    Rule("github-oauth", regex(_tok("gho_", r"[A-Za-z0-9]{30,}+")), ("gho_",)),
    Rule("github-app-token", regex(_tok_re("gh[su]_", 4, r"[A-Za-z0-9]{30,}+")), ("ghs_", "ghu_")),
    Rule("github-refresh-token", regex(_tok("ghr_", r"[A-Za-z0-9]{30,}+")), ("ghr_",)),
    *(Rule("gitlab-token", regex(_tok(p, r"[A-Za-z0-9_-]{20,}+(?:\.[A-Za-z0-9_-]++)*+")), (p.lower(),))
      for p in ("glpat-", "gldt-", "glrt-", "glft-", "glsoat-", "glffct-", "glimt-", "glagent-", "gloas-",
                "glcbt-", "glptt-", "GR1348941")),
    Rule("slack-webhook", regex(
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}+",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}+"), ("hooks.slack.com",)),
    # every Slack token's body opens with a number (xoxb-123…, xoxe-1-…); legacy xoxa-/xoxr- with a random run
    Rule("slack-token", regex(_tok_re("xox[abposre]-", 5, r"[A-Za-z0-9-]{10,}+"), check=lambda m: m[0][5].isdigit()
                              or m[0][3] in "ar" and _LONG_RUN.search(m[0]) is not None and has_digit(m[0][5:])),
          ("xox",)),
    Rule("slack-app-token", regex(_tok_re(r"xapp-\d-", 7, r"[A-Za-z0-9-]{10,}+")), ("xapp-",)),
    # led by the literal "k_" (a leading [sr] would be tried at every position), the s/r checked behind it
    Rule("stripe-key", regex(
        r"k_(?:live|test|prod)_(?<=[sr]k_[a-z]{4}_)(?<![A-Za-z0-9_][sr]k_[a-z]{4}_)(?P<body>(?![xX]{4})[A-Za-z0-9]{10,}+)",
        _tok("whsec_", r"[A-Za-z0-9]{20,}+"), lead=1), ("k_live_", "k_test_", "k_prod_", "whsec_")),
    Rule("gcp-api-key", regex(_tok("AIza", r"[A-Za-z0-9_-]{30,}+")), ("aiza",)),
    Rule("gcp-oauth-secret", regex(_tok("GOCSPX-", r"[A-Za-z0-9_-]{20,}+")), ("gocspx-",)),
    Rule("gcp-oauth-token", regex(_tok("ya29.", r"[A-Za-z0-9_-]{30,}+")), ("ya29.",)),
    Rule("azure-storage-key", anchored(
        r"(?i:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/]{20,}+={0,2})", ("accountkey=", "sharedaccesskey="),
        check=lambda text, m: m.span("s")), ("accountkey=", "sharedaccesskey=")),
    Rule("twilio-api-key", regex(_tok("SK", r"[0-9a-fA-F]{32}(?![A-Za-z0-9])")), ("sk",)),
    Rule("twilio-account-sid", regex(_tok("AC", r"[0-9a-f]{32}(?![A-Za-z0-9])")), ("ac",)),
    Rule("sendgrid-api-key", regex(_tok("SG.", r"[A-Za-z0-9_-]{16,}+\.[A-Za-z0-9_-]{16,}+")), ("sg.",)),
    Rule("npm-token", regex(_tok("npm_", r"[A-Za-z0-9]{36,}+")), ("npm_",)),
    Rule("pypi-token", regex(_tok("pypi-AgEIcHlwaS5vcmc", r"[A-Za-z0-9_-]{50,}+")), ("pypi-",)),
    Rule("huggingface-token", regex(_tok("hf_", r"[A-Za-z0-9]{30,}+"), _tok("api_org_", r"[A-Za-z0-9]{30,}+")),
          ("hf_", "api_org_")),
    Rule("telegram-bot-token", find_telegram, (":a",)),
    Rule("discord-webhook", regex(
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}+"),
        ("discord",)),
    Rule("discord-bot-token", find_discord, (".",)),
    Rule("jwt", regex(_tok("eyJ", r"[A-Za-z0-9_-]{10,}+\.eyJ[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]*+={0,2}")),
          ("eyj",)),
    Rule("digitalocean-token", regex(_tok_re("do[opr]_v1_", 7, r"[a-f0-9]{64,}+")), ("_v1_",)),
    Rule("shopify-token", regex(_tok_re("shp(?:at|ca|pa|ss)_", 6, r"[a-fA-F0-9]{32,}+")), ("shp",)),
    Rule("groq-api-key", regex(_tok("gsk_", r"[A-Za-z0-9]{40,}+")), ("gsk_",)),
    Rule("perplexity-api-key", regex(_tok("pplx-", r"[A-Za-z0-9]{40,}+")), ("pplx-",)),
    Rule("linear-api-key", regex(_tok("lin_api_", r"[A-Za-z0-9]{40,}+")), ("lin_api_",)),
    Rule("age-secret-key", regex(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58,}+"),
          ("age-secret-key-1",)),
    # issue 24: the providers dedicated scanners know; one pass names each token (redact.tokens)
    Rule("provider-token", find_tokens, ()),  # each span named by its provider: notion-token, facebook-token, …
    Rule("authorization-header", anchored(
        r"(?i)(?<![A-Za-z0-9_])authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?:(?:bearer|basic|token|digest|negotiate|apikey|api-key|ssws|sso-key)[ \t]+)?"
        r"(?P<s>[A-Za-z0-9._~+/=:-]{8,}+)", ("authorization",),
        check=lambda text, m: m.span("s") if not PLACEHOLDER.match(m["s"])
        and (has_digit(m["s"]) or len(m["s"]) >= 20) else None), ("authorization",)),
    Rule("bearer-token", anchored(
        r"(?i)(?<![A-Za-z0-9_-])bearer[ \t]+(?P<s>[A-Za-z0-9._~+/-]{16,}+=*)", ("bearer",),
        check=lambda text, m: m.span("s") if has_digit(m["s"]) and not PLACEHOLDER.match(m["s"]) else None),
        ("bearer",)),
    Rule("url-credentials", regex(
        r"://(?<=[A-Za-z0-9]://)(?P<s>(?P<u>[^\s:/?#@\[\]]{0,256}+):(?P<p>[^\s/?#@]{1,256}+))@", group="s",
        check=url_password), ("://",)),
    Rule("password-assignment", anchored(
        ASSIGN, ("pass", "pwd", "secret", "token", "key", "credential"), back=KEY_CHARS, check=assignment_value),
        ("pass", "pwd", "secret", "token", "key", "credential")),
    Rule("assigned-secret", find_keyed, ANCHORS),
    Rule("assigned-secret", find_id_keyed, ("id", "user")),  # id, user, client_id: random beyond doubt only
    Rule("kubernetes-secret", find_k8s_secret, ("secret",)),
    Rule("config-secret", find_config_xml, ("</", "<add")),
    Rule("config-secret", find_server_config, SERVER_WORDS),
    Rule("command-line-secret", find_command_line, (" -",)),
    Rule("command-line-secret", find_generic_flag, ("--",)),
    Rule("client-args-secret", find_client_args, CALL_ANCHORS),
    Rule("password-prose", find_user_slash_password, ("cred", "login", "密码")),
    Rule("password-prose", anchored(
        PROSE_EN, ("pass", "pin", "api", "secret", "access", "token"), check=prose_en),
        ("pass", "pin", "api key", "secret", "access key", "token")),
    Rule("password-prose", anchored(
        PROSE_ZH, ("密码", "口令", "密钥", "秘钥", "私钥", "令牌", "pass", "api", "token", "secret"), check=prose_zh),
        ("密码", "口令", "密钥", "秘钥", "私钥", "令牌", "pass", "api", "token", "secret")),
    Rule("email", find_email, ("@",), EMAIL),
    Rule("home-dir", find_home_unix, ("/home/", "/users/"), HOME),
    Rule("home-dir", find_home_win, (":\\", ":/users"), HOME),
)

# Every rule id belongs to one family; `memvault redact --json` names it. Ids not listed are provider tokens.
FAMILIES = {
    "gcp-service-account": "private-key", "private-key": "private-key",
    "authorization-header": "http-auth", "bearer-token": "http-auth", "url-credentials": "url-credentials",
    "password-assignment": "config", "config-secret": "config", "aws-secret-access-key": "config",
    "assigned-secret": "config", "kubernetes-secret": "config",
    "azure-storage-key": "config", "command-line-secret": "command-line", "client-args-secret": "client-args",
    "password-prose": "prose", "email": "personal-data", "home-dir": "personal-data",
}


def _no_placeholders(find: Finder) -> Finder:
    """Provider tokens in documentation shape (ghp_xxxx…, glrt-0000…, sk-ant-…YOUR_API_KEY) are left alone."""
    return lambda text, low: (sp for sp in find(text, low) if not placeholder_token(text[sp[0]:sp[1]]))


BUILTIN = tuple(r._replace(family=FAMILIES.get(r.id, "provider-token")) for r in BUILTIN)
BUILTIN = tuple(r._replace(find=_no_placeholders(r.find)) if r.family == "provider-token" else r for r in BUILTIN)
