"""memvault.distill.llm against a real HTTP server on 127.0.0.1 (tests/fake_llm.py)."""

from __future__ import annotations

import email.utils
import gzip
import json
import socket
import subprocess
import sys
import time
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fake_llm import fake_llm_server  # noqa: E402

from memvault.errors import LLMError, UsageError  # noqa: E402
from memvault.distill.llm import (  # noqa: E402
    Client,
    LLMFailure,
    LLMSettings,
    display_endpoint,
    estimate_tokens,
    extract_json,
    parse_retry_after,
)

KEY = "sk-test-7f3a9c0d1e2b"
MESSAGES = [
    {"role": "system", "content": "You distil conversations into memory cards."},
    {"role": "user", "content": "我们决定用纯文本存储记忆。 We store memory as plain text."},
]


@pytest.fixture
def fake():
    with fake_llm_server() as server:
        yield server


def make_client(fake, sleeps=None, **overrides):
    settings = LLMSettings(base_url=fake.base_url, model="test-model", api_key=KEY, **overrides)
    return Client(settings, sleep=(sleeps.append if sleeps is not None else _no_sleep))


def _no_sleep(seconds):
    raise AssertionError(f"unexpected sleep({seconds})")


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


# -- the normal path ---------------------------------------------------------------------------------------------

def test_completion_text_finish_reason_and_usage_from_server(fake):
    fake.queue('{"cards": [{"title": "纯文本"}]}')
    with make_client(fake) as client:
        result = client.complete(MESSAGES)
    assert result.text == '{"cards": [{"title": "纯文本"}]}'
    assert result.finish_reason == "stop"
    assert result.calls == 1
    sent = fake.requests[0]["body"]["messages"]
    assert sent == MESSAGES
    assert result.prompt_tokens == len(json.dumps(sent)) // 4
    assert result.completion_tokens == len(result.text) // 4


def test_explicit_usage_is_taken_verbatim(fake):
    fake.queue("{}", usage={"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290})
    with make_client(fake) as client:
        result = client.complete(MESSAGES)
    assert (result.prompt_tokens, result.completion_tokens) == (1234, 56)


def test_missing_usage_is_estimated(fake):
    text = '{"cards": [{"title": "决定使用纯文本存储", "body": "plain text can be grepped"}]}'
    fake.queue(text, usage={})
    with make_client(fake) as client:
        result = client.complete(MESSAGES)
    assert result.completion_tokens == estimate_tokens(text)
    assert result.prompt_tokens == sum(4 + estimate_tokens(m["content"]) for m in MESSAGES)
    assert result.prompt_tokens > 0


def test_finish_reason_length_is_passed_through(fake):
    fake.queue('{"cards": [{"title": "cut', finish_reason="length")
    with make_client(fake) as client:
        result = client.complete(MESSAGES)
    assert result.finish_reason == "length"
    assert result.text.endswith("cut")


def test_null_content_becomes_empty_text(fake):
    fake.queue(None)
    with make_client(fake) as client:
        assert client.complete(MESSAGES).text == ""


# -- request shapes ----------------------------------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"cards": {"type": "array"}}, "required": ["cards"]}


def test_request_shape_json_object(fake):
    fake.queue("{}")
    with make_client(fake, temperature=0.2, max_output_tokens=777) as client:
        client.complete(MESSAGES, schema=SCHEMA)
    req = fake.requests[0]
    assert req["path"] == "/v1/chat/completions"
    body = req["body"]
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 777
    assert body["stream"] is False
    assert body["response_format"] == {"type": "json_object"}


def test_request_shape_json_schema(fake):
    fake.queue("{}")
    with make_client(fake, json_mode="json_schema") as client:
        client.complete(MESSAGES, schema=SCHEMA, schema_name="memory_cards")
    assert fake.requests[0]["body"]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "memory_cards", "schema": SCHEMA, "strict": True},
    }


def test_json_schema_mode_without_schema_falls_back_to_json_object(fake):
    fake.queue("{}")
    with make_client(fake, json_mode="json_schema") as client:
        client.complete(MESSAGES)
    assert fake.requests[0]["body"]["response_format"] == {"type": "json_object"}


def test_request_shape_text_has_no_response_format(fake):
    fake.queue("{}")
    with make_client(fake, json_mode="text") as client:
        client.complete(MESSAGES, schema=SCHEMA)
    assert "response_format" not in fake.requests[0]["body"]


def test_unknown_json_mode_is_a_usage_error():
    with pytest.raises(UsageError):
        LLMSettings(base_url="http://127.0.0.1:1/v1", model="m", json_mode="yaml")


def test_base_url_trailing_slash_is_not_doubled(fake):
    fake.queue("{}")
    settings = LLMSettings(base_url=fake.base_url + "/", model="m")
    with Client(settings) as client:
        client.complete(MESSAGES)
    assert fake.requests[0]["path"] == "/v1/chat/completions"


def test_non_http_base_url_is_refused():
    with pytest.raises(LLMFailure, match="http:// or https://"):
        Client(LLMSettings(base_url="ftp://example.org/v1", model="m"))


# -- the key ----------------------------------------------------------------------------------------------------

def test_key_is_sent_as_bearer_and_never_in_repr(fake):
    fake.queue("{}")
    settings = LLMSettings(base_url=fake.base_url, model="m", api_key=KEY)
    assert KEY not in repr(settings)
    assert KEY not in str(settings)
    with Client(settings) as client:
        assert KEY not in repr(client)
        client.complete(MESSAGES)
    assert fake.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert KEY.encode() not in fake.requests[0]["raw"]


def test_no_authorization_header_without_a_key(fake):
    fake.queue("{}")
    with Client(LLMSettings(base_url=fake.base_url, model="m")) as client:
        client.complete(MESSAGES)
    assert "authorization" not in fake.requests[0]["headers"]


def test_key_with_trailing_newline_is_trimmed(fake):
    fake.queue("{}")
    with Client(LLMSettings(base_url=fake.base_url, model="m", api_key=KEY + "\n")) as client:
        client.complete(MESSAGES)
    assert fake.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_key_with_inner_newline_fails_without_echoing_it():
    bad = "sk-abc\ndef-secret"
    with pytest.raises(LLMFailure) as err:
        Client(LLMSettings(base_url="http://127.0.0.1:1/v1", model="m", api_key=bad))
    assert "def-secret" not in str(err.value) and "sk-abc" not in str(err.value)


# -- retries ----------------------------------------------------------------------------------------------------

def test_429_with_retry_after_seconds_then_success(fake):
    fake.queue(status=429, headers={"Retry-After": "7"})
    fake.queue('{"ok": true}')
    sleeps: list[float] = []
    with make_client(fake, sleeps) as client:
        result = client.complete(MESSAGES)
    assert sleeps == [7.0]
    assert result.calls == 2
    assert len(fake.requests) == 2
    assert result.text == '{"ok": true}'


def test_retry_after_http_date_is_honoured(fake):
    when = datetime.now(timezone.utc) + timedelta(seconds=30)
    fake.queue(status=503, headers={"Retry-After": email.utils.format_datetime(when, usegmt=True)})
    fake.queue("{}")
    sleeps: list[float] = []
    with make_client(fake, sleeps) as client:
        client.complete(MESSAGES)
    assert len(sleeps) == 1
    assert 25.0 <= sleeps[0] <= 30.0


def test_retry_after_is_capped(fake):
    fake.queue(status=429, headers={"Retry-After": "3600"})
    fake.queue("{}")
    sleeps: list[float] = []
    with make_client(fake, sleeps, max_retry_wait=5.0) as client:
        client.complete(MESSAGES)
    assert sleeps == [5.0]


def test_500_500_200_retries_with_growing_jittered_backoff(fake):
    fake.queue(status=500)
    fake.queue(status=500)
    fake.queue('{"cards": []}')
    sleeps: list[float] = []
    with make_client(fake, sleeps) as client:
        result = client.complete(MESSAGES)
    assert result.calls == 3
    assert len(fake.requests) == 3
    assert len(sleeps) == 2
    assert 0.5 <= sleeps[0] <= 1.0
    assert 1.0 <= sleeps[1] <= 2.0


def test_backoff_is_capped_by_max_retry_wait(fake):
    for _ in range(6):
        fake.queue(status=502)
    fake.queue("{}")
    sleeps: list[float] = []
    with make_client(fake, sleeps, max_retries=6, max_retry_wait=3.0) as client:
        client.complete(MESSAGES)
    assert len(sleeps) == 6
    assert max(sleeps) <= 3.0
    assert min(sleeps[3:]) >= 1.5


def test_503_forever_fails_after_max_retries_plus_one_calls(fake):
    echoed = "ECHOED PROMPT: 我们决定用纯文本存储记忆"
    fake.set_default(lambda body: {"status": 503, "content": echoed})
    sleeps: list[float] = []
    with make_client(fake, sleeps, max_retries=3) as client:
        with pytest.raises(LLMFailure) as err:
            client.complete(MESSAGES)
    failure = err.value
    assert len(fake.requests) == 4
    assert len(sleeps) == 3
    assert isinstance(failure, LLMError) and failure.exit_code == 5
    assert failure.kind == "llm_error"
    assert failure.status == 503 and failure.attempts == 4
    message = str(failure)
    assert "HTTP 503" in message and "after 4 attempts" in message
    assert f"127.0.0.1:{fake.port}/v1/chat/completions" in message
    assert KEY not in message
    assert "ECHOED" not in message and "纯文本" not in message


def test_401_fails_at_once_with_a_hint(fake):
    fake.queue(status=401, content="Incorrect API key provided: sk-te***")
    sleeps: list[float] = []
    with make_client(fake, sleeps) as client:
        with pytest.raises(LLMFailure) as err:
            client.complete(MESSAGES)
    assert len(fake.requests) == 1
    assert sleeps == []
    message = str(err.value)
    assert "authentication failed" in message and "API key" in message
    assert "Incorrect" not in message and KEY not in message
    assert err.value.status == 401


def test_404_hints_at_base_url_and_model(fake):
    fake.queue(status=404, content="model 'test-model' not found")
    with make_client(fake) as client:
        with pytest.raises(LLMFailure, match="llm.base_url") as err:
            client.complete(MESSAGES)
    assert len(fake.requests) == 1
    assert "not found" in str(err.value) and "test-model'" not in str(err.value)


def test_400_hints_at_json_mode(fake):
    fake.queue(status=400, content="response_format is not supported")
    with make_client(fake) as client:
        with pytest.raises(LLMFailure, match="json_mode") as err:
            client.complete(MESSAGES)
    assert len(fake.requests) == 1
    assert "fake_error" in str(err.value)  # error.type is shown, error.message is not
    assert "not supported" not in str(err.value)


def test_redirect_is_not_followed(fake):
    fake.queue(status=301, headers={"Location": "http://127.0.0.1:1/elsewhere"})
    with make_client(fake) as client:
        with pytest.raises(LLMFailure, match="redirected"):
            client.complete(MESSAGES)
    assert len(fake.requests) == 1


def test_connection_refused_is_retried_then_fails():
    port = closed_port()
    sleeps: list[float] = []
    settings = LLMSettings(base_url=f"http://user:hunter2@127.0.0.1:{port}/v1?token=abc", model="m",
                           api_key=KEY, max_retries=2)
    with Client(settings, sleep=sleeps.append) as client:
        with pytest.raises(LLMFailure) as err:
            client.complete(MESSAGES)
    message = str(err.value)
    assert len(sleeps) == 2
    assert "connection failed" in message and "after 3 attempts" in message
    assert f"http://127.0.0.1:{port}/v1" in message
    assert "hunter2" not in message and "user" not in message and "token" not in message
    assert KEY not in message


def test_a_timeout_is_not_retried_at_full_cost(fake):
    # The server answers after 30 s, 100 times the client's timeout. A local server that computes one request
    # at a time may still be computing it: the client gives up at once (the caller asks for less), never sends
    # the same request again.
    fake.queue("{}", delay=30.0)
    fake.queue("{}", delay=30.0)
    with make_client(fake, [], timeout=0.3, timeout_per_token=0.0, max_retries=3) as client:
        with pytest.raises(LLMFailure, match="did not answer within") as err:
            client.complete(MESSAGES)
    assert len(fake.requests) == 1
    assert err.value.attempts == 1 and err.value.timed_out


def test_the_timeout_grows_with_the_answer_a_call_may_write(fake):
    with make_client(fake, timeout=10, timeout_per_token=0.5, max_output_tokens=1000) as client:
        assert client.call_timeout(100) == 60.0
        assert client.call_timeout(5000) == 510.0  # capped by llm.max_output_tokens
        assert client.payload(MESSAGES, max_tokens=100)["max_tokens"] == 100
    fake.queue("{}", delay=0.6)
    fake.queue("{}", delay=0.6)
    with make_client(fake, [], timeout=0.2, timeout_per_token=0.01, max_retries=0) as client:
        assert client.complete(MESSAGES, max_tokens=300).text == "{}"  # 3.2 s for 300 tokens
        with pytest.raises(LLMFailure) as err:
            client.complete(MESSAGES, max_tokens=1)  # 0.21 s for one
    assert err.value.timed_out and fake.requests[1]["body"]["max_tokens"] == 1


# -- hostile or broken replies -----------------------------------------------------------------------------------

TEN_MB = 10 * 1024 * 1024


def _peak_during(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("omit_length", [False, True], ids=["content-length", "close-delimited"])
def test_huge_reply_fails_without_reading_it_into_memory(fake, omit_length):
    body = b'{"choices": [{"message": {"content": "' + b"A" * TEN_MB + b'"}}]}'
    fake.queue(raw_body=body, omit_length=omit_length)
    del body
    client = make_client(fake)

    def call():
        with pytest.raises(LLMFailure, match="larger than 4194304 bytes") as err:
            client.complete(MESSAGES)
        assert err.value.kind == "llm_error"

    peak = _peak_during(call)
    client.close()
    assert peak < 7 * 1024 * 1024  # the 4 MiB cap plus a chunk, never the 10 MB
    assert len(fake.requests) == 1  # a size violation is not retried


def test_gzip_bomb_is_inflated_only_up_to_the_cap(fake):
    bomb = gzip.compress(b'{"choices": [{"message": {"content": "' + b"0" * (64 * 1024 * 1024), 9)
    assert len(bomb) < 200_000
    fake.queue(raw_body=bomb, headers={"Content-Encoding": "gzip"})
    client = make_client(fake)

    def call():
        with pytest.raises(LLMFailure, match="larger than"):
            client.complete(MESSAGES)

    peak = _peak_during(call)
    client.close()
    assert peak < 7 * 1024 * 1024


def test_gzip_reply_from_a_server_ignoring_identity_still_works(fake):
    reply = {"choices": [{"message": {"content": '{"cards": []}'}, "finish_reason": "stop"}]}
    fake.queue(raw_body=gzip.compress(json.dumps(reply).encode()), headers={"Content-Encoding": "gzip"})
    with make_client(fake) as client:
        assert client.complete(MESSAGES).text == '{"cards": []}'
    assert fake.requests[0]["headers"]["accept-encoding"] == "identity"


def test_non_json_body_fails_clearly(fake):
    fake.queue(raw_body=b"<html>Welcome to nginx</html>")
    with make_client(fake) as client:
        with pytest.raises(LLMFailure, match="not JSON") as err:
            client.complete(MESSAGES)
    assert "nginx" not in str(err.value)


def test_missing_choices_fails_clearly(fake):
    fake.queue(raw_body=b'{"object": "chat.completion", "choices": []}')
    with make_client(fake) as client:
        with pytest.raises(LLMFailure, match="without choices"):
            client.complete(MESSAGES)


def test_error_object_in_a_200_reply_is_reported_by_type(fake):
    fake.queue(raw_body=b'{"error": {"message": "echo: secret prompt", "type": "server_error", "code": "x1"}}')
    with make_client(fake) as client:
        with pytest.raises(LLMFailure, match=r"server_error/x1") as err:
            client.complete(MESSAGES)
    assert "secret prompt" not in str(err.value)


def test_hostile_error_type_is_sanitised(fake):
    fake.queue(status=400, raw_body=json.dumps(
        {"error": {"type": "bad\n\x1b[31m" + "x" * 500, "code": "sk-" + "y" * 10}}).encode())
    with make_client(fake) as client:
        with pytest.raises(LLMFailure) as err:
            client.complete(MESSAGES)
    message = str(err.value)
    assert "\n" not in message and "\x1b" not in message
    assert "x" * 65 not in message


def test_content_as_list_of_parts(fake):
    reply = {"choices": [{"message": {"content": [{"type": "text", "text": '{"a":'}, {"type": "text", "text": "1}"}]},
                          "finish_reason": "stop"}]}
    fake.queue(raw_body=json.dumps(reply).encode())
    with make_client(fake) as client:
        assert client.complete(MESSAGES).text == '{"a":1}'


# -- small pure helpers ------------------------------------------------------------------------------------------

def test_parse_retry_after_forms():
    now = datetime(2026, 11, 2, 7, 53, 1, tzinfo=timezone.utc)
    assert parse_retry_after("12", now) == 12.0
    assert parse_retry_after(" 1.5 ", now) == 1.5
    assert parse_retry_after("-3", now) == 0.0
    assert parse_retry_after("Mon, 02 Nov 2026 07:53:31 GMT", now) == 30.0
    assert parse_retry_after("Mon, 02 Nov 2026 07:52:00 GMT", now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None
    assert parse_retry_after("nan", now) is None


def test_display_endpoint_drops_userinfo_and_query():
    assert display_endpoint("https://bob:pw@api.example.com:8443/v1/chat/completions?key=abc#x") == \
        "https://api.example.com:8443/v1/chat/completions"
    assert display_endpoint("http://[::1]:11434/v1") == "http://[::1]:11434/v1"


def test_estimate_tokens_counts_cjk_per_character():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 25) == 25
    assert estimate_tokens("我们决定用纯文本存储") == 10
    assert estimate_tokens("用 plain text") == 1 + 3
    assert estimate_tokens("こんにちは、안녕하세요") == 11


@pytest.mark.parametrize("text, expected", [
    ('{"cards": []}', {"cards": []}),
    ('  [1, 2]\n', [1, 2]),
    ('```json\n{"cards": [{"title": "a"}]}\n```', {"cards": [{"title": "a"}]}),
    ('Here you go:\n```\n{"a": 1}\n```\nAnything else?', {"a": 1}),
    ('<think>maybe {"a": 0} is wrong</think>\n{"a": 1}', {"a": 1}),
    ('<THINK>x</THINK><think>y</think>{"a": 2}', {"a": 2}),
    ('the user wants {cards}... </think>\n\n{"a": 3}', {"a": 3}),
    ('Sure! The result is {"cards": [{"title": "用纯文本"}]} — hope it helps.', {"cards": [{"title": "用纯文本"}]}),
    ('{"body": "a } and { and \\" inside", "n": {"m": [1, {"k": "]"}]}}',
     {"body": 'a } and { and " inside', "n": {"m": [1, {"k": "]"}]}}),
    ('noise {not json} then {"ok": true} and {"second": 1}', {"ok": True}),
    ('{"body": "quotes the </think> tag"}', {"body": "quotes the </think> tag"}),
    ('```json\n{"broken": \n```\n{"fallback": 1}', {"fallback": 1}),
    ('Step [1 of 2: {"a": 1}', {"a": 1}),
    ('[the answer] is {x: {"inner": 1}}', {"inner": 1}),
])
def test_extract_json_finds_the_answer(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", [
    "",
    "I could not find anything worth remembering.",
    '{"cards": [{"title": "cut off',
    '{"cards": [{"title": "whole"}, {"title": "cut off',
    '```json\n{"cards": [{"title": "whole"}, {"ti',
    "<think>still reasoning about {\"a\": 1}",
    "[[[[" * 5000,
])
def test_extract_json_raises_value_error_without_quoting(text):
    with pytest.raises(ValueError) as err:
        extract_json(text)
    assert "reasoning about" not in str(err.value) and "cut off" not in str(err.value)


def test_extract_json_on_a_large_hostile_reply_is_fast():
    hostile = ("{" * 1000 + '"x' + "[" * 1000) * 500  # ~1 MB of starts that never parse
    started = time.process_time()  # this process's CPU time: other processes on a loaded machine do not count
    with pytest.raises(ValueError):
        extract_json(hostile)
    assert time.process_time() - started < 5  # linear work takes ~0.1 s; a quadratic scan would take minutes


# -- import cost -------------------------------------------------------------------------------------------------

def test_importing_memvault_llm_does_not_import_httpx():
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", "import memvault.distill.llm, sys; print('httpx' in sys.modules)"],
        cwd=root, capture_output=True, text=True, check=True,
    )
    assert out.stdout.strip() == "False"
