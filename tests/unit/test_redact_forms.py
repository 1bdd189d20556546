"""Issue 34: the forms secrets take in detectors' test files and logs (a dash as separator, names that name no
secret, XML/HTML elements and attributes, log lines) and the code that must stay (URL path segments, XML names,
template placeholders). Values are drawn at random, so the rules cannot list them."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import redact_keygen as keygen  # noqa: E402

from memvault.redact.engine import redact  # noqa: E402

RND = random.Random(34)


def _random(n: int = 32) -> str:
    """Upper, lower and digits, as a generated secret has."""
    while True:
        v = "".join(RND.choice(keygen.AN) for _ in range(n))
        if any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v):
            return v


def _uuid() -> str:
    h = "".join(RND.choice(keygen.HEX) for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


FORMS = (
    "NAME token - '{v}'", "apikey - {v}", "api_key -> {v}", "secret => '{v}'", "password := {v}",
    "token: {v}", "DUO_SKEY={v}", "skey = {v}", "secret_id = {u}", 'secret_id: "{u}"',
    "ID={v}", "client_id: \"{v}\"", "user: {v}", "<id>{v}</id>", "<user_id>\n  {v}\n</user_id>",
    '<meta name="api-key" content="{v}">', '<Setting Name="StorageKey" Value="{v}"/>',
    "<key>apiToken</key><string>{v}</string>", '<credentials token="{v}" />',
    '<input type="hidden" name="auth_token" value="{v}">',
    "[DEBUG] 2024-01-01 12:00:00 request sent token={v} status=200",
    "2024-01-01 12:00:00 DEBUG [auth] Using API key {v} for request",
    "INFO authenticated with token: {v} (expires in 3600s)",
    'level=debug msg="calling api" api_key={v}',
)


@pytest.mark.parametrize("form", FORMS)
def test_forms_lose_the_value(form):
    for _ in range(5):
        v, u = _random(RND.choice((24, 32, 40))), _uuid()
        text = form.format(v=v, u=u)
        out = redact(text).text
        secret = u if "{u}" in form else v
        assert secret not in out and keygen.in_clear(secret, out) is False, (text, out)
        assert "[REDACTED:" in out


KEPT = (
    "https://example.com/photos/2018-250-xoxo-indieweb-1.jpg",
    "https://blog.example.net/2018/06/250-days-of-xoxo-festival-notes/",
    "https://img.example.com/uploads/2023/11/sk-tower-night-view-1920x1080.png",
    '<entry key="jetbrains.mps.v8_elimination" value="executed" />',
    '<entry key="org.gradle.caching.remote_cache" value="enabled" />',
    '<xsd:element name="apiKey" type="clm50261437:AccountKeyType"/>',
    "SUMO_ACCESS_KEY={SumoAccessKey}", "API_TOKEN=%ApiToken%", "SECRET=${SECRET}", "password=<Password>",
    "auth_token = #{authToken}", '<add key="Password" value="{Password}" />',
    "xoxb-abcdef-abcdef", "SLACK_TOKEN=xoxb-your-bot-token", "api_key: YOUR_API_KEY", "token = your-token-here",
    '127.0.0.1 - - [01/Mar/2024:12:00:09 +0000] "GET /api/v1/tokens HTTP/1.1" 200 512',
    "<id>central</id>", "<id>release-profile-2024</id>", "user: postgres", "id: 12", 'client_id = "web-frontend"',
    'client_id = "517b8d8e-f21e-4be6-89f3-f60a3fcfaef4"', '"id": "V1StGXR8_Z5jdHi6B-myT"',
    '"id": "cus_NffrFeUfNV2HibA8aQ0c2dGa"', "user_id: 5f8d0d55b54764421b7156c3",
)


@pytest.mark.parametrize("text", KEPT)
def test_names_paths_and_placeholders_stay(text):
    assert redact(text).text == text


def test_random_letters_of_a_key_are_no_placeholder():
    """"YoUr", "HeRe", "faKE", "xXxX" inside a random body, or no digit at all: still a key."""
    for body in ("YoUrKq7PzRtYuIoPaSdFgHjKlZxCvBnMqWe1", "HeReKqWzRtYuIoPaSdFgHjKlZxCvBnMqWeRt",
                 "faKExKqWzRtYuIoPaSdFgHjKlZxCvBnMqWeR", "xXxXKqWzRtYuIoPaSdFgHjKlZxCvBnMqWeRt"):
        for text in (f"ghp_{body}", f"my key: ghp_{body}.", f"npm_{body}"):
            out = redact(text).text
            assert body not in out, out
    legacy = "sk-" + "".join(RND.choice(keygen.ALPHA) for _ in range(48))  # documented shape, no digit
    assert redact(f"key {legacy}").text == "key [REDACTED:sk-api-key]"
