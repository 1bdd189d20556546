"""The fake OpenAI server itself: other tests trust it, so it gets its own checks (plain urllib, no memvault)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from fake_llm import EMPTY_CARDS, fake_llm_server  # noqa: E402


def post(base_url: str, body: dict, path: str = "/chat/completions") -> tuple[int, dict, dict]:
    req = urllib.request.Request(base_url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer k1"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read())


BODY = {"model": "m", "messages": [{"role": "user", "content": "你好 hello"}]}


def test_queued_replies_come_in_order_with_computed_usage():
    with fake_llm_server() as fake:
        fake.queue("first")
        fake.queue("second", finish_reason="length")
        _, _, one = post(fake.base_url, BODY)
        _, _, two = post(fake.base_url, BODY)
    assert one["choices"][0]["message"] == {"role": "assistant", "content": "first"}
    assert two["choices"][0]["finish_reason"] == "length"
    assert one["usage"]["prompt_tokens"] == len(json.dumps(BODY["messages"])) // 4
    assert two["usage"]["completion_tokens"] == len("second") // 4
    assert one["model"] == "m"
    assert [r["body"] for r in fake.requests] == [BODY, BODY]
    assert fake.requests[0]["headers"]["authorization"] == "Bearer k1"
    assert fake.requests[0]["path"] == "/v1/chat/completions"


def test_empty_queue_without_default_is_a_500_saying_so():
    with fake_llm_server() as fake:
        status, _, body = post(fake.base_url, BODY)
    assert status == 500
    assert body["error"]["message"] == "no reply queued"


def test_default_function_gets_the_request_and_may_return_a_spec():
    with fake_llm_server() as fake:
        fake.set_default(lambda req: req["messages"][0]["content"].upper())
        _, _, echoed = post(fake.base_url, BODY)
        fake.set_default(lambda req: {"status": 429, "headers": {"Retry-After": "3"}})
        status, headers, _ = post(fake.base_url, BODY)
    assert echoed["choices"][0]["message"]["content"] == "你好 HELLO"
    assert status == 429 and headers["Retry-After"] == "3"


def test_usage_empty_dict_leaves_usage_out_and_raw_body_is_sent_verbatim():
    with fake_llm_server() as fake:
        fake.queue("x", usage={})
        fake.queue(raw_body=b'{"weird": true}', status=200)
        _, _, no_usage = post(fake.base_url, BODY)
        _, _, raw = post(fake.base_url, BODY)
    assert "usage" not in no_usage
    assert raw == {"weird": True}


def test_unknown_path_is_404_and_still_logged():
    with fake_llm_server() as fake:
        status, _, _ = post(fake.base_url, BODY, path="/completions")
    assert status == 404
    assert fake.requests[0]["path"] == "/v1/completions"


def test_runs_as_a_process_with_script_and_log(tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([
        {"content": '{"cards": [{"title": "one"}]}'},
        {"status": 503, "headers": {"Retry-After": "1"}},
    ]))
    log = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "fake_llm.py"), "--port", "0", "--script", str(script), "--log", str(log)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:")
        base_url = line.split()[1]
        _, _, first = post(base_url, BODY)
        second, _, _ = post(base_url, BODY)
        _, _, third = post(base_url, BODY)
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    assert first["choices"][0]["message"]["content"] == '{"cards": [{"title": "one"}]}'
    assert second == 503
    assert third["choices"][0]["message"]["content"] == EMPTY_CARDS
    entries = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert len(entries) == 3
    assert entries[0]["body"] == BODY and entries[0]["path"] == "/v1/chat/completions"
    assert "raw" not in entries[0] and entries[0]["raw_len"] > 0


def test_process_default_error_mode():
    proc = subprocess.Popen([sys.executable, str(TESTS / "fake_llm.py"), "--default", "error"],
                            stdout=subprocess.PIPE, text=True)
    try:
        base_url = proc.stdout.readline().split()[1]
        status, _, _ = post(base_url, BODY)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert status == 500


def test_process_default_fn(tmp_path):
    module = tmp_path / "replies.py"
    module.write_text("def reply(body):\n    return {'content': str(len(body['messages']))}\n")
    proc = subprocess.Popen([sys.executable, str(TESTS / "fake_llm.py"), "--default-fn", f"{module}:reply"],
                            stdout=subprocess.PIPE, text=True)
    try:
        base_url = proc.stdout.readline().split()[1]
        _, _, body = post(base_url, BODY)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert body["choices"][0]["message"]["content"] == "1"


def test_process_ends_on_sigterm_while_a_client_holds_connections_open():
    """A killed `memvault distill` can leave a kept-alive connection (or one that never sent its request) open
    in a child; the server process must still end on SIGTERM, with exit code 0."""
    import socket

    proc = subprocess.Popen([sys.executable, str(TESTS / "fake_llm.py")], stdout=subprocess.PIPE, text=True)
    held = []
    try:
        base_url = proc.stdout.readline().split()[1]
        host, port = base_url.split("//")[1].split("/")[0].split(":")
        idle = socket.create_connection((host, int(port)))  # connected, never sends a request
        kept = socket.create_connection((host, int(port)))  # one request, then kept alive
        held += [idle, kept]
        raw = json.dumps(BODY).encode()
        kept.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(raw)).encode() + b"\r\n\r\n" + raw)
        assert kept.recv(65536).startswith(b"HTTP/1.1 200")
        half = socket.create_connection((host, int(port)))  # half a request: headers promise a body
        held.append(half)
        half.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    finally:
        for s in held:
            s.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
