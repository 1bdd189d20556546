"""Generated redaction cases, shared by tests/unit/test_redact.py and bench/redact.py.

Every secret is random from a fixed seed and shaped like the provider's documented format; none is real.
Plain stdlib so the bench can import it without pytest.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

SEED = 20261130
ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "_-"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Case:
    kind: str
    rule: str  # the rule id that must fire
    lang: str  # "en" | "zh"
    text: str
    secrets: tuple[str, ...]  # nothing of these may survive
    expect: str | None = None  # exact expected output, when it is fixed (emails, home directories)


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _with_digit(rng: random.Random, alphabet: str, n: int) -> str:
    while True:
        s = _r(rng, alphabet, n)
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def _password(rng: random.Random) -> str:
    return rng.choice(string.ascii_letters) + _with_digit(rng, ALNUM + "!%^*_+", rng.randint(7, 15))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _pem_body(rng: random.Random, lines: int) -> list[str]:
    raw = base64.b64encode(rng.randbytes(48 * lines + rng.randint(1, 40))).decode()
    return [raw[i:i + 64] for i in range(0, len(raw), 64)]


# Templates put the token next to the punctuation gitleaks' end boundary misses: CJK commas and stops,
# brackets, quotes, backticks, and CJK text glued to both sides.
EN_TEMPLATES = (
    "Here is my key {s}, please keep it safe.",
    "I exported it as ({s}) and the call still failed.",
    'The config says "{s}" for production.',
    "The CI log printed `{s}`; is that bad?",
)
ZH_TEMPLATES = (
    "这是我的密钥{s}，请帮我检查一下。",
    "我把{s}放进了配置文件里",
    "报错信息里有（{s}）这个值。",
    "别把「{s}」提交到仓库！",
)


def _tokens(rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, rule, value) for every token-shaped secret."""
    jwt_head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    jwt_body = _b64url(json.dumps({"sub": _r(rng, HEX, 12), "iat": rng.randint(1_600_000_000, 1_800_000_000)}).encode())
    return [
        ("aws-access-key-id-akia", "aws-access-key-id", "AKIA" + _r(rng, B32, 16)),
        ("aws-access-key-id-asia", "aws-access-key-id", "ASIA" + _r(rng, B32, 16)),
        ("github-classic-pat", "github-pat", "ghp_" + _r(rng, ALNUM, 36)),
        ("github-fine-grained-pat", "github-fine-grained-pat",
         "github_pat_" + _r(rng, ALNUM, 22) + "_" + _r(rng, ALNUM, 59)),
        ("github-oauth", "github-oauth", "gho_" + _r(rng, ALNUM, 36)),
        ("github-app-server", "github-app-token", "ghs_" + _r(rng, ALNUM, 36)),
        ("github-app-user", "github-app-token", "ghu_" + _r(rng, ALNUM, 36)),
        ("github-refresh", "github-refresh-token", "ghr_" + _r(rng, ALNUM, 36)),
        ("gitlab-pat", "gitlab-token", "glpat-" + _r(rng, B64URL, 20)),
        ("gitlab-deploy", "gitlab-token", "gldt-" + _r(rng, B64URL, 20)),
        ("gitlab-runner", "gitlab-token", "glrt-" + _r(rng, B64URL, 20)),
        ("gitlab-trigger", "gitlab-token", "glptt-" + _r(rng, HEX, 40)),
        ("slack-bot", "slack-token",
         f"xoxb-{_r(rng, string.digits, 12)}-{_r(rng, string.digits, 13)}-{_r(rng, ALNUM, 24)}"),
        ("slack-user", "slack-token",
         f"xoxp-{_r(rng, string.digits, 12)}-{_r(rng, string.digits, 12)}-{_r(rng, string.digits, 13)}"
         f"-{_r(rng, HEX, 32)}"),
        ("slack-app", "slack-app-token",
         f"xapp-1-A{_r(rng, string.ascii_uppercase + string.digits, 10)}-{_r(rng, string.digits, 13)}"
         f"-{_r(rng, HEX, 64)}"),
        ("slack-webhook", "slack-webhook",
         f"https://hooks.slack.com/services/T{_r(rng, B32, 8)}/B{_r(rng, B32, 10)}/{_r(rng, ALNUM, 24)}"),
        ("stripe-secret-live", "stripe-key", "sk_live_" + _r(rng, ALNUM, 99)),
        ("stripe-restricted-live", "stripe-key", "rk_live_" + _r(rng, ALNUM, 99)),
        ("stripe-secret-test", "stripe-key", "sk_test_" + _r(rng, ALNUM, 24)),
        ("stripe-webhook-secret", "stripe-key", "whsec_" + _r(rng, ALNUM, 32)),
        ("openai-project", "openai-api-key",
         "sk-proj-" + _r(rng, B64URL, 74) + "T3BlbkFJ" + _r(rng, B64URL, 74)),
        ("openai-legacy", "openai-api-key", "sk-" + _r(rng, ALNUM, 20) + "T3BlbkFJ" + _r(rng, ALNUM, 20)),
        ("anthropic", "anthropic-api-key", "sk-ant-api03-" + _r(rng, B64URL, 93) + "AA"),
        ("deepseek", "deepseek-api-key", "sk-" + _r(rng, HEX, 32)),
        ("other-sk-key", "sk-api-key", "sk-" + _with_digit(rng, ALNUM, 48)),
        ("google-api-key", "gcp-api-key", "AIza" + _r(rng, B64URL, 35)),
        ("google-oauth-client-secret", "gcp-oauth-secret", "GOCSPX-" + _r(rng, B64URL, 28)),
        ("google-oauth-access-token", "gcp-oauth-token", "ya29." + _r(rng, B64URL, 120)),
        ("twilio-api-key", "twilio-api-key", "SK" + _r(rng, HEX, 32)),
        ("twilio-account-sid", "twilio-account-sid", "AC" + _r(rng, HEX, 32)),
        ("sendgrid", "sendgrid-api-key", f"SG.{_r(rng, B64URL, 22)}.{_r(rng, B64URL, 43)}"),
        ("npm", "npm-token", "npm_" + _r(rng, ALNUM, 36)),
        ("pypi", "pypi-token", "pypi-AgEIcHlwaS5vcmc" + _r(rng, B64URL, 140)),
        ("huggingface", "huggingface-token", "hf_" + _r(rng, string.ascii_letters, 34)),
        ("telegram-bot", "telegram-bot-token",
         f"{rng.randint(10**8, 10**10)}:AA{_r(rng, B64URL, 33)}"),
        ("discord-bot", "discord-bot-token",
         "M" + _r(rng, ALNUM, 23) + "." + _r(rng, B64URL, 6) + "." + _r(rng, B64URL, 38)),
        ("discord-webhook", "discord-webhook",
         f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**18)}/{_r(rng, B64URL, 68)}"),
        ("jwt", "jwt", f"{jwt_head}.{jwt_body}.{_r(rng, B64URL, 43)}"),
        ("digitalocean", "digitalocean-token", "dop_v1_" + _r(rng, HEX, 64)),
        ("shopify", "shopify-token", "shpat_" + _r(rng, HEX, 32)),
        ("groq", "groq-api-key", "gsk_" + _r(rng, ALNUM, 52)),
        ("perplexity", "perplexity-api-key", "pplx-" + _r(rng, ALNUM, 48)),
        ("age", "age-secret-key", "AGE-SECRET-KEY-1" + _r(rng, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    ]


def _pem(rng: random.Random, kind: str, end: bool = True) -> tuple[str, list[str]]:
    label = {"rsa": "RSA PRIVATE KEY", "openssh": "OPENSSH PRIVATE KEY", "ec": "EC PRIVATE KEY",
             "pkcs8": "PRIVATE KEY", "encrypted": "ENCRYPTED PRIVATE KEY", "dsa": "DSA PRIVATE KEY",
             "pgp": "PGP PRIVATE KEY BLOCK"}[kind]
    body = _pem_body(rng, rng.randint(4, 9))
    head = [f"-----BEGIN {label}-----"]
    if kind == "pgp":
        head.append("Version: GnuPG v2")
        head.append("")
    lines = head + body + ([f"-----END {label}-----"] if end else [])
    return "\n".join(lines), body


def positive_cases(seed: int = SEED) -> list[Case]:
    rng = random.Random(seed)
    cases: list[Case] = []
    for kind, rule, value in _tokens(rng):
        for i, t in enumerate(EN_TEMPLATES):
            cases.append(Case(f"{kind}#{i}", rule, "en", t.format(s=value), (value,)))
        for i, t in enumerate(ZH_TEMPLATES):
            cases.append(Case(f"{kind}#{i}", rule, "zh", t.format(s=value), (value,)))

    for kind in ("rsa", "openssh", "ec", "pkcs8", "encrypted", "dsa", "pgp"):
        block, body = _pem(rng, kind)
        cases.append(Case(f"pem-{kind}", "private-key", "en",
                          f"Here's the key you asked about:\n{block}\nThanks for checking.", tuple(body)))
        block, body = _pem(rng, kind)
        cases.append(Case(f"pem-{kind}", "private-key", "zh", f"这是服务器上的私钥：\n{block}\n帮我看看格式对不对。",
                          tuple(body)))
    block, body = _pem(rng, "rsa", end=False)
    cases.append(Case("pem-no-end", "private-key", "en", f"It got cut off:\n{block}\n\nWhat is wrong?", tuple(body)))
    block, body = _pem(rng, "openssh", end=False)
    cases.append(Case("pem-no-end", "private-key", "zh", f"粘贴到一半断了：\n{block}", tuple(body)))
    block, body = _pem(rng, "rsa")
    flat = block.replace("\n", " ")
    cases.append(Case("pem-one-line", "private-key", "en", f"Pasted flat: {flat} -- ok?", tuple(body)))
    cases.append(Case("pem-one-line", "private-key", "zh", f"压成一行了：{flat}，能用吗？", tuple(body)))

    for lang, lead in (("en", "My service account file:"), ("zh", "这是服务账号的 JSON：")):
        block, body = _pem(rng, "pkcs8")
        sa = json.dumps({"type": "service_account", "project_id": "demo-project",
                         "private_key_id": _r(rng, HEX, 40), "private_key": block + "\n",
                         "client_id": str(rng.randint(10**20, 10**21))})
        cases.append(Case("gcp-service-account-json", "gcp-service-account", lang, f"{lead} {sa}", tuple(body)))

    for lang, t in (("en", "Connection string: DefaultEndpointsProtocol=https;AccountName=demostore;"
                           "AccountKey={k};EndpointSuffix=core.windows.net"),
                    ("zh", "存储连接串是 DefaultEndpointsProtocol=https;AccountName=demo;AccountKey={k}，记得换掉。")):
        k = _r(rng, B64, 86) + "=="
        cases.append(Case("azure-storage-connection-string", "azure-storage-key", lang, t.format(k=k), (k,)))

    def add(kind: str, rule: str, en: str, zh: str, make) -> None:
        for lang, t in (("en", en), ("zh", zh)):
            v = make()
            cases.append(Case(kind, rule, lang, t.format(v=v), (v,)))

    add("authorization-bearer", "authorization-header",
        'curl -H "Authorization: Bearer {v}" https://api.example.com/v1/models',
        "请求头里带了 Authorization: Bearer {v}，返回 401。", lambda: _r(rng, B64URL, 40))
    add("authorization-basic", "authorization-header",
        "The proxy sends Authorization: Basic {v} on every request.",
        "抓包看到 Authorization: Basic {v}。",
        lambda: base64.b64encode(f"admin:{_password(rng)}".encode()).decode())
    add("url-credentials", "url-credentials",
        "Connect with postgres://admin:{v}@db.internal.example.com:5432/app and run the migration.",
        "连接串 mysql://root:{v}@10.0.0.5:3306/prod，别外传。", lambda: _password(rng))
    add("env-password", "password-assignment",
        "My .env has DB_PASSWORD={v} and DEBUG=1.", "我的 .env 里写着 REDIS_PASSWORD={v}，对吗？",
        lambda: _password(rng))
    add("json-api-key", "password-assignment",
        'The request body is {{"model": "x", "api_key": "{v}"}}.',
        '配置是 {{"api_key": "{v}", "timeout": 30}}，为什么报错？', lambda: _with_digit(rng, ALNUM, 32))
    add("yaml-secret", "password-assignment",
        "config.yaml:\n  db:\n    secret: {v}\n  port: 5432", "配置如下：\nclient_secret: {v}\n然后重启服务。",
        lambda: _password(rng))
    add("prose-my-password", "password-prose",
        "By the way, my password is {v} if you need to log in.", "顺便说一下，我的邮箱密码是{v}，别告诉别人。",
        lambda: _password(rng))
    add("prose-the-token", "password-prose",
        "The token is {v}, it expires tomorrow.", "那个token是{v}，明天过期。", lambda: _with_digit(rng, ALNUM, 24))
    add("prose-kouling", "password-prose",
        "The Wi-Fi passphrase is '{v}' for guests.", "门禁口令：{v}，进门后再改。", lambda: _password(rng))
    add("prose-miyao", "password-prose",
        "The secret key is {v} (do not share).", "接口密钥：{v}。", lambda: _with_digit(rng, ALNUM, 20))
    add("prose-password-for", "password-prose",
        "The password for the router is {v}!", "路由器的密码为 {v} ，记住了吗", lambda: _password(rng))

    for lang, t in (("en", "Contact me at {v} anytime."), ("zh", "请发邮件到{v}，谢谢。")):
        v = f"{_r(rng, string.ascii_lowercase, 6)}.{_r(rng, string.ascii_lowercase, 5)}@{_r(rng, string.ascii_lowercase, 7)}.com"
        cases.append(Case("email", "email", lang, t.format(v=v), (v,), t.format(v="[email]")))
    for lang, t, rest in (("en", "The file is at {v}/projects/app.py today.", "~/projects/app.py"),
                          ("zh", "文件在{v}/下载/报告.pdf 里面", "~/下载/报告.pdf")):
        user = _r(rng, string.ascii_lowercase, 7)
        v = f"/home/{user}"
        cases.append(Case("home-linux", "home-dir", lang, t.format(v=v), (v,), t.format(v="~")))
    for lang, t in (("en", "Xcode keeps it in {v}/Library/Developer."), ("zh", "配置在 {v}/.config/app 下。")):
        v = f"/Users/{_r(rng, string.ascii_lowercase, 6)}"
        cases.append(Case("home-macos", "home-dir", lang, t.format(v=v), (v,), t.format(v="~")))
    for lang, t in (("en", r"Open {v}\AppData\Roaming\app.ini and edit it."), ("zh", r"日志在 {v}\Desktop\log.txt 里。")):
        v = "C:\\Users\\" + _r(rng, string.ascii_letters, 6)
        cases.append(Case("home-windows", "home-dir", lang, t.format(v=v), (v,), t.format(v="~")))
    return cases


# --------------------------------------------------------------------------- negatives

_EN = """\
Reset your password in settings, then sign in again.
The password must be at least 12 characters long.
Did you forget your password? Click the link below.
A token is roughly four characters of English text.
Set max_tokens to 4096 for longer answers.
The API key is stored in the environment, never in the repo.
Use a secret manager such as Vault or AWS Secrets Manager.
Your password is incorrect, please try again.
The token is expired, so refresh it first.
My password is too short according to the form.
The key is to keep the function pure.
Authorization: required for all endpoints below.
Bearer tokens are sent in the Authorization header.
We rotate secrets every ninety days.
Passwords are hashed with argon2id before storage.
I think the tokenizer splits Chinese into single characters.
Press the key combination Ctrl+Shift+P to open the palette.
The primary key of the table is a UUID.
Please describe the steps to reproduce the bug.
Memory cards are plain markdown files with YAML front matter.
She decided to store the vault in git instead of SQLite.
The meeting moved to Thursday at 3 pm.
Latency dropped from 120 ms to 45 ms after the index change.
Version 2.3.1 fixed the crash on startup.
The token count was 1532 for that prompt.
Skip the test if the secret is not configured.
Rate limits are 60 requests per minute per key.
That is the key insight of the paper.
Token: a unit of text the model reads.
Password: at least 8 characters, one digit.
The sk-learn package is called scikit-learn on PyPI.
Ask the user for a password when the vault is encrypted.
Tokens, keys and passwords never leave the machine.
The PIN is four digits on most phones.
Give me the secret recipe for good pasta.
Read the docs at https://docs.python.org/3/library/re.html before writing the regex.
He said the password was changed yesterday.
Open an issue if the token is rejected.
See RFC 6750 for bearer token usage.
The answer is 42, as everyone knows.
"""

_ZH = """\
请在设置里重置你的密码，然后重新登录。
密码要至少8位，并且包含数字。
忘记密码了怎么办？
一个token大约是一个汉字。
把密钥放在环境变量里，不要写进代码。
口令错误，请重试。
密钥长度为4096位。
令牌数量为100000个。
这个模型的上下文是128k个token。
我们每九十天轮换一次密钥。
密码是什么？我忘了。
令牌已过期，请刷新。
私钥要妥善保管，千万不要上传到 GitHub。
今天下午三点开会，地点在三楼会议室。
这个函数的时间复杂度是线性的。
我决定把记忆库存成纯文本文件，而不是 SQLite。
请帮我把这段代码改成异步的。
用户说他更喜欢深色主题。
上海明天有雨，记得带伞。
这篇论文的关键在于对比学习。
请把日志里的错误信息贴给我看看。
数据库迁移完成后重启服务。
版本 2.3.1 修复了启动时崩溃的问题。
密码学是一门很有意思的学科。
这个接口需要鉴权，但不需要密钥。
令牌桶算法可以用来限流。
把 max_tokens 设成 2048 就够了。
我的邮箱是工作用的，不方便公开。
口令和密码在中文里意思差不多。
这个问题的答案是 42。
请用中文回答，谢谢。
周末去杭州玩了两天，西湖很美。
这个正则表达式有灾难性回溯的问题。
模型回答得很好，但是有点啰嗦。
记得给测试加上中文用例。
密钥是用 RSA 生成的。
秘钥管理用 KMS 就行。
"""

_CODE = """\
def load(path: str) -> dict:
    password = input("Password: ")
    token = tokenizer.encode(text)
    api_key = os.environ["OPENAI_API_KEY"]
    secret = os.getenv("APP_SECRET")
if password == "":
    raise ValueError("empty password")
self.token = token
password = getpass.getpass()
def login(user: str, password: str, token: Optional[str] = None) -> bool:
const apiKey = process.env.API_KEY;
let token = await getToken();
headers = {"Authorization": f"Bearer {token}"}
"Authorization": "Bearer ${TOKEN}",
password: ${DB_PASSWORD}
api_key: <your-api-key>
secret_key = settings.SECRET_KEY
export GITHUB_TOKEN=$(gh auth token)
max_tokens: 1024
tokens = text.split()
for key, value in config.items():
    print(f"{key}={value}")
return {"token_type": "Bearer", "expires_in": 3600}
SELECT id, name FROM users WHERE email_verified = true;
git commit -m "Fix token refresh race"
x = y if key in cache else None
password_length = 16
TOKEN_LIMIT = 8000
if not secret:
    return None
import { useState } from "react";
<input type="password" name="password" autocomplete="current-password">
docker run -e POSTGRES_PASSWORD -p 5432:5432 postgres:16
kubectl create secret generic app --from-env-file=.env
assert redact(text).findings == ()
key_id = "primary"
credential_helper = osxkeychain
"""

_URLS = """\
https://github.com/gitleaks/gitleaks
https://docs.python.org/3/library/re.html#re.compile
https://example.com/home/index.html
https://example.com/Users/list?page=2&sort=name
http://localhost:8080/api/v1/cards?limit=20
https://www.google.com/search?q=memvault&hl=zh-CN
ssh://git@github.com/org/repo.git
git@github.com:org/repo.git
https://hooks.example.com/services/build-status
https://zh.wikipedia.org/wiki/%E5%AF%86%E7%A0%81
https://pypi.org/project/regex/
ftp://ftp.example.org/pub/file.tar.gz
https://discord.com/channels/123/456
https://api.openai.com/v1/chat/completions
https://user.example.com/path/to:thing
https://[2001:db8::1]:8443/status
mailto:?subject=hello
"""

_PATHS = """\
/usr/local/bin/python3
/etc/nginx/nginx.conf
/var/log/syslog
/opt/homebrew/bin/git
/tmp/memvault-test/episodes/2026/11/2026-11-02.jsonl
./src/memvault/redact.py
../home/readme.md
C:\\Program Files\\Git\\bin\\git.exe
D:\\data\\export.json
~/memvault/cards/2026-11/c-20261102-7f3a.md
/srv/www/homepage/index.html
/mnt/Users-backup/report.txt
src/components/UserList.tsx
"""

_MISC = """\
icon@2x.png and logo@3x.png are the retina assets.
npm install @types/node@20.11.0
pip install "requests>=2.31"
python@3.11 is the default.
The ratio is 16:9 and the time is 12:34:56.
Call +1-555-0100 for support.
IP 192.168.1.10, port 8080.
2026-11-02T07:53:01Z
ep-20261102T075301Z-3f9a1c
c-20261102-7f3a
Price: $19.99/month
a == b and c != d
::1 is localhost in IPv6.
SKU-12345 is out of stock.
ACK received, SYN sent.
AKIA is the prefix of AWS keys.
ghp_ tokens are classic GitHub PATs.
sk-... stands for a secret key.
eyJhbGciOi is how a JWT header starts.
-----BEGIN CERTIFICATE-----
-----BEGIN PUBLIC KEY-----
"""


def negative_lines(seed: int = SEED) -> list[str]:
    rng = random.Random(seed + 1)
    lines: list[str] = []
    for block in (_EN, _ZH, _CODE, _URLS, _PATHS, _MISC):
        lines += [ln for ln in block.splitlines() if ln.strip()]
    for _ in range(15):
        u = f"{_r(rng, HEX, 8)}-{_r(rng, HEX, 4)}-4{_r(rng, HEX, 3)}-a{_r(rng, HEX, 3)}-{_r(rng, HEX, 12)}"
        lines.append(rng.choice(("request id {u}", "card {u} was merged", "会话 ID：{u}", "uuid={u}")).format(u=u))
    for _ in range(15):
        sha = _r(rng, HEX, 40)
        lines.append(rng.choice(("commit {s}", "Merge {s} into main", "回滚到 {s} 了", "git show {s}:README.md",
                                 "sha256:{s}{s2}")).format(s=sha, s2=_r(rng, HEX, 24)))
    for _ in range(12):
        c = _r(rng, HEX, 6)
        lines.append(rng.choice(("color: #{c};", "背景色用 #{c}", "border: 1px solid #{c}", "fill=\"#{c}\"")).format(c=c))
    for i in range(6):
        data = base64.b64encode(rng.randbytes(rng.randint(200, 1500))).decode()
        mime = ("png", "jpeg", "gif", "webp", "svg+xml", "png")[i]
        lines.append(f'<img src="data:image/{mime};base64,{data}" alt="chart">')
    for _ in range(6):
        data = base64.b64encode(rng.randbytes(rng.randint(100, 600))).decode()
        lines.append(f"![图](data:image/png;base64,{data})")
    for _ in range(8):
        lines.append(f"checksum {_r(rng, HEX, 64)} ok, build {rng.randint(1000, 9999)}")
    for _ in range(6):
        lines.append(f"version {rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)} "
                     f"released on 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
    return lines


# --------------------------------------------------------------------------- bench corpus

_CHAT_EN = """\
Sure, here is a version of the function that streams the file instead of reading it all at once.
The main trade-off is memory against simplicity; for files under a few megabytes it does not matter.
I would start with a plain dictionary and only reach for a database when the data outgrows memory.
Can you explain why the test fails only on the second run?
The error comes from the cache: it keeps the old value after the file changed on disk.
Let me know if you want me to add type hints and docstrings as well.
That sounds right, but I would keep the retry logic in one place.
We could also sort the results by date and then by title, which matches what the user expects.
In short: the lock protects the index, not the episodes, so two writers can still append safely.
Thanks, that fixed it! Next question: how do I make the output deterministic?
Use sorted keys and a fixed float format, and avoid iterating over sets when you print.
The benchmark shows about 40 ms per query on ten thousand cards, which is fine for now.
I moved the parsing into its own module so the command stays thin.
Here is a short summary of what we decided in this session.
Good catch, the off-by-one was in the slice, not in the loop.
"""

_CHAT_ZH = """\
好的，下面是改成流式读取的版本，这样大文件也不会占用太多内存。
我觉得先用字典实现就够了，等数据量上去再考虑数据库。
这个测试只有第二次运行才失败，能帮我看看原因吗？
问题出在缓存上：文件改了以后缓存里还是旧值。
如果需要的话，我可以顺便把类型注解和文档字符串补上。
可以按日期排序，再按标题排序，这样更符合用户的预期。
简单来说，锁保护的是索引，不是原始记录，所以两个进程同时追加也没问题。
谢谢，问题解决了！下一个问题：怎样让输出结果保持确定性？
打印的时候对键排序，浮点数用固定格式，不要直接遍历集合。
一万张卡片的查询大概四十毫秒，目前来说够用了。
我把解析逻辑拆到单独的模块里了，命令本身只负责调用。
总结一下这次会话里我们做的决定。
好眼力，差一错误在切片上，不在循环里。
明天继续看同步的问题，今天先到这里。
这段代码在 Windows 上路径分隔符不对，需要用 pathlib 处理。
"""

_CHAT_CODE = """\
def read_lines(path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            yield line.rstrip("\\n")
cards = sorted(cards, key=lambda c: (c.created, c.id))
for i, card in enumerate(cards, start=1):
    print(f"{i:>3} {card.title}")
result = {k: v for k, v in sorted(counts.items())}
if not path.exists():
    raise FileNotFoundError(path)
class Index:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.entries: dict[str, int] = {}
    def add(self, name: str, size: int) -> None:
        self.entries[name] = size
$ python -m pytest tests/unit -q
$ git log --oneline | head -5
const items = data.map((x) => x.name).filter(Boolean);
SELECT count(*) FROM episodes WHERE project = 'memory-graph';
"""


def chat_corpus(size: int = 4 << 20, seed: int = SEED) -> str:
    """About `size` characters of ordinary chat: mixed zh/en prose and code blocks, with a sprinkle (1 in
    10 turns) of the trigger-word negatives (password / token / key mentioned without a value)."""
    rng = random.Random(seed + 2)
    en = [ln for ln in _CHAT_EN.splitlines() if ln]
    zh = [ln for ln in _CHAT_ZH.splitlines() if ln]
    code = [ln for ln in _CHAT_CODE.splitlines() if ln]
    tricky = negative_lines(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        kind = rng.random()
        if kind < 0.4:
            chunk = " ".join(rng.choice(en) for _ in range(rng.randint(2, 6)))
        elif kind < 0.75:
            chunk = "".join(rng.choice(zh) for _ in range(rng.randint(2, 6)))
        elif kind < 0.9:
            chunk = "```python\n" + "\n".join(rng.choice(code) for _ in range(rng.randint(3, 12))) + "\n```"
        else:
            chunk = rng.choice(tricky)
        parts.append(chunk)
        total += len(chunk) + 2
    return "\n\n".join(parts)


def dense_corpus(size: int = 4 << 20, seed: int = SEED) -> str:
    """Worst case for speed: nothing but the negative lines, nearly all full of trigger words."""
    rng = random.Random(seed + 4)
    lines = negative_lines(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        ln = rng.choice(lines)
        parts.append(ln)
        total += len(ln) + 1
    return "\n".join(parts)


def pathological_lines(size: int = 1 << 20, seed: int = SEED) -> dict[str, str]:
    rng = random.Random(seed + 3)
    lines = {f"repeat {c!r}": c * size for c in "a@. -=x:/_\\"}
    lines["base64"] = base64.b64encode(rng.randbytes(size * 3 // 4)).decode()[:size]
    lines["base64url"] = base64.urlsafe_b64encode(rng.randbytes(size * 3 // 4)).decode()[:size]
    lines["a@a.a.a…"] = "a@" + "a." * (size // 2)
    lines["a@ repeated"] = "a@" * (size // 2)
    lines["password= run"] = "password=" + "a" * size
    lines["password is run"] = "my password is " + "a1" * (size // 2)
    lines["密码是 run"] = "密码是" + "a" * size
    lines["sk- run"] = "sk-" + "a1" * (size // 2)
    lines["ghp_ run"] = "ghp_" + "A" * size
    lines["PEM no END"] = "-----BEGIN RSA PRIVATE KEY-----\n" + ("A" * 63 + "\n") * (size // 64)
    lines["url userinfo"] = "http://" + "a:" * (size // 2)
    lines["home run"] = "/home/" * (size // 6)
    lines["token: words"] = "token: " + "word " * (size // 5)
    lines["eyJ dots"] = "eyJ" + "aaaaaaaaaaaa.eyJ" * (size // 16)
    return lines
