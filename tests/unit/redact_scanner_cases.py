"""Issue 24's table: redaction at the breadth of dedicated secret scanners. Frozen before tuning.

Four parts, every value drawn at run time from a seeded RNG (no literal secret in the repository):
- forms: the syntaxes code and configs really use (17 common `key = value` forms, the rarer ones the issue
  lists: Go `var x string =` and back-quoted strings, PHP `.=`, `System.setProperty`, multi-line XML, make
  `::=` `:::=` `?=`, Kubernetes Secret `data:` maps, Azure client secrets) x several value shapes;
- providers: the ~230 token kinds of tests/unit/redact_scanner_kinds.py, bare in chat (when they carry a prefix)
  and assigned to a key that names the provider;
- placeholders per provider (`ghp_xxxx…`, `xoxb-xxxx…`, `AKIA…EXAMPLE`, `your-api-key-here`, `<token>`,
  `${TOKEN}`) that must be left alone;
- ordinary chat text that resembles secrets (prose, code, Chinese, git SHAs, digests, UUIDs, base64 images,
  resource ids, public keys) that must be left alone.

Two draws: the tuning draw (SEED) and a held-out draw (other seed, other key names, other value shapes, and the
forms nobody listed: Kotlin, Rust, Dockerfile, HTTP headers, query strings, Terraform, …), which is reported
apart and never tuned on. Plain stdlib: bench/redact.py imports it.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

from redact_scanner_kinds import (ALNUM, B64, B64URL, BARE_EN, BARE_ZH, HEX, KINDS, LALNUM, UALNUM, Kind,
                                  azure_client_secret, jwt, r, uuid)

SEED = 20261224
HELDOUT_SEED = 77024


@dataclass(frozen=True)
class BCase:
    table: str  # "form" | "provider"
    form: str  # the syntax the secret sits in ("bare-en", "dotenv", "go-var", …)
    family: str  # provider family (ai, cloud, …) or "value:<shape>" for the form table
    kind: str  # token kind or value shape
    lang: str
    text: str
    secrets: tuple[str, ...]  # no 16-character window of these may survive (the whole, when shorter)


# --------------------------------------------------------------------------- key names

# (words, strong): strong names (password, secret) take any value; the others a machine-made one.
TUNE_KEYS = ((("api", "key"), False), (("auth", "token"), False), (("client", "secret"), True),
             (("db", "password"), True), (("access", "token"), False), (("secret", "key"), True),
             (("x", "token"), False), (("private", "key"), False), (("app", "secret"), True))
HELD_KEYS = ((("signing", "secret"), True), (("session", "token"), False), (("webhook", "secret"), True),
             (("master", "key"), False), (("encryption", "key"), False), (("bot", "token"), False),
             (("refresh", "token"), False), (("admin", "password"), True), (("smtp", "pass"), True),
             (("service", "account", "key"), False), (("passphrase",), True), (("license", "key"), False))


def styles(words: tuple[str, ...]) -> dict[str, str]:
    w = [x.lower() for x in words]
    camel = w[0] + "".join(x.capitalize() for x in w[1:])
    return {"K": "_".join(w).upper(), "k": "_".join(w), "c": camel, "P": camel[0].upper() + camel[1:],
            "kb": "-".join(w), "d": ".".join(w), "H": "X-" + "-".join(x.capitalize() for x in w)}


# --------------------------------------------------------------------------- forms

COMMON = (
    ("dotenv", "{K}={v}"),
    ("shell-export", 'export {K}="{v}"'),
    ("ini", "[service]\nhost = api.internal\n{k} = {v}\ntimeout = 30"),
    ("yaml", "service:\n  url: https://api.example.com\n  {k}: {v}\n  retries: 3"),
    ("yaml-quoted", 'auth:\n  {k}: "{v}"'),
    ("json", '{{"endpoint": "https://api.example.com", "{c}": "{v}", "timeout": 30}}'),
    ("python", '{k} = "{v}"'),
    ("python-kwarg", 'client = ServiceClient(base_url=BASE, {k}="{v}")'),
    ("js-const", "const {c} = '{v}';"),
    ("js-object", "const cfg = {{ region: 'eu-west-1', {c}: '{v}' }};"),
    ("java", 'private static final String {K} = "{v}";'),
    ("java-properties", "app.{d}={v}"),
    ("ruby", "config.{k} = '{v}'"),
    ("php-var", "${c} = '{v}';"),
    ("php-array", "return [\n    'driver' => 'smtp',\n    '{k}' => '{v}',\n];"),
    ("go-short", '{c} := "{v}"'),
    ("toml", '[tool.deploy]\nregion = "eu"\n{k} = "{v}"'),
)
RARE = (
    ("go-var", 'var {c} string = "{v}"'),
    ("go-backquote", "{c} := `{v}`"),
    ("php-concat", '${c} = "";\n${c} .= "{v}";'),
    ("java-setproperty", 'System.setProperty("{d}", "{v}");'),
    ("xml-multiline", "<{c}>\n    {v}\n</{c}>"),
    ("make-posix", "{K} ::= {v}"),
    ("make-immediate", "{K} :::= {v}"),
    ("make-conditional", "{K} ?= {v}"),
    ("k8s-secret", None),  # built by k8s_secret()
    ("azure-client-secret", None),  # built by azure_form()
)
UNLISTED = (  # held-out draw only: syntaxes no rule was written for
    ("kotlin", 'val {c}: String = "{v}"'),
    ("swift", 'let {c} = "{v}"'),
    ("rust", 'const {K}: &str = "{v}";'),
    ("c-define", '#define {K} "{v}"'),
    ("csharp-indexer", 'config["{P}"] = "{v}";'),
    ("powershell", '$env:{K} = "{v}"'),
    ("dockerfile-env", "FROM python:3.12-slim\nENV {K}={v}"),
    ("dockerfile-env-space", "ENV {K} {v}"),
    ("terraform-variable", 'variable "{k}" {{\n  type    = string\n  default = "{v}"\n}}'),
    ("elixir", 'config :my_app, {k}: "{v}"'),
    ("lua", 'local {k} = "{v}"'),
    ("perl", "my ${k} = '{v}';"),
    ("http-header", "{H}: {v}"),
    ("query-string", "GET https://api.example.com/v2/items?{k}={v}&page=2"),
    ("docker-env-flag", "docker run -e {K}={v} -p 8080:80 app:latest"),
    ("clojure", '(def {kb} "{v}")'),
    ("r-setenv", 'Sys.setenv({K} = "{v}")'),
    ("python-environ", 'os.environ["{K}"] = "{v}"'),
    ("java-map-put", 'props.put("{d}", "{v}");'),
    ("nginx-header", 'proxy_set_header {H} "{v}";'),
    ("json-in-string", '"{{\\"{c}\\": \\"{v}\\"}}"'),
    ("k8s-env-list", 'env:\n  - name: {K}\n    value: "{v}"'),
    ("xml-attribute", '<property name="{d}" value="{v}"/>'),
    ("sql-password", "ALTER USER app WITH PASSWORD '{v}';"),
    ("yaml-block-scalar", "{k}: |\n  {v}"),
    ("ts-typed", 'const {c}: string = "{v}";'),
    ("python-typed", '{K}: Final[str] = "{v}"'),
)

EN_WRAP = ("{s}", "Here is my config:\n```\n{s}\n```\nWhy does it fail?", "I put this in the file:\n\n{s}\n\nand restarted.")
ZH_WRAP = ("配置如下：\n```\n{s}\n```\n为什么连不上？", "我在文件里写了：\n{s}\n然后重启了服务。", "{s}")

_PW = ALNUM + "!%^*_+-=@~"


def _with_digit(rng: random.Random, alphabet: str, n: int) -> str:
    while True:
        s = r(rng, alphabet, n)
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def _plain(kind: Kind) -> bool:
    """A bare kind whose values never hold '/', ' ' or '|' (20 probe draws), so any form can quote them."""
    probe = random.Random(0)
    return kind.bare and kind.family != "structured" and not any(
        c in kind.make(probe) for _ in range(20) for c in "/ |")


_PLAIN = [k for k in KINDS if _plain(k)]


def _prefixed(rng: random.Random) -> str:
    return rng.choice(_PLAIN).make(rng)


# value shape -> (strong keys only?, generator)
TUNE_VALUES = {
    "password": (True, lambda g: g.choice(string.ascii_letters) + _with_digit(g, _PW, g.randint(9, 15))),
    "hex32": (False, lambda g: r(g, HEX, 32)),
    "base64-40": (False, lambda g: r(g, B64, 40)),
    "alnum32": (False, lambda g: _with_digit(g, ALNUM, 32)),
    "prefixed": (False, _prefixed),
    "jwt": (False, jwt),
    "uuid": (False, uuid),
    "lower-alnum24": (False, lambda g: _with_digit(g, LALNUM, 24)),
}
_WORDS = "velvet orbit cactus harbor amber signal quartz meadow falcon ember tundra lantern copper violet".split()
HELD_VALUES = {
    "passphrase": (True, lambda g: "-".join(g.choice(_WORDS).capitalize() for _ in range(3)) + f"-{g.randint(10, 99)}"),
    "symbols": (True, lambda g: _with_digit(g, ALNUM + "!%^*+=@~&?", g.randint(12, 20))),
    "hex40": (False, lambda g: r(g, HEX, 40)),
    "base64url43": (False, lambda g: r(g, B64URL, 43)),
    "upper-alnum20": (False, lambda g: _with_digit(g, UALNUM, 20)),
    "prefixed": (False, _prefixed),
    "jwt": (False, jwt),
    "lower-alnum40": (False, lambda g: _with_digit(g, LALNUM, 40)),
}


def k8s_secret(rng: random.Random, key: dict[str, str], v: str) -> tuple[str, tuple[str, ...]]:
    """A Secret manifest: the value (and a second one) base64-encoded under data:, or in clear under stringData."""
    enc = lambda s: base64.b64encode(s.encode()).decode()  # noqa: E731
    url = f"postgres://app:{_with_digit(rng, ALNUM, 16)}@db.internal:5432/app"
    style = rng.randrange(3)
    if style == 0:
        text = (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {key['kb']}\n  namespace: prod\ntype: Opaque\n"
                f"data:\n  {key['k']}: {enc(v)}\n  DATABASE_URL: {enc(url)}\n")
        return text, (enc(v), enc(url))
    if style == 1:
        text = (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-credentials\ntype: Opaque\n"
                f"stringData:\n  {key['kb']}: \"{v}\"\n  connection-string: \"{url}\"\n")
        return text, (v, url)
    doc = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "registry"},
           "data": {key['d']: enc(v), ".dockerconfigjson": enc(json.dumps({"auths": {"ghcr.io": {"auth": enc(
               "bot:" + v)}}}))}}
    text = json.dumps(doc, indent=2)
    return text, (enc(v), doc["data"][".dockerconfigjson"])


def azure_form(rng: random.Random, i: int) -> tuple[str, tuple[str, ...]]:
    v = azure_client_secret(rng)
    tenant, app = uuid(rng), uuid(rng)
    t = (f"AZURE_CLIENT_SECRET={v}",
         f'{{"clientId": "{app}", "clientSecret": "{v}", "tenantId": "{tenant}"}}',
         f'client_secret = "{v}"',
         f"az login --service-principal -u {app} -p {v} --tenant {tenant}",
         f'{{\n  "appId": "{app}",\n  "displayName": "ci-deployer",\n  "password": "{v}",\n  "tenant": "{tenant}"\n}}',
         f"The secret value shown in the portal was {v} (copied before it disappears).",
         f"ClientSecretCredential(tenant_id, client_id, \"{v}\")",
         f"Azure 门户里新建的客户端密码是 {v}，只显示一次。")[i % 8]
    return t, (v,)


def form_cases(seed: int = SEED, heldout: bool = False) -> list[BCase]:
    rng = random.Random(seed)
    keys = HELD_KEYS if heldout else TUNE_KEYS
    values = HELD_VALUES if heldout else TUNE_VALUES
    forms = COMMON + RARE + (UNLISTED if heldout else ())
    out: list[BCase] = []
    for form, template in forms:
        for i, (shape, (strong_only, make)) in enumerate(values.items()):
            lang = "zh" if len(out) % 2 else "en"
            wrap = rng.choice(ZH_WRAP if lang == "zh" else EN_WRAP)
            pool = [w for w, strong in keys if strong or not strong_only]
            key = styles(rng.choice(pool))
            v = make(rng)
            if form == "k8s-secret":
                body, secrets = k8s_secret(rng, key, v)
            elif form == "azure-client-secret":
                body, secrets = azure_form(rng, i)
            else:
                body, secrets = template.format(v=v, **key), (v,)
            out.append(BCase("form", form, f"value:{shape}", shape, lang, wrap.format(s=body), secrets))
    return out


# --------------------------------------------------------------------------- providers

_KEYWORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASS", "CONNECTION", "URI", "URL", "COOKIE")
_SUFFIX = ("API_KEY", "TOKEN", "SECRET", "ACCESS_TOKEN", "SECRET_KEY", "AUTH_TOKEN", "KEY", "API_TOKEN")
_PROVIDER_FORMS = ("dotenv", "shell-export", "yaml", "json", "python", "js-const", "go-short", "toml",
                   "php-array", "java-properties", "yaml-quoted", "ini")


def provider_key(kind: Kind, rng: random.Random) -> dict[str, str]:
    name = kind.name
    last = name.rsplit("_", 1)[-1]
    if last in _KEYWORDS:
        full = name
    elif last == "CLIENT":
        full = name + "_SECRET"
    elif last in ("ACCESS", "SESSION", "ADMIN", "OAUTH", "AUTH"):
        full = name + rng.choice(("_KEY", "_TOKEN"))
    else:
        full = name + "_" + rng.choice(_SUFFIX)
    return styles(tuple(full.split("_")))


def provider_cases(seed: int = SEED, heldout: bool = False) -> list[BCase]:
    rng = random.Random(seed + 1)
    forms = dict(COMMON + RARE + (UNLISTED if heldout else ()))
    names = [f for f in _PROVIDER_FORMS] + (["kotlin", "powershell", "http-header", "dockerfile-env"]
                                              if heldout else ["go-var", "make-conditional", "xml-multiline"])
    out: list[BCase] = []
    for kind in KINDS:
        slots = ["bare-en", "bare-zh", "assign"] if kind.bare else ["assign", "assign"]
        for slot in slots:
            v = kind.make(rng)
            if slot == "bare-en":
                text, lang, form = rng.choice(BARE_EN).format(v=v), "en", slot
            elif slot == "bare-zh":
                text, lang, form = rng.choice(BARE_ZH).format(v=v), "zh", slot
            else:
                form = rng.choice(names)
                lang = rng.choice(("en", "zh"))
                body = forms[form].format(v=v, **provider_key(kind, rng))
                text = rng.choice(ZH_WRAP if lang == "zh" else EN_WRAP).format(s=body)
            out.append(BCase("provider", form, kind.family, kind.id, lang, text, (v,)))
    return out


def breadth_positive_cases(seed: int | None = None, heldout: bool = False) -> list[BCase]:
    seed = (HELDOUT_SEED if heldout else SEED) if seed is None else seed
    return form_cases(seed, heldout) + provider_cases(seed, heldout)


# --------------------------------------------------------------------------- placeholders (must be left alone)

# (prefix, body length, alphabet kind) of tokens whose documentation shows placeholders.
PLACEHOLDER_PREFIXES = (
    ("ghp_", 36), ("gho_", 36), ("ghs_", 36), ("ghu_", 36), ("ghr_", 36), ("github_pat_", 82), ("glpat-", 20),
    ("gldt-", 20), ("glrt-", 20), ("sk-", 48), ("sk-proj-", 80), ("sk-ant-api03-", 95), ("sk-or-v1-", 64),
    ("AIza", 35), ("ntn_", 46), ("sgp_", 40), ("hf_", 34), ("npm_", 36), ("pypi-", 60), ("dop_v1_", 64),
    ("sk_live_", 24), ("sk_test_", 24), ("rk_live_", 24), ("whsec_", 32), ("gsk_", 52), ("pplx-", 48),
    ("lin_api_", 40), ("figd_", 40), ("dckr_pat_", 27), ("hvs.", 90), ("dp.st.", 43), ("dp.pt.", 43),
    ("shpat_", 32), ("pcsk_", 70), ("lsv2_pt_", 43), ("r8_", 37), ("nvapi-", 64), ("tskey-auth-", 40),
    ("xai-", 80), ("vcp_", 56), ("sbp_", 40), ("nfp_", 40), ("phx_", 47), ("sntryu_", 64), ("NRAK-", 27),
    ("glc_", 60), ("rubygems_", 48), ("pnu_", 36), ("ATATT3", 60), ("AKCp", 69), ("CFPAT-", 43),
    ("apify_api_", 36), ("rnd_", 32), ("dapi", 32), ("squ_", 40), ("tfp_", 59), ("HRKU-AA", 58),
    ("SG.", 66), ("xkeysib-", 64), ("key-", 32), ("EAAC", 100), ("csk-", 48), ("tgp_v1_", 43), ("fo1_", 43),
    ("pscale_tkn_", 43), ("dckr_oat_", 32), ("figd_", 40), ("sk-svcacct-", 80), ("ops_eyJ", 60),
)
_FILLERS = (
    lambda n: "x" * n, lambda n: "X" * n, lambda n: "...", lambda n: "<your-token>", lambda n: "*" * 12,
    lambda n: "0" * n, lambda n: "your_token_here", lambda n: "…", lambda n: "xxxx" + "-xxxx" * 3,
    lambda n: ("abcdefghijklmnopqrstuvwxyz0123456789" * 4)[:n], lambda n: "<TOKEN>", lambda n: "YOUR_API_KEY",
)
_PH_CONTEXT = (
    "Set the variable like `{p}` in your .env file.",
    "Tokens look like {p} (this one is fake).",
    "例如：{p}",
    "export SERVICE_TOKEN={p}",
    'api_key: "{p}"',
    "示例配置里写的是 {p}，换成你自己的。",
    "Replace {p} with the value from the dashboard.",
    'const token = "{p}";',
)
_GENERIC_PH = (
    "your-api-key-here", "<token>", "${TOKEN}", "${{ secrets.API_TOKEN }}", "{{ .Values.apiKey }}", "changeme",
    "REPLACE_ME", "xxxxxxxxxxxxxxxxxxxx", "********", "<your-secret>", "TODO", "%API_KEY%", "$(API_KEY)",
    "your_token_here", "YOUR_API_KEY", "<insert token>", "dummy", "example", "...", "${env:API_KEY}",
    "{{API_KEY}}", "<client-secret>", "YOUR_SECRET_HERE", "$API_KEY",
)


def placeholder_lines(seed: int = SEED) -> list[tuple[str, str]]:
    rng = random.Random(seed + 2)
    out: list[tuple[str, str]] = []
    for i, (prefix, n) in enumerate(PLACEHOLDER_PREFIXES):
        for j in range(2):
            p = prefix + _FILLERS[(2 * i + j) % len(_FILLERS)](n)
            out.append(("provider-placeholder", rng.choice(_PH_CONTEXT).format(p=p)))
    # AWS documentation's key pair and other well-known documentation shapes, generated here
    for _ in range(3):
        akid = "AKIA" + r(rng, UALNUM, 9) + "EXAMPLE"
        out.append(("provider-placeholder", f"aws_access_key_id = {akid}"))
        out.append(("provider-placeholder", f"aws_secret_access_key = {r(rng, ALNUM + '/', 30)}EXAMPLEKEY"))
        out.append(("provider-placeholder", f"AWS 文档里的示例密钥是 {akid}，不能用。"))
    out += [("provider-placeholder", ln) for ln in (
        "xoxb-" + "x" * 12 + "-" + "x" * 13 + "-" + "x" * 24,
        "SLACK_BOT_TOKEN=xoxb-your-bot-token",
        "xoxp-" + "-".join("X" * 8 for _ in range(3)) + "-" + "X" * 16,
        "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24,
        "https://discord.com/api/webhooks/<webhook_id>/<webhook_token>",
        "Authorization: Bearer eyJ...",
        "token: eyJhbGciOi...",
        "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\n<your private key here>\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nMIIE...\n-----END OPENSSH PRIVATE KEY-----",
        "AZURE_CLIENT_SECRET=<client-secret>",
        "postgres://user:<password>@localhost/db",
        "ANTHROPIC_API_KEY=sk-ant-...",
        "OPENAI_API_KEY=sk-proj-...",
        "密钥格式：sk-xxxxxxxxxxxxxxxxxxxxxxxx",
    )]
    # generic placeholders in every form
    forms = COMMON + RARE + UNLISTED
    for form, template in forms:
        for _ in range(2):
            p = rng.choice(_GENERIC_PH)
            key = styles(rng.choice(TUNE_KEYS + HELD_KEYS)[0])
            if template is None:
                if form == "k8s-secret":
                    empty = rng.choice(('""', "{{ .Values.password | b64enc }}"))
                    text = ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n"
                            f"  {key['k']}: {empty}\n")
                else:
                    text = f"AZURE_CLIENT_SECRET={p}"
            else:
                text = template.format(v=p, **key)
            out.append(("form-placeholder", text))
    return out


# --------------------------------------------------------------------------- ordinary text (must be left alone)

_ORDINARY = """\
Notion's API tokens start with ntn_ and Sourcegraph's with sgp_, so a scanner can spot them.
Slack bot tokens begin with xoxb- and user tokens with xoxp-.
The sk-learn name is wrong; the package is scikit-learn.
xoxo, Anna
The hf_hub_download function caches files under ~/.cache.
Call hf_hub_download(repo_id="gpt2", filename="config.json") to fetch one file.
npm_config_registry is read from the environment by npm.
Use the github_pat_ prefix check in the pre-commit hook.
AKIA and ASIA are the two access-key prefixes AWS uses.
A JWT has three base64url parts separated by dots and starts with eyJ.
The token bucket refills at 10 tokens per second.
We rotate the signing key every 90 days; the old key stays valid for a week.
Set the API key in the dashboard, not in code.
The secret sauce is caching the tokenizer.
Keyboard shortcut: press Ctrl+K to open the command palette.
The primary key is (tenant_id, created_at).
Passwords must have 12 characters, one digit and one symbol.
The access token expires after one hour; refresh it with the refresh token.
Tokenization splits "unbelievable" into un, believ, able.
Our API returns 401 when the key is missing and 403 when it lacks a scope.
I forgot my password again, resetting it now.
The private key never leaves the HSM.
Which key type should I use for SSH, ed25519 or RSA?
The session token is stored in an HttpOnly cookie.
The function getAccessTokenFromRefreshToken() returns a promise.
AbstractSingletonProxyFactoryBean is a real Spring class name.
OAuth2AuthorizationCodeGrantRequestEntityConverter converts the request.
KeyboardInterruptException was raised during the download.
ThisIsAVeryLongCamelCaseIdentifierWithoutDigits appears in the generated code.
The build matrix has py311, py312 and py313.
Apple's Secure Enclave stores the key material.
Our Kafka consumer group is called payments-settlement-v2.
The webhook secret is used to verify the signature header.
Bearer authentication sends the token in the Authorization header.
Use the client credentials flow for machine-to-machine tokens.
The password field is hashed with bcrypt, cost 12.
密钥轮换每九十天一次，旧密钥保留一周。
令牌桶每秒补充十个令牌。
请在控制台里设置 API 密钥，不要写进代码。
访问令牌一小时后过期，用刷新令牌换新的。
我的 token 用完了，明天再试。
这个 key 不对，换一个试试。
私钥永远不离开硬件安全模块。
Notion 的集成令牌以 ntn_ 开头。
GitHub 的个人访问令牌以 ghp_ 开头，细粒度的以 github_pat_ 开头。
把 Slack 机器人令牌（xoxb- 开头）放进密钥管理服务。
这段代码的作用是生成一个随机的会话密钥。
密码学课上讲了 RSA 和椭圆曲线。
公钥可以公开，私钥必须保密。
他把主键改成了联合主键。
"""

_CODE = r"""
token = get_token(session)
const apiKey = useApiKey();
api_key=settings.api_key
password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())
secret_name = "prod/db/credentials"
token_url = "https://auth.example.com/oauth/token"
cache_key = f"user:{user_id}:profile"
SECRET_KEY = env("DJANGO_SECRET_KEY")
{"key": "ArrowUp", "code": "ArrowUp", "keyCode": 38}
<input type="password" name="password" value="" autocomplete="new-password">
<li key={item.id}>{item.name}</li>
"login.password.placeholder": "Enter your password"
password = var.db_password
password: ${{ secrets.DB_PASSWORD }}
token: !Ref GithubToken
valueFrom:\n  secretKeyRef:\n    name: db-credentials\n    key: password
api_key = os.environ.get("OPENAI_API_KEY")
const token = await getTokenSilently();
String token = request.getHeader("Authorization");
if (token == null || token.isEmpty()) return unauthorized();
let key = map.get(&id).unwrap();
func (c *Client) Token() (string, error) { return c.token, nil }
var apiKey = Environment.GetEnvironmentVariable("API_KEY");
$password = $_POST['password'];
password = getpass.getpass("Password: ")
self.secret = secret
self.access_token = access_token
headers["Authorization"] = f"Bearer {self.token}"
export DATABASE_URL="postgres://localhost/dev"
AWS_REGION=eu-west-1
TOKEN_EXPIRY_SECONDS=3600
KEY_ROTATION_DAYS=90
MAX_TOKENS=4096
SECRET_MANAGER=aws
secret_ref: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db
keyring.set_password("memvault", user, password)
private_key_path = "~/.ssh/id_ed25519"
ssh_key_file: /etc/ssh/ssh_host_ed25519_key.pub
tls_cert_file: /etc/ssl/certs/server.crt
kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  FEATURE_FLAGS: search,graph
token_type: Bearer
grant_type: client_credentials
apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ntype: kubernetes.io/tls
public_key = serialization.load_pem_public_key(pem)
publishable_key: pk_live_placeholder_for_docs
key_algorithm: RSA_4096
password_policy: strong
auth_method: oauth2
"""


def ordinary_lines(seed: int = SEED) -> list[tuple[str, str]]:
    rng = random.Random(seed + 3)
    out: list[tuple[str, str]] = []
    out += [("prose", ln) for ln in _ORDINARY.splitlines() if ln.strip()]
    out += [("code", ln.replace("\\n", "\n")) for ln in _CODE.splitlines() if ln.strip()]
    for _ in range(12):
        sha = r(rng, HEX, 40)
        out.append(("hash", rng.choice((
            f"commit {sha}\nAuthor: Dev Team", f"Fixed in {sha[:12]}, see the PR.",
            f"git checkout {sha}", f"回滚到 {sha[:7]} 就好了", f"Reverts commit {sha}.",
            f"revision: {sha}", f'"sha": "{sha}"', f"https://github.com/org/repo/commit/{sha}"))))
    for _ in range(10):
        h = r(rng, HEX, 64)
        out.append(("hash", rng.choice((
            f"docker pull ghcr.io/org/app@sha256:{h}", f"https://registry.example.com/v2/app/blobs/sha256:{h}",
            f"sha256sum: {h}  app.tar.gz", f"checksum = \"{h}\"", f"--hash=sha256:{h}",
            f"digest: sha256:{h}", f"镜像摘要 sha256:{h}", f"https://example.com/download/{h}/file.zip"))))
    for _ in range(10):
        u = uuid(rng)
        out.append(("uuid", rng.choice((
            f"request_id={u}", f'"trace_id": "{u}"', f"client_id: {u}", f"tenant {u} was migrated",
            f"https://portal.azure.com/#resource/subscriptions/{u}/resourceGroups/prod",
            f"X-Request-Id: {u}", f"会话 {u} 已过期", f"idempotency_key = \"{u}\""))))
    for _ in range(6):
        data = base64.b64encode(rng.randbytes(rng.randint(300, 1200))).decode()
        out.append(("base64-image", rng.choice((f'<img src="data:image/png;base64,{data}">',
                                                 f"![截图](data:image/jpeg;base64,{data})"))))
    for _ in range(5):
        out.append(("hash", f'"integrity": "sha512-{base64.b64encode(rng.randbytes(64)).decode()}"'))
        out.append(("hash", f"golang.org/x/{rng.choice(('net', 'sys', 'text'))} v0.{rng.randint(1, 30)}.0 "
                            f"h1:{base64.b64encode(rng.randbytes(32)).decode()}"))
    for _ in range(10):
        out.append(("resource-id", rng.choice((
            f"ami-0{r(rng, HEX, 16)}", f"instance i-0{r(rng, HEX, 16)} is stopped", f"sg-0{r(rng, HEX, 16)}",
            f"arn:aws:iam::{r(rng, '0123456789', 12)}:role/deploy", f"subnet-0{r(rng, HEX, 16)}",
            f'ObjectId("{r(rng, HEX, 24)}")', f"vpc-{r(rng, HEX, 17)}",
            f"order {r(rng, '0123456789ABCDEFGHJKMNPQRSTVWXYZ', 26)} shipped",
            f"wallet address 0x{r(rng, HEX, 40)}", f"s3://backups-{r(rng, LALNUM, 8)}/2026/11/db.dump"))))
    for _ in range(5):
        key = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 " + rng.randbytes(32)).decode()
        out.append(("public-key", rng.choice((f"ssh-ed25519 {key} deploy@ci", f"authorized_keys: ssh-ed25519 {key}",
                                              f"公钥是 ssh-ed25519 {key} user@laptop"))))
    for _ in range(8):
        out.append(("url-id", rng.choice((
            f"https://www.youtube.com/watch?v={r(rng, B64URL, 11)}",
            f"https://docs.google.com/document/d/1{r(rng, B64URL, 43)}/edit",
            f"https://drive.google.com/file/d/1{r(rng, B64URL, 32)}/view?usp=sharing",
            f"https://example.com/assets/index-{r(rng, B64URL, 8)}.js",
            f"static/js/main.{r(rng, HEX, 8)}.chunk.js", f"https://imgur.com/a/{r(rng, ALNUM, 7)}",
            f"https://www.figma.com/file/{r(rng, ALNUM, 22)}/Design-System",
            f"https://colab.research.google.com/drive/1{r(rng, B64URL, 32)}"))))
    for _ in range(3):
        dump = " ".join(r(rng, HEX, 4) for _ in range(8))
        out.append(("hexdump", f"00000{rng.randint(0, 9)}0: {dump}  ................"))
    out += [("numbers", ln) for ln in (
        f"Call me at +86 138 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}.",
        f"Order #{rng.randint(10**9, 10**10)} was refunded.",
        f"Build {rng.randint(1000, 9999)} took {rng.randint(2, 9)}m{rng.randint(10, 59)}s.",
        "Version 3.12.7 fixed the regression in 3.12.6.",
        f"timestamp 17{rng.randint(10**7, 10**8 - 1)}",
    )]
    return out


def breadth_negative_lines(seed: int = SEED) -> list[tuple[str, str]]:
    """(group, line): nothing in these may change."""
    return placeholder_lines(seed) + ordinary_lines(seed)
