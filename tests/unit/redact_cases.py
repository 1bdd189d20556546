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
from pathlib import Path

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
    family: str = ""  # the extended table's family (issue 11); "" for the original table


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
    # issue 11 shapes: command lines, client constructors, XML configs, glued Chinese credentials
    lines["mysql -p run"] = "mysql" + " -pa1" * (size // 4)
    lines["curl -u run"] = "curl -u a:b" * (size // 11)
    lines["flag run"] = " --password" * (size // 11)
    lines["Client( run"] = 'Client("a", ' * (size // 12)
    lines["auth=( run"] = "auth=(" * (size // 6)
    lines["<password> run"] = "<password>" * (size // 10)
    lines["<add key run"] = '<add key="Password" value="' * (size // 27)
    lines["密码 run"] = "密码 a1" * (size // 5)
    lines["users run"] = "c:\\users\\" * (size // 9)
    # issue 24 shapes: provider heads, Azure secrets, base64 JWTs, Kubernetes Secrets, keyed values in any syntax
    lines["ntn_ run"] = "ntn_" * (size // 4)
    lines["head_sep run"] = "a_b-" * (size // 4)
    lines["Q~ run"] = "1Q~" * (size // 3)
    lines["ZXlK run"] = "ZXlK" * (size // 4)
    lines["k8s data run"] = "kind: Secret\ndata:\n" + "  k: YWJj\n" * (size // 10)
    lines["api_key=\" run"] = 'api_key="' * (size // 9)
    lines["<apiKey> run"] = "<apiKey>\n" * (size // 9)
    lines["x.token .= run"] = "x.token .= " * (size // 11)
    # issue 34 shapes: names of no secret, a dash as separator, every copy of many distinct secrets
    lines["id= run"] = "<id>id=user:" * (size // 12)
    lines["token - run"] = "token - " * (size // 8)
    lines["distinct secrets"] = " ".join(f"token={_r(rng, ALNUM, 20)}" for _ in range(size // 27))
    lines["one secret, copies"] = "password=Xk9mP2vL7q " + "Xk9mP2vL7q " * (size // 11)
    return lines


# --------------------------------------------------------------------------- extended table (issue 11)
#
# Families a fresh corpus found missing: Chinese prose credentials, dotenv lines with non-provider keys,
# positional secrets in API client constructors, config formats, command lines, URLs with an empty user,
# Windows home paths; and hard negatives (placeholders, hashes, UUIDs, non-home paths, prose about
# passwords). Frozen before the rules were tuned. Values are random; `heldout=True` draws other value
# shapes and other names from a different seed, to check that the rules generalise.

SYMBOLS = "%+=#!"


def _mixed(rng: random.Random, heldout: bool = False) -> str:
    """A password-like value: starts with a letter, has a digit, often one to three of % + = # !."""
    if heldout:
        shape = rng.choice(("lowdig", "updig", "sym", "b64", "words"))
        if shape == "lowdig":
            return rng.choice(string.ascii_lowercase) + _with_digit(rng, string.ascii_lowercase + string.digits,
                                                                     rng.randint(9, 30))
        if shape == "updig":
            return rng.choice(string.ascii_uppercase) + _with_digit(rng, string.ascii_uppercase + string.digits,
                                                                     rng.randint(9, 20))
        if shape == "b64":
            return rng.choice(string.ascii_letters) + _with_digit(rng, B64, rng.randint(15, 40)) + "=" * rng.randint(0, 2)
        if shape == "words":
            words = ("tiger", "lamp", "ocean", "river", "maple", "stone", "cloud", "pixel", "amber", "delta")
            return "-".join(rng.choice(words).capitalize() for _ in range(rng.randint(2, 4))) + str(rng.randint(1, 999))
        body = list(_with_digit(rng, ALNUM, rng.randint(8, 16)))
        for _ in range(rng.randint(2, 5)):
            body.insert(rng.randint(1, len(body)), rng.choice(SYMBOLS + "&*^~"))
        return rng.choice(string.ascii_letters) + "".join(body)
    body = list(_with_digit(rng, ALNUM, rng.randint(7, 20)))
    for _ in range(rng.randint(0, 3)):
        body.insert(rng.randint(1, len(body)), rng.choice(SYMBOLS))
    return rng.choice(string.ascii_letters) + "".join(body)


def _urlpw(rng: random.Random, heldout: bool = False) -> str:
    """A password that needs no escaping inside a URL's userinfo."""
    alphabet = ALNUM + ("-_.~!*" if heldout else "-_.~")
    return rng.choice(string.ascii_letters) + _with_digit(rng, alphabet, rng.randint(8, 30 if heldout else 22))


def _shellpw(rng: random.Random, heldout: bool = False) -> str:
    """A password that needs no quoting on a shell command line."""
    alphabet = ALNUM + ("_.+=%-" if heldout else "_.+%")
    return rng.choice(string.ascii_letters) + _with_digit(rng, alphabet, rng.randint(8, 26 if heldout else 20))


def _user(rng: random.Random, heldout: bool = False) -> str:
    if heldout:
        return rng.choice(("ops", "svc", "deploy", "jenkins", "li.wei", "zhang_san")) + str(rng.randint(1, 99))
    return rng.choice(("admin", "root", "app", "wendy", "dbuser", "alice", "bob", "ci")) + \
        rng.choice(("", str(rng.randint(1, 9))))


def _keyval(rng: random.Random, heldout: bool = False) -> str:
    """A machine-made key value: hex, base64 or alnum, 16-64 long."""
    kind = rng.choice(("hex", "b64", "alnum", "laravel") if heldout else ("hex", "b64", "alnum"))
    if kind == "hex":
        return _with_digit(rng, HEX, rng.choice((32, 40, 48, 64)))
    if kind == "b64":
        return _with_digit(rng, B64, rng.randint(20, 43)) + "="
    if kind == "laravel":
        return "base64:" + base64.b64encode(rng.randbytes(32)).decode()
    return _with_digit(rng, ALNUM, rng.randint(16, 48))


_DOTENV_KEYS = ("ENCRYPTION_KEY", "ADMIN_TOKEN", "JWT_SECRET", "SESSION_SECRET", "SMTP_PASS", "MAIL_PASS",
                "DB_PASS", "APP_SECRET", "SIGNING_KEY", "MASTER_KEY", "WEBHOOK_SECRET", "CLIENT_SECRET")
_DOTENV_KEYS_HELDOUT = ("COOKIE_SECRET", "REDIS_PASS", "LDAP_BIND_PASS", "HMAC_KEY", "SERVICE_TOKEN",
                        "AUTH_SECRET", "BACKUP_ENCRYPTION_KEY", "FTP_PASS", "INTERNAL_API_TOKEN", "SECRET_KEY_BASE")
_WIN_USERS = ("wendy", "Wendy", "WENDY", "li.wei", "zhangsan", "dev01", "j_smith", "张伟", "王芳")
_WIN_USERS_HELDOUT = ("Marco", "marco.rossi", "ADMIN2", "user_7", "李娜", "kenji", "o.neil")
_URL_SCHEMES = ("redis", "rediss", "amqp", "amqps", "mongodb", "mongodb+srv", "postgres", "postgresql", "mysql",
                "mariadb", "mssql", "ftp", "ftps", "sftp", "smtp", "smtps", "imap", "ldap", "ldaps", "http", "https",
                "mqtt", "nats", "socks5", "memcached", "couchdb", "clickhouse", "oracle")


def _ext_positive_templates(rng: random.Random, heldout: bool):
    """(family, lang, template, value maker, secret slots). Templates take {v} (the secret), {u} (a user name,
    not secret), {sid}/{app} (identifiers, not secret) and {k} (a dotenv key name)."""
    mixed = lambda: _mixed(rng, heldout)  # noqa: E731
    url = lambda: _urlpw(rng, heldout)  # noqa: E731
    sh = lambda: _shellpw(rng, heldout)  # noqa: E731
    keyv = lambda: _keyval(rng, heldout)  # noqa: E731
    hex32 = lambda: _with_digit(rng, HEX, 32)  # noqa: E731
    digits = lambda: str(rng.randint(10**7, 10**12 - 1))  # noqa: E731
    aws = lambda: _with_digit(rng, B64, 40)  # noqa: E731
    return [
        # Chinese (and English) prose credentials
        ("prose-credential", "zh", "我的密码是{v}，别告诉别人。", mixed),
        ("prose-credential", "zh", "登录口令：{v}", mixed),
        ("prose-credential", "zh", "服务器的口令为 {v} ，明天会换。", mixed),
        ("prose-credential", "zh", "家里 WiFi 密码 {v}，连不上再问我。", mixed),
        ("prose-credential", "zh", "公司wifi密码是{v}", digits),
        ("prose-credential", "zh", "WiFi密码：{v}（访客网络）", mixed),
        ("prose-credential", "zh", "账号 {u} 密码 {v}", mixed),
        ("prose-credential", "zh", "账号：{u}，密码：{v}，登录后台就能看到。", mixed),
        ("prose-credential", "zh", "测试环境账号{u}密码{v}，用完告诉我。", mixed),
        ("prose-credential", "zh", "用户名 {u}，密码 {v}", mixed),
        ("prose-credential", "zh", "root 密码改成了 {v}，记一下。", mixed),
        ("prose-credential", "zh", "数据库密码：{v}（生产环境，别外传）", mixed),
        ("prose-credential", "zh", "新密码设置成 {v} 了", mixed),
        ("prose-credential", "zh", "AWS 的 secret access key：{v}，access key id 在另一条消息里。", aws),
        ("prose-credential", "zh", "这是 secret access key： {v}", aws),
        ("prose-credential", "en", "The WiFi password: {v} (guest network).", mixed),
        ("prose-credential", "en", "Login is {u} / password {v} for the staging box.", mixed),
        ("prose-credential", "en", "user: {u}, password: {v}, please rotate after the demo", mixed),
        ("prose-credential", "en", "The secret access key is {v} for the backup bucket.", aws),
        ("prose-credential", "en", "I changed the root password to {v} yesterday.", mixed),
        # dotenv lines whose key is not a provider name
        ("dotenv", "en", "Here's my .env:\n{k}={v}\nDEBUG=true", keyv),
        ("dotenv", "en", "Here's my .env:\n{k}=\"{v}\"\nPORT=3000", mixed),
        ("dotenv", "en", "The container has {k}='{v}' set, but the app can't read it.", keyv),
        ("dotenv", "en", "export {k}={v}", mixed),
        ("dotenv", "en", "In .env.production: {k}={v}", keyv),
        ("dotenv", "zh", "我的 .env 是这样写的：\n{k}={v}\n为什么读不到？", keyv),
        ("dotenv", "zh", ".env 里有一行 {k}=\"{v}\"，是不是引号的问题？", mixed),
        ("dotenv", "zh", "部署脚本里写了 export {k}='{v}'", keyv),
        ("dotenv", "zh", "环境变量 {k}={v} 已经配好了", mixed),
        # positional secrets in API client constructors
        ("client-args", "en", 'client = Client("{sid}", "{v}")', hex32),
        ("client-args", "en", "const client = require('twilio')('{sid}', '{v}');", hex32),
        ("client-args", "en", 'var client = new twilio.Twilio("{sid}", "{v}");', hex32),
        ("client-args", "en", 'Twilio.init("{sid}", "{v}");', hex32),
        ("client-args", "en", 'TwilioClient.Init("{sid}", "{v}");', hex32),
        ("client-args", "en", 'client = Client(os.environ["TWILIO_ACCOUNT_SID"], "{v}")', hex32),
        ("client-args", "en", "const client = algoliasearch('{app}', '{v}');", hex32),
        ("client-args", "en", 'client = SearchClient.create("{app}", "{v}")', hex32),
        ("client-args", "en", 'client = plivo.RestClient("{plivo}", "{v}")', lambda: _with_digit(rng, ALNUM, 40)),
        ("client-args", "en", 'r = requests.get(url, auth=("{u}", "{v}"))', mixed),
        ("client-args", "en", "session.auth = HTTPBasicAuth('{u}', '{v}')", mixed),
        ("client-args", "zh", '我这样初始化的：client = Client("{sid}", "{v}")，一直报 401。', hex32),
        ("client-args", "zh", "代码：const client = require('twilio')(\"{sid}\", \"{v}\");，短信发不出去", hex32),
        ("client-args", "zh", "用 algoliasearch('{app}', '{v}') 建索引时报权限错误", hex32),
        ("client-args", "zh", '请求这样写的 requests.post(url, auth=("{u}", "{v}"))，返回 403', mixed),
        # config formats
        ("config", "en", '<add key="Password" value="{v}" />', mixed),
        ("config", "en", '<appSettings>\n  <add key="SmtpPassword" value="{v}"/>\n</appSettings>', mixed),
        ("config", "en", '<add key="ApiKey" value="{v}" />', keyv),
        ("config", "en", '<add name="Default" connectionString="Server=db01;Database=app;User Id={u};'
                         'Password={v};" />', mixed),
        ("config", "en", "Data Source=sql.internal;Initial Catalog=crm;User ID={u};Pwd={v};Encrypt=True", mixed),
        ("config", "en", "settings.xml has <password>{v}</password> under <server>.", mixed),
        ("config", "en", "[database]\nhost = db.internal\npassword = {v}\nport = 5432", mixed),
        ("config", "en", '[smtp]\nuser = "{u}"\npassword = "{v}"', mixed),
        ("config", "en", "db:\n  user: {u}\n  password: {v}\n  pool: 5", mixed),
        ("config", "en", "spring.datasource.password={v}", mixed),
        ("config", "en", "redis.conf: requirepass {v}", mixed),
        ("config", "zh", 'Web.config 里是 <add key="Password" value="{v}" />，要加密吗？', mixed),
        ("config", "zh", "连接字符串：Server=10.0.0.8;Database=erp;User Id={u};Password={v};", mixed),
        ("config", "zh", "config.ini 的内容：\n[mysql]\npassword = {v}\n请帮我看看", mixed),
        ("config", "zh", "pyproject 里写了 password = \"{v}\"，会不会泄露？", mixed),
        ("config", "zh", "docker-compose.yml：\n    environment:\n      POSTGRES_PASSWORD: {v}", mixed),
        ("config", "zh", "YAML 配置：\nmail:\n  password: {v}\n然后重启", mixed),
        # command lines
        ("cmdline", "en", "mysql -u {u} -p'{v}' -h 127.0.0.1 app", mixed),
        ("cmdline", "en", "mysql -u{u} -p{v} app < dump.sql", sh),
        ("cmdline", "en", "mysqldump -u {u} --password={v} shop > shop.sql", sh),
        ("cmdline", "en", "curl -u {u}:{v} https://api.example.com/v1/items", sh),
        ("cmdline", "en", 'curl --user "{u}:{v}" https://ci.example.org/job/build', sh),
        ("cmdline", "en", "sshpass -p '{v}' ssh {u}@10.0.0.12", mixed),
        ("cmdline", "en", "sshpass -p {v} scp backup.tar {u}@nas:/volume1/", sh),
        ("cmdline", "en", "PGPASSWORD={v} psql -h db -U {u} app", sh),
        ("cmdline", "en", "PGPASSWORD='{v}' pg_dump -h db -U {u} app > app.sql", mixed),
        ("cmdline", "en", "docker login -u {u} -p {v} registry.example.com", sh),
        ("cmdline", "en", "docker login --username {u} --password {v} ghcr.io", sh),
        ("cmdline", "en", "git clone https://{u}:{v}@git.example.com/team/app.git", url),
        ("cmdline", "en", "redis-cli -h cache -a {v} ping", sh),
        ("cmdline", "en", "openssl pkcs12 -in cert.p12 -passin pass:{v} -nodes", sh),
        ("cmdline", "zh", "我执行了 mysql -u{u} -p'{v}' 还是连不上", mixed),
        ("cmdline", "zh", "用 mysql -h 10.0.0.3 -u {u} -p{v} 登录报 1045", sh),
        ("cmdline", "zh", "curl -u {u}:{v} http://localhost:9200/_cat/indices 返回 401", sh),
        ("cmdline", "zh", "脚本里有 sshpass -p \"{v}\" ssh {u}@server，安全吗？", mixed),
        ("cmdline", "zh", "备份命令：PGPASSWORD={v} pg_dumpall -h db", sh),
        ("cmdline", "zh", "CI 里用 docker login -u {u} -p {v} 登录私有仓库", sh),
        ("cmdline", "zh", "克隆用的是 git clone https://{u}:{v}@gitee.com/team/app.git", url),
        # URLs with credentials, including an empty user, in every scheme
        ("url-credentials", "en", "REDIS_URL={s}://:{v}@cache.internal:6379/0", url),
        ("url-credentials", "en", 'broker = "{s}://:{v}@queue.internal:5672//"', url),
        ("url-credentials", "en", "Connect with {s}://{u}:{v}@db.internal.example.com/app", url),
        ("url-credentials", "en", "The proxy is {s}://:{v}@10.1.2.3:1080 for now.", url),
        ("url-credentials", "zh", "连接 {s}://:{v}@127.0.0.1:6379 时报 NOAUTH", url),
        ("url-credentials", "zh", "配置里的地址是 {s}://{u}:{v}@10.0.0.9/prod，对吗？", url),
        ("url-credentials", "zh", "用（{s}://:{v}@mq.local）连不上", url),
    ]


_WIN_TEMPLATES = (
    ("en", "c:\\users\\{w}\\appdata\\local\\app\\log.txt", "~\\appdata\\local\\app\\log.txt"),
    ("en", "Open C:/Users/{w}/Documents/report.docx please.", "Open ~/Documents/report.docx please."),
    ("en", '{{"path": "C:\\\\Users\\\\{w}\\\\.ssh\\\\id_ed25519"}}', '{{"path": "~\\\\.ssh\\\\id_ed25519"}}'),
    ("en", "file:///C:/Users/{w}/site/index.html", "file:///~/site/index.html"),
    ("en", "Traceback: File \"C:\\Users\\{w}\\proj\\main.py\", line 3", "Traceback: File \"~\\proj\\main.py\", line 3"),
    ("zh", "日志在 c:/users/{w}/desktop/log.txt 里", "日志在 ~/desktop/log.txt 里"),
    ("zh", "文件路径是C:\\USERS\\{w}\\Downloads\\报告.pdf，打不开", "文件路径是~\\Downloads\\报告.pdf，打不开"),
    ("zh", "配置在（D:\\Users\\{w}\\.config）下面", "配置在（~\\.config）下面"),
    ("zh", "把 C:\\Users\\{w} 整个目录备份一下", "把 ~ 整个目录备份一下"),
)


def extended_positive_cases(seed: int = SEED + 11, heldout: bool = False) -> list[Case]:
    """The issue-11 table: >= 120 secret-bearing lines in the families above, two draws per template."""
    rng = random.Random(seed)
    cases: list[Case] = []
    keys = _DOTENV_KEYS_HELDOUT if heldout else _DOTENV_KEYS
    users = _WIN_USERS_HELDOUT if heldout else _WIN_USERS
    for draw in range(2):
        for family, lang, t, make in _ext_positive_templates(rng, heldout):
            v = make()
            fields = dict(v=v, u=_user(rng, heldout), k=rng.choice(keys), s=rng.choice(_URL_SCHEMES),
                          sid="AC" + _r(rng, HEX, 32), app=_r(rng, string.ascii_uppercase + string.digits, 10),
                          plivo="MA" + _r(rng, string.ascii_uppercase + string.digits, 18))
            cases.append(Case(f"{family}-{len(cases)}", "", lang, t.format(**fields), (v,), family=family))
        for lang, t, expect in _WIN_TEMPLATES:
            w = rng.choice(users) + rng.choice(("", "", str(rng.randint(1, 99))))
            cases.append(Case(f"home-windows-{len(cases)}", "home-dir", lang, t.format(w=w), (w,),
                              expect.format(), family="home-dir"))
    return cases


def extended_negative_lines(seed: int = SEED + 12) -> list[tuple[str, str]]:
    """(family, line): >= 80 secret-free lines that look dangerous. Nothing in them may change."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    placeholders = [
        "Use postgres://user:password@localhost:5432/app for local development.",
        "mongodb://user:pass@localhost:27017/test is the example from the docs.",
        "amqp://guest:guest@localhost:5672/ is RabbitMQ's default.",
        "连接串写成 mysql://username:password@host:3306/db 这种格式。",
        "redis://:<password>@localhost:6379/0",
        "export STRIPE_KEY=sk_test_...",
        "STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx",
        "api_key: <your-key>",
        "把 api_key 换成 <your-api-key> 再运行。",
        'token = "xxxx"',
        "password: changeme",
        "密码：changeme（默认值，第一次登录后修改）",
        "DB_PASSWORD=${DB_PASSWORD}",
        'ENCRYPTION_KEY="${ENCRYPTION_KEY}"',
        "export GITHUB_TOKEN=$(pass show github/token)",
        "ADMIN_TOKEN=$(pass show work/admin-token)",
        '"apiKey": "YOUR_API_KEY"',
        "Authorization: Bearer <token>",
        "password=********",
        'secret: "{{ .Values.secret }}"',
        "mysql -u root -p'<password>' app",
        "curl -u user:password https://api.example.com",
        'curl -u "$USER:$TOKEN" https://api.example.com',
        'sshpass -p "$SSHPASS" ssh deploy@host',
        "docker login -u $DOCKER_USER --password-stdin",
        "PGPASSWORD=$PGPASS psql -h db -U app",
        "git clone https://<user>:<token>@github.com/org/repo.git",
        'password = "your-password-here"',
        "JWT_SECRET=your-jwt-secret",
        '<add key="Password" value="" />',
        '<add key="Password" value="%DB_PASSWORD%" />',
        "<password>${env.MAVEN_PASSWORD}</password>",
        "账号 admin 密码 ******",
        "WiFi 密码：xxxxxxxx",
        "口令：<你的口令>",
        "ENCRYPTION_KEY=",
        'client = Client(account_sid, auth_token)',
        "const client = require('twilio')(accountSid, authToken);",
        'requests.get(url, auth=("user", "pass"))',
    ]
    out += [("placeholder", ln) for ln in placeholders]
    for _ in range(4):
        h32, h40, h64 = _r(rng, HEX, 32), _r(rng, HEX, 40), _r(rng, HEX, 64)
        out += [("hash", rng.choice((f"md5: {h32}", f"ETag: \"{h32}\"", f"文件的 MD5 是 {h32}"))),
                ("hash", rng.choice((f"sha1 {h40} matches", f"commit {h40}", f"回退到 {h40}"))),
                ("hash", rng.choice((f"sha256sum 输出 {h64}", f"digest: sha256:{h64}", f"checksum={h64}"))),
                ("hash", f'"integrity": "sha512-{base64.b64encode(rng.randbytes(64)).decode()}"')]
    out.append(("hash", "password_hash = \"$2b$12$" + _r(rng, B64.replace("+", "."), 53) + "\""))
    out.append(("hash", "密码哈希：$argon2id$v=19$m=65536,t=3,p=4$" + _r(rng, B64, 22) + "$" + _r(rng, B64, 43)))
    for _ in range(3):
        u = lambda: f"{_r(rng, HEX, 8)}-{_r(rng, HEX, 4)}-4{_r(rng, HEX, 3)}-8{_r(rng, HEX, 3)}-{_r(rng, HEX, 12)}"  # noqa: E731
        out += [("uuid", f'client_id = "{u()}"'), ("uuid", f'"trace_id": "{u()}"'), ("uuid", f"X-Request-ID: {u()}"),
                ("uuid", f"租户 ID：{u()}"), ("uuid", f"tenant_id: {u()}"), ("uuid", f"subscription {u()} 已启用")]
    paths = [
        "/Users/Shared/Adobe/settings.json",
        "open /Users/Shared/ in Finder",
        "C:\\Users\\Public\\Documents\\readme.txt",
        "c:\\users\\public\\desktop",
        "C:/Users/Public/Pictures",
        "C:\\Users\\Default\\AppData\\Local",
        "C:\\Users\\All Users\\Microsoft",
        "安装到 C:\\Program Files\\App\\ 下",
        "%USERPROFILE%\\Documents\\notes.md",
        "C:\\Users\\%USERNAME%\\AppData\\Roaming",
        "C:\\Users\\<you>\\.aws\\credentials",
        "/usr/share/keyrings/docker.gpg",
        "/var/lib/postgresql/data/pg_hba.conf",
        "\\\\fileserver\\share\\reports\\2026.xlsx",
        "数据放在 D:\\data\\users\\export.csv",
    ]
    out += [("path", ln) for ln in paths]
    prose = [
        "密码里可以包含 % + = # ! 这些符号吗？",
        "WiFi 密码在路由器背面的标签上。",
        "账号和密码请分开发给我。",
        "口令为空时会弹出输入框。",
        "WiFi 密码 至少 8 位",
        "secret access key：请在控制台里生成，不要发给别人。",
        "密码改成了什么？我忘了。",
        "数据库密码：请找运维要。",
        "用户名 和 密码 都区分大小写。",
        "The password is stored in the keychain.",
        "Your WiFi password is printed on the router.",
        "Use -p without a value so mysql prompts for the password.",
        "The admin token is rotated weekly.",
        "Set ENCRYPTION_KEY in your .env before starting the server.",
        "PGPASSWORD is read by psql and pg_dump.",
        "docker login --password-stdin is safer than -p.",
        "Never pass secrets to sshpass -p on a shared machine.",
        "The secret access key is shown only once, when you create it.",
        "mkdir -p /tmp/build && cp -p a.txt b.txt",
        "docker run -p 8080:80 nginx",
        "ssh -p 2222 deploy@host",
        "psql -p 5433 -U app",
        "PRIMARY_KEY=id",
        "SORT_KEY=created_at",
        "TOKEN_TTL=3600",
        "KEY_SIZE=2048",
        '<add key="PasswordMinLength" value="12" />',
        "password_file = /run/secrets/db_password",
        "Server=db01;Database=app;Integrated Security=True;",
        "password: !vault |",
        'password: "{{ vault_db_password }}"',
    ]
    out += [("prose", ln) for ln in prose]
    return out


_NOVEL = (
    # phrasings written after the rules were tuned, to see how far they generalise (not tuned on)
    ("prose-credential", "zh", "超级管理员的登录密码已经重置为：{v}"),
    ("prose-credential", "zh", "VPN 账号 {u}，口令 {v}，有效期一个月"),
    ("prose-credential", "zh", "我把 wifi 的密码换成了 {v}"),
    ("prose-credential", "en", "FYI the db password is now {v}"),
    ("prose-credential", "en", "creds: {u} / {v}"),
    ("dotenv", "en", "DATABASE_PASS={v}"),
    ("dotenv", "zh", "在 .env.local 里加上 OAUTH_CLIENT_SECRET={v} 就行"),
    ("dotenv", "en", "set PRIVATE_SIGNING_KEY=\"{v}\" in the CI settings"),
    ("client-args", "en", "twilio_client = TwilioRestClient('{sid}', '{v}')"),
    ("client-args", "en", "auth = HTTPDigestAuth(\"{u}\", \"{v}\")"),
    ("client-args", "zh", "Twilio.init(\"{sid}\", \"{v}\"); 之后就报 20003"),
    ("config", "en", "<connectionStrings><add name=\"db\" connectionString=\"Host=pg;Username={u};Password={v}\"/>"),
    ("config", "en", "[client]\nuser={u}\npassword={v}"),
    ("config", "zh", "application.properties 里 spring.mail.password={v}"),
    ("config", "en", "  db_password: '{v}'"),
    ("cmdline", "en", "mysqladmin -u{u} -p{v} status"),
    ("cmdline", "en", "curl --user {u}:{v} -X POST https://api.example.net/hook"),
    ("cmdline", "zh", "试了 sshpass -p{v} ssh {u}@192.168.1.20 也不行"),
    ("cmdline", "en", "wget --password={v} ftp://files.example.org/x.tgz"),
    ("url-credentials", "en", "CELERY_BROKER_URL=amqp://:{v}@rabbit//"),
    ("url-credentials", "zh", "mongodb+srv://{u}:{v}@cluster0.example.mongodb.net/test 连接超时"),
)


def novel_phrasings(seed: int = SEED + 13) -> list[Case]:
    """Held-out phrasings (see _NOVEL), values from the held-out generator."""
    rng = random.Random(seed)
    cases = []
    for draw in range(3):
        for family, lang, t in _NOVEL:
            v = _urlpw(rng, True) if "://" in t else _shellpw(rng, True) if family == "cmdline" else \
                _with_digit(rng, HEX, 32) if family == "client-args" and "sid" in t else _mixed(rng, True)
            text = t.format(v=v, u=_user(rng, True), sid="AC" + _r(rng, HEX, 32))
            cases.append(Case(f"novel-{family}-{len(cases)}", "", lang, text, (v,), family=family))
    return cases


# --------------------------------------------------------------------------- plain negatives (issue 34)

PLAIN_NEGATIVES = Path(__file__).resolve().parents[1] / "data" / "redact" / "negatives.txt"


def plain_negatives() -> list[tuple[str, str]]:
    """(group, text): secret-free texts that are not secret-shaped (code, URLs, config with placeholders,
    prose, markup, logs, templates), from tests/data/redact/negatives.txt, frozen before issue 34's tuning."""
    out: list[tuple[str, str]] = []
    group = ""
    for ln in PLAIN_NEGATIVES.read_text(encoding="utf-8").splitlines():
        if not ln or ln.startswith("# "):
            continue
        if ln.startswith("## "):
            group = ln[3:].strip()
            continue
        out.append((group, ln))
    return out
