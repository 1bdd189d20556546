"""Provider tokens found anywhere by their prefix or structure, at the breadth of dedicated secret scanners.

Pure; stdlib and memvault.redact.shapes only. Facts (prefixes, lengths, alphabets) come from the public rule
lists of gitleaks, betterleaks, trufflehog and GitHub secret scanning; the rules are written here.

Most modern tokens are `word_` / `word-` / `word.` + a random body. Rather than one keyword scan per provider
(each a full pass over the text), `find_prefixed` makes ONE pass for `alphanumerics + separator` heads and
looks each up in a dict; only then is the provider's body pattern tried. Tokens without a separator (AKCp…,
EAAC…) are a handful of literal-led regexes.
`placeholder_token` leaves documentation shapes alone (ghp_xxxx…, sk-…YOUR_API_KEY, AKIA…EXAMPLE, abc…xyz).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from memvault.redact.shapes import Lazy, distinct_lines

Span = tuple[int, int]

AN, B64U, B64, HEX = "A-Za-z0-9", r"A-Za-z0-9_\-", "A-Za-z0-9+/", "0-9a-f"

# (prefix, body character class, min body length, max body length or 0, rule id). The body is the longest run
# of the class after the prefix; min/max check its length. Prefixes the older rules in redact.rules already
# cover (ghp_, glpat-, xox?-, sk-, sk_live_, AIza, npm_, hf_, gsk_, …) are not repeated here.
PREFIXED: tuple[tuple[str, str, int, int, str], ...] = (
    # AI and model providers
    ("lsv2_pt_", HEX + "_", 40, 0, "langsmith-key"), ("lsv2_sk_", HEX + "_", 40, 0, "langsmith-key"),
    ("pcsk_", AN + "_", 50, 0, "pinecone-key"), ("csk-", "a-z0-9", 40, 0, "cerebras-key"),
    ("nvapi-", B64U, 50, 0, "nvidia-key"), ("xai-", AN, 60, 0, "xai-key"), ("r8_", AN, 30, 0, "replicate-token"),
    ("tgp_v1_", B64U, 40, 0, "togetherai-key"), ("vck_", B64U, 50, 0, "vercel-ai-gateway-key"),
    ("AQ.Ab8RN6", B64U, 40, 0, "gemini-key"), ("apk_user_", B64 + "=", 100, 0, "devin-key"),
    ("apk_", B64 + "=", 80, 0, "devin-key"), ("cog_", "a-z2-7", 50, 0, "devin-key"),
    ("wandb_v1_", AN + "_", 70, 0, "wandb-key"), ("sk_", HEX, 48, 48, "elevenlabs-key"),
    # cloud and infrastructure
    ("fo1_", B64U, 40, 0, "flyio-token"), ("fm1a_", B64 + "=", 100, 0, "flyio-token"),
    ("fm1r_", B64 + "=", 100, 0, "flyio-token"), ("fm2_", B64 + "=", 100, 0, "flyio-token"),
    ("tk-us-", B64U, 40, 0, "scalingo-token"), ("pscale_tkn_", B64U + ".=", 32, 0, "planetscale-token"),
    ("pscale_oauth_", B64U + ".=", 32, 0, "planetscale-token"), ("pscale_pw_", B64U + ".=", 32, 0, "planetscale-token"),
    ("sbp_", "a-z0-9_-", 40, 0, "supabase-token"), ("sb_secret_", B64U, 28, 0, "supabase-token"),
    ("vcp_", B64U, 50, 0, "vercel-token"), ("vca_", B64U, 50, 0, "vercel-token"), ("vcr_", B64U, 50, 0, "vercel-token"),
    ("vci_", B64U, 50, 0, "vercel-token"), ("nfp_", AN, 36, 0, "netlify-token"),
    ("dp.pt.", AN, 40, 0, "doppler-token"), ("dp.st.", AN + "_-", 40, 0, "doppler-token"),
    ("dp.sa.", AN + "_-", 40, 0, "doppler-token"), ("dp.ct.", AN + "_-", 40, 0, "doppler-token"),
    ("dp.scim.", AN + "_-", 40, 0, "doppler-token"), ("hvs.", B64U, 90, 0, "vault-token"),
    ("hvb.", B64U, 130, 0, "vault-token"), ("pul-", HEX, 40, 40, "pulumi-token"),
    ("sha256~", B64U, 43, 43, "openshift-token"), ("ucat_", AN, 24, 0, "upcloud-token"),
    ("essu_", B64U + "=", 60, 0, "elastic-cloud-key"), ("CCDB1_", AN + "_", 60, 0, "cockroachdb-key"),
    ("tskey-", AN + "-", 30, 0, "tailscale-key"), ("mdb_sa_sk_", B64U, 40, 0, "mongodb-atlas-secret"),
    ("rnd_", AN, 30, 0, "render-key"), ("glc_", B64 + "=", 32, 0, "grafana-token"),
    ("glsa_", AN + "_", 40, 0, "grafana-token"), ("dt0c01.", AN + ".", 80, 0, "dynatrace-token"),
    ("NRAK-", "A-Z0-9", 27, 0, "newrelic-key"), ("NRII-", B64U, 32, 0, "newrelic-key"),
    ("NRJS-", HEX, 19, 0, "newrelic-key"), ("sntryu_", HEX, 64, 0, "sentry-token"),
    ("sntrys_", B64 + "=_", 80, 0, "sentry-token"), ("phx_", B64U, 40, 0, "posthog-key"),
    ("HRKU-", B64U, 58, 0, "heroku-key"), ("v1.0-", HEX + "-", 150, 0, "cloudflare-origin-key"),
    # code hosting, CI, registries
    ("rubygems_", HEX, 48, 0, "rubygems-token"), ("CLOJARS_", "a-z0-9", 60, 0, "clojars-token"),
    ("dckr_pat_", B64U, 24, 0, "dockerhub-token"), ("dckr_oat_", B64U, 28, 0, "dockerhub-token"),
    ("squ_", HEX, 40, 0, "sonarqube-token"), ("sqp_", HEX, 40, 0, "sonarqube-token"),
    ("sqa_", HEX, 40, 0, "sonarqube-token"), ("API-", "A-Z0-9", 26, 32, "octopus-key"),
    ("pnu_", AN, 36, 0, "prefect-key"), ("rdme_", "a-z0-9", 64, 0, "readme-key"),
    ("PMAK-", HEX + "-", 50, 0, "postman-key"), ("sgp_", AN + "_", 40, 0, "sourcegraph-token"),
    ("pat.", B64U + ".", 60, 0, "harness-token"), ("ico-", AN, 32, 32, "infracost-token"),
    ("bkua_", "a-z0-9", 40, 0, "buildkite-token"), ("ddp_", AN, 36, 0, "deno-token"),
    ("CCIPAT_", AN + "_", 50, 0, "circleci-token"), ("CCIPRJ_", AN + "_", 50, 0, "circleci-token"),
    ("BBDC-", B64U, 44, 0, "bitbucket-token"),
    ("rootly_", HEX, 64, 64, "rootly-key"),
    # SaaS
    ("ntn_", AN, 40, 0, "notion-token"), ("secret_", AN, 43, 43, "notion-token"), ("figd_", B64U, 36, 0, "figma-token"),
    ("tfp_", B64U + ".=", 50, 0, "typeform-token"), ("pat-na1-", HEX + "-", 36, 36, "hubspot-token"),
    ("pat-eu1-", HEX + "-", 36, 36, "hubspot-token"), ("CFPAT-", B64U, 43, 0, "contentful-token"),
    ("fio-u-", B64U + "=", 60, 0, "frameio-token"), ("sk.eyJ1Ijoi", B64U + ".", 40, 0, "mapbox-secret"),
    ("sl.", B64U + "=", 100, 0, "dropbox-token"), ("ops_eyJ", B64 + "=", 100, 0, "onepassword-token"),
    ("A3-", "A-Z0-9-", 30, 0, "onepassword-secret-key"), ("shippo_live_", HEX, 40, 0, "shippo-token"),
    ("shippo_test_", HEX, 40, 0, "shippo-token"), ("p8e-", AN, 32, 0, "adobe-client-secret"),
    ("s-s4t2ud-", HEX, 64, 0, "intra42-secret"), ("s-s4t2af-", HEX, 64, 0, "intra42-secret"),
    ("sm_pat_", AN, 16, 0, "settlemint-token"), ("sm_aat_", AN, 16, 0, "settlemint-token"),
    ("sm_sat_", AN, 16, 0, "settlemint-token"), ("AIK_CI_", AN, 20, 0, "aikido-token"),
    ("AIK_SECRET_", AN, 64, 0, "aikido-token"), ("configcat-sdk-1/", B64U + "/", 40, 0, "configcat-key"),
    ("apify_api_", AN, 36, 0, "apify-token"), ("dnkey-", "a-z0-9_=-", 70, 0, "defined-networking-token"),
    ("y0_", B64U, 50, 0, "yandex-token"), ("aio_", AN, 28, 32, "adafruit-key"),
    # payments
    ("sq0csp-", B64U, 40, 0, "square-token"), ("sq0atp-", B64U, 22, 0, "square-token"),
    ("FLWSECK_TEST-", AN + "-", 30, 0, "flutterwave-key"), ("FLWSECK-", AN + "-", 30, 0, "flutterwave-key"),
    ("duffel_live_", B64U + "=", 40, 0, "duffel-token"), ("duffel_test_", B64U + "=", 40, 0, "duffel-token"),
    ("access-production-", HEX + "-", 36, 36, "plaid-token"), ("access-development-", HEX + "-", 36, 36, "plaid-token"),
    # messaging
    ("xkeysib-", AN + "-", 80, 0, "sendinblue-key"), ("key-", HEX, 32, 32, "mailgun-key"),
    ("xoxc-", HEX + "-", 60, 0, "slack-token"), ("xoxd-", B64U + "/\\\\+%=", 80, 0, "slack-token"),
)

# Literal-led shapes with no separator, or with structure the dict cannot key: (keywords, regex, check, rule).
_STRUCTURED = (
    (("akcp",), r"AKCp(?<![A-Za-z0-9]AKCp)[A-Za-z0-9]{64,}+", None, "artifactory-key"),
    (("cmvmd",), r"cmVmd(?<![A-Za-z0-9]cmVmd)[A-Za-z0-9]{56,}+", None, "artifactory-key"),
    (("atbb",), r"ATBB(?<![A-Za-z0-9]ATBB)[A-Za-z0-9]{32,}+", None, "bitbucket-token"),
    (("akid",), r"AKID(?<![A-Za-z0-9]AKID)[A-Za-z0-9]{32,}+", "digit", "tencent-secret-id"),
    (("ltai",), r"LTAI(?<![A-Za-z0-9]LTAI)[A-Za-z0-9]{17,24}+(?![A-Za-z0-9])", None, "alibaba-key"),
    (("yc",), r"YC(?<![A-Za-z0-9_-]YC)[A-Za-z0-9_-]{38}(?![A-Za-z0-9_-])", "mixed", "yandex-key"),
    (("_gitlab_session=",), r"_gitlab_session=[0-9a-z]{32}(?![A-Za-z0-9])", None, "gitlab-session"),
    (("eaa",), r"EAA[ACM](?<![A-Za-z0-9]EAA.)[A-Za-z0-9_-]{40,}+", "digit", "facebook-token"),
    (("oy2",), r"oy2(?<![A-Za-z0-9]oy2)[a-z0-9]{43}(?![A-Za-z0-9])", "digit", "nuget-key"),
    (("ezak", "eztk"), r"EZ[AT]K(?<![A-Za-z0-9]EZ.K)[A-Za-z0-9]{54,}+", None, "easypost-token"),
    (("absk",), r"ABSK(?<![A-Za-z0-9]ABSK)[A-Za-z0-9+/]{100,}+={0,2}", None, "aws-bedrock-key"),
    (("aqvn",), r"AQVN(?<![A-Za-z0-9]AQVN)[A-Za-z0-9_-]{35,38}+(?![A-Za-z0-9_-])", None, "yandex-key"),
    (("exo",), r"EXO(?<![A-Za-z0-9]EXO)[A-Za-z0-9]{24,30}+(?![A-Za-z0-9])", "digit", "exoscale-key"),
    (("4b1d",), r"4b1d(?<![A-Za-z0-9]4b1d)[A-Za-z0-9]{38}(?![A-Za-z0-9])", "upper", "clickhouse-key"),
    (("atatt3",), r"ATATT3(?<![A-Za-z0-9]ATATT3)[A-Za-z0-9_=-]{100,}+", None, "atlassian-token"),
    (("cnvca",), r"cnvca(?<![A-Za-z0-9]cnvca)[A-Za-z0-9_-]{48,}+", None, "canva-secret"),
    (("dapi",), r"dapi(?<![A-Za-z0-9]dapi)[0-9a-f]{32}(?:-\d)?(?![A-Za-z0-9])", None, "databricks-token"),
    (("eyjrijo",), r"eyJrIjo[gi](?<![A-Za-z0-9]eyJrIjo.)[A-Za-z0-9+/]{40,}+={0,2}", None, "grafana-token"),
    (("aaaaaaaaaaaaaaaaaaaaaa",), r"A{22}(?<![A-Za-z0-9]A{22})[A-Za-z0-9%]{60,}+", "twitter", "twitter-bearer-token"),
    (("_mmk",), r"(?<![A-Za-z0-9])[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", None, "maxmind-key"),
    ((".atlasv1.",), r"(?<![A-Za-z0-9])[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}+", None, "terraform-token"),
    (("pat",), r"pat(?<![A-Za-z0-9]pat)[A-Za-z0-9]{14}\.[0-9a-f]{64}", None, "airtable-token"),
    (("-us",), r"-us\d(?<=[0-9a-f]{32}-us\d)\d?(?![A-Za-z0-9])", "mailchimp", "mailchimp-key"),
    (("q~",), r"Q~(?<=[0-9]Q~)[A-Za-z0-9_~.-]{30,}+", "azure", "azure-client-secret"),
    (("|",), r"\|(?<=[0-9]{15}\|)[A-Za-z0-9_-]{27,40}+(?![A-Za-z0-9_-])", "facebook", "facebook-token"),
    (("zxlk",), r"ZXlK(?<![A-Za-z0-9+/]ZXlK)[A-Za-z0-9+/]{40,}+={0,2}", "jwt64", "jwt"),
    (("webhook.office.com",),
     r"https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/._-]{60,}+", None, "teams-webhook"),
    (("sig=",), r"https://[^\s\"'<>]{1,200}?\?[^\s\"'<>]{0,200}?\bsv=[^\s\"'<>]{0,300}?\bsig=[A-Za-z0-9%+/=]{20,}+"
                r"[^\s\"'<>]*+", None, "azure-sas-url"),
    (("sharedaccesskey=",), r"Endpoint=sb://[A-Za-z0-9.-]{1,100}/?;SharedAccessKeyName=[^;\s\"']{1,128};"
                            r"SharedAccessKey=[A-Za-z0-9+/]{20,}+={0,2}(?:;EntityPath=[^;\s\"']{1,128})?",
     None, "azure-connection-string"),
    (("azconfig.io",), r"Endpoint=https://[A-Za-z0-9-]{1,63}\.azconfig\.io;Id=[^;\s\"']{1,80};"
                       r"Secret=[A-Za-z0-9+/]{20,}+={0,2}", None, "azure-connection-string"),
    (("contribsys.com",), r"https?://[0-9a-f]{8}:[0-9a-f]{8}@(?:gems|enterprise)\.contribsys\.com/?", None,
     "sidekiq-url"),
)

_HEADS: dict[str, list[tuple[str, re.Pattern[str], int, int, str]]] = {}
# A separator between two alphanumerics: the end of a token's head (`ghp_`, `sk-`, `dp.`, `configcat-`). A
# separator-led pattern lets _sre skip everything else in C; the head before it is read back and looked up.
_SEP = Lazy(r"[_.~-](?<=[A-Za-z0-9][_.~-])(?=[A-Za-z0-9_-])")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_WORD = _ALNUM | {"_"}


_HEAD_ENDS: set[str] = set()  # the last two characters of every head (`p_` of ghp_, `1.` of dt0c01.)


def _heads() -> dict[str, list[tuple[str, re.Pattern[str], int, int, str]]]:
    if not _HEADS:  # built on first use: `memvault search` imports this module and never scans for tokens
        for prefix, cls, lo, hi, rule in PREFIXED:
            cut = min(i for i, c in enumerate(prefix) if c in "_.~-") + 1
            _HEADS.setdefault(prefix[:cut], []).append((prefix, re.compile(f"[{cls}]++"), lo, hi, rule))
            _HEAD_ENDS.add(prefix[cut - 2:cut])
        for entries in _HEADS.values():
            entries.sort(key=lambda e: -len(e[0]))
    return _HEADS


def find_tokens(text: str, low: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, rule id) of every provider token of this module (PREFIXED, then the literal-led shapes).
    Each is at least 16 printable ASCII characters without a space: a chat turn without such a run (most
    prose, all Chinese) is done after one C-level search."""
    if _RUN16.search(text) is None:
        return
    yield from find_prefixed(text)
    yield from find_structured(text, low)


_RUN16 = Lazy(r"[!-~]{16}")


def find_prefixed(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, rule id) of every token of the PREFIXED table that is not a placeholder."""
    if _SEP.search(text) is None:
        return  # no separator glued to a word on both sides
    heads = _heads()
    ends = _HEAD_ENDS
    done = 0
    for m in _SEP.finditer(text):
        i = m.start()
        if i < done or text[i - 1:i + 1] not in ends:
            continue  # no provider's head ends with these two characters (t.Errorf, my_var)
        s = i
        while s > 0 and s > i - 11 and text[s - 1] in _ALNUM:
            s -= 1
        entries = heads.get(text[s:i + 1])
        if entries is None or s > 0 and text[s - 1] in _WORD:
            continue  # no provider's head, or glued to a word (my_ghp_…)
        for prefix, body, lo, hi, rule in entries:
            if not text.startswith(prefix, s):
                continue
            b = body.match(text, s + len(prefix))
            n = b.end() - b.start() if b else 0
            if n < lo or (hi and n > hi):
                continue
            if not placeholder_token(text[s:b.end()]):
                done = b.end()
                yield s, b.end(), rule
            break


def find_structured(text: str, low: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, rule id) of the literal-led shapes, each tried only when one of its keywords occurs."""
    if not _FINDERS:
        _FINDERS.extend((kw, _structured_finder(pattern, check), rule) for kw, pattern, check, rule in _STRUCTURED)
    hay = distinct_lines(low)
    for keywords, find, rule in _FINDERS:
        for k in keywords:
            if k in hay:
                for s, e in find(text, low):
                    yield s, e, rule
                break


_FINDERS: list = []


def _structured_finder(pattern: str, check: str | None):
    compiled: list[re.Pattern[str]] = []

    def find(text: str, low: str) -> Iterator[Span]:
        if not compiled:
            compiled.append(re.compile(pattern))
        for m in compiled[0].finditer(text):
            s, e = m.span()
            if check == "digit" and not any(c.isdigit() for c in m[0]):
                continue
            if check == "upper" and not any(c.isupper() for c in m[0]):
                continue
            if check == "mixed" and not (any(c.isdigit() for c in m[0]) and any(c.islower() for c in m[0])):
                continue
            if check == "mailchimp":
                s = m.start() - 32
                if s > 0 and text[s - 1].isascii() and text[s - 1].isalnum():
                    continue
            elif check == "azure":
                s = m.start() - 4
                if s < 0 or not re.fullmatch(r"[A-Za-z0-9_~.]{3}\d", text[s:m.start()]) or (
                        s > 0 and text[s - 1].isascii() and (text[s - 1].isalnum() or text[s - 1] in "_~.-")):
                    continue
            elif check == "facebook":
                s = m.start() - 15
                while s > 0 and s > m.start() - 16 and text[s - 1].isdigit():
                    s -= 1
                if s > 0 and text[s - 1].isdigit():
                    continue
            elif check == "jwt64" and not _is_base64_jwt(m[0]):
                continue
            elif check == "twitter":
                body = m[0].lstrip("A")
                if not _mixed(body) or placeholder_token(body):
                    continue
            if check != "twitter" and placeholder_token(text[s:e]):
                continue
            yield s, e

    return find


def _mixed(s: str) -> bool:
    return any(c.isdigit() for c in s) and any(c.islower() for c in s)


def _is_base64_jwt(s: str) -> bool:
    """A JWT encoded as a whole: base64 that decodes to `eyJ…` header `.` payload."""
    import base64  # only when a ZXlK… run is found: search start-up never pays for it
    import binascii

    head = s[:len(s) - len(s) % 4][:120]
    try:
        raw = base64.b64decode(head, validate=True)
    except (binascii.Error, ValueError):
        return False
    return re.match(rb"eyJ[A-Za-z0-9_-]{10,}\.", raw) is not None


# --------------------------------------------------------------------------- placeholders

# Marks of documentation anywhere in a token: characters no key alphabet holds, long words in one case (a
# random body holds a given 6-letter word once in ~10^9 keys), runs of one character (not A: base64 of zero
# bytes is A…A, Dropbox keys hold ten, Twitter's 22) and keyboard runs. Plain `in` tests: ~10x a regex here.
_PH_MARKS = Lazy(r"[<>…]|\.\.\.|\*\*\*|12345678")
_PH_LONG = Lazy(r"example|placeholder|redacted|changeme|replace|insert|sample|xxxxxx|abcdefgh|qwertyui")  # lowered
_PH_RUN = Lazy(r"([^A])\1{7}")
# Short words count only as whole segments (between separators or the token's ends), each word in one case:
# `YOUR_API_KEY`, `your-key-here`, `xoxb-abcdef-abcdef`, never "YoUr" or "faKE" inside a random run.
_PH_STRONG = frozenset("your here fake dummy todo abcdef abcd".split())  # 4+ letters: "xxx" or "TBD" happen by chance
_PH_WEAK = frozenset("my the a api key keys token secret access auth bot app user id pat personal client goes "
                     "value this put paste new own real".split())
_SEGMENTS = Lazy(r"[A-Za-z0-9]+")
_WORDS = Lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


# Looser, for a value next to a key name (`api_key = AIzaYOUR_API_KEY`): a provider's token there is still
# found by its own rule, so the word may stand anywhere and in any case.
_PH_LOOSE = Lazy(r"xxxx|your|here|example|placeholder|dummy|redacted|changeme|replace|insert|sample|fake")


@functools.lru_cache(maxsize=8192)
def placeholder_token(tok: str, loose: bool = False) -> bool:
    """ghp_xxxx…, sk-ant-…YOUR_API_KEY, AKIA…EXAMPLE, glrt-0000…, xoxb-abcdef-abcdef: documentation, not a key.
    A key drawn at random in its documented format is never taken for one (tests/unit/redact_keygen.py).
    `loose`: for a value next to a key name, where a placeholder word counts anywhere."""
    low = tok.lower()
    if loose and _PH_LOOSE.search(low) is not None or _PH_MARKS.search(tok) is not None:
        return True
    for m in _PH_LONG.finditer(low):
        w = tok[m.start():m.end()]
        if w.islower() or w.isupper() or w.istitle():
            return True
    if _PH_RUN.search(tok) is not None and len(set(tok)) > 1:
        return True  # a value that is one character throughout is a (bad) secret of its own
    for seg in _SEGMENTS.findall(tok):
        if len(seg) < 4 or len(seg) > 24 or not seg.isalpha():
            continue  # a digit is no placeholder word's
        low = seg.lower()
        if low == "x" * len(low) or low in _PH_STRONG and (seg.islower() or seg.isupper() or seg.istitle()):
            return True
        words = _WORDS.findall(seg)
        if len(words) > 1 and any(w.lower() in _PH_STRONG for w in words) \
                and all(w.lower() in _PH_STRONG or w.lower() in _PH_WEAK for w in words):
            return True  # YourApiKey, yourTokenHere
    return False
