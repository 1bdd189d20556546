"""A real HTTP server on 127.0.0.1 that speaks OpenAI /v1/chat/completions, for tests and benchmarks.

Standard library only. In a test:

    with fake_llm_server() as fake:
        fake.queue('{"cards": []}')
        fake.queue(status=429, headers={"Retry-After": "2"})
        ... LLMSettings(base_url=fake.base_url, ...) ...
        fake.requests[0]["body"]["messages"]

As a process (e2e tests, bench/):

    python tests/fake_llm.py --port 0 --script replies.json --log requests.jsonl [--default empty|error]
                             [--default-fn path/to/file.py:function]

prints "READY http://127.0.0.1:<port>/v1" on stdout, serves the script's replies in order (a JSON list of
queue() keyword objects), then the default, and appends one JSON line per request to the log. SIGTERM or
SIGINT stops it.

Reply spec (queue() keywords, or the dict a default function returns):
    content        assistant message text (None -> JSON null content)
    finish_reason  "stop", "length", …
    status         HTTP status; a non-200 without raw_body gets an OpenAI-style error body whose
                   error.message is `content` (so tests can check a client never echoes it)
    headers        extra response headers, e.g. {"Retry-After": "3"}
    raw_body       bytes sent as the body instead of a generated one
    delay          seconds to sleep before answering (timeouts)
    usage          usage object; default prompt_tokens = len(json.dumps(messages)) // 4,
                   completion_tokens = len(content) // 4; {} leaves usage out of the reply
    omit_length    True: no Content-Length, the body ends when the connection closes
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib.util
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

EMPTY_CARDS = '{"cards": []}'
_CHUNK = 64 * 1024
_SPEC_KEYS = ("content", "finish_reason", "status", "headers", "raw_body", "delay", "usage", "omit_length")


def start_process(log_path, default_fn: str):
    """This file as a server process (e2e tests): (process, base URL, request log path). `default_fn` is
    "path/to/file.py:function", the reply for every request. Stop it with SIGTERM."""
    import subprocess

    proc = subprocess.Popen([sys.executable, __file__, "--port", "0", "--log", str(log_path),
                             "--default-fn", default_fn], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("READY "), line
    return proc, line.split()[1], log_path


def stop_process(proc, sig: int = signal.SIGTERM) -> None:
    """End a server process (this file's, the embedding server, `memvault mcp`): `sig`, then SIGKILL if it has
    not ended within 30 s (a loaded CI machine must not turn a server's tear-down into a test failure; the fake
    model's clean exit on SIGTERM is tested in tests/unit/test_fake_llm.py)."""
    import subprocess

    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


class FakeLLM:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, log_path: str | None = None):
        self.host = host
        self.port = port
        self.base_url = ""
        self.requests: list[dict] = []
        self._replies: collections.deque[dict] = collections.deque()
        self._default: Callable[[dict], str | dict] | None = None
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._log = open(log_path, "a", encoding="utf-8") if log_path else None
        self._counter = 0

    # -- control -------------------------------------------------------------------------------------------
    def queue(
        self,
        content: str | None = None,
        *,
        finish_reason: str | None = "stop",
        status: int = 200,
        headers: dict | None = None,
        raw_body: bytes | None = None,
        delay: float = 0.0,
        usage: dict | None = None,
        omit_length: bool = False,
    ) -> None:
        with self._lock:
            self._replies.append(dict(
                content=content, finish_reason=finish_reason, status=status, headers=headers or {},
                raw_body=raw_body, delay=delay, usage=usage, omit_length=omit_length,
            ))

    def set_default(self, fn: Callable[[dict], str | dict] | None) -> None:
        """fn(request_body) -> content string, or a dict of queue() keywords; used when the queue is empty."""
        self._default = fn

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def start(self) -> FakeLLM:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = _Server((self.host, self.port), Handler)
        self.port = self._server.server_address[1]
        self.base_url = f"http://{self.host}:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- used by the handler -------------------------------------------------------------------------------
    def _record(self, entry: dict) -> None:
        with self._lock:
            self.requests.append(entry)
            if self._log is not None:
                line = {k: v for k, v in entry.items() if k != "raw"}
                line["raw_len"] = len(entry["raw"])
                if entry["body"] is None:
                    line["raw_text"] = entry["raw"].decode("utf-8", "replace")
                self._log.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
                self._log.flush()

    def _next_reply(self, body: Any) -> dict:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        if self._default is None:
            return {"status": 500, "content": "no reply queued", "error_type": "fake_llm_empty"}
        try:
            made = self._default(body if isinstance(body, dict) else {})
        except Exception as exc:  # a broken default is a test bug: make it loud
            return {"status": 500, "content": f"default reply function failed: {exc!r}",
                    "error_type": "fake_llm_default_failed"}
        if isinstance(made, str):
            return {"content": made}
        return dict(made)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up on a kept-alive connection (timeouts, size caps) is routine here.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    owner: FakeLLM
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {}, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]})
                       .encode())
            return
        self._send(404, {}, b'{"error": {"message": "not found", "type": "not_found"}}')

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        self.owner._record({
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body,
            "raw": raw,
            "at": time.time(),
        })
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {}, b'{"error": {"message": "unknown path", "type": "not_found"}}')
            return
        spec = self.owner._next_reply(body)
        unknown = set(spec) - set(_SPEC_KEYS) - {"error_type"}
        if unknown:
            spec = {"status": 500, "content": f"unknown reply keys {sorted(unknown)}", "error_type": "fake_llm"}
        if spec.get("delay"):
            time.sleep(float(spec["delay"]))
        status = int(spec.get("status") or 200)
        payload = spec.get("raw_body")
        if payload is None:
            payload = self._make_body(spec, status, body)
        elif isinstance(payload, str):
            payload = payload.encode("utf-8")
        self._send(status, dict(spec.get("headers") or {}), payload, omit_length=bool(spec.get("omit_length")))

    def _make_body(self, spec: dict, status: int, request: Any) -> bytes:
        content = spec.get("content")
        if status != 200:
            return json.dumps({"error": {
                "message": content if content is not None else f"fake error {status}",
                "type": spec.get("error_type", "fake_error"),
                "code": status,
            }}, ensure_ascii=False).encode("utf-8")
        messages = request.get("messages", []) if isinstance(request, dict) else []
        usage = spec.get("usage")
        if usage is None:
            prompt = len(json.dumps(messages)) // 4
            completion = len(content or "") // 4
            usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        with self.owner._lock:
            self.owner._counter += 1
            n = self.owner._counter
        reply: dict[str, Any] = {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "fake") if isinstance(request, dict) else "fake",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": spec.get("finish_reason", "stop"),
            }],
        }
        if usage:
            reply["usage"] = usage
        return json.dumps(reply, ensure_ascii=False).encode("utf-8")

    def _send(self, status: int, headers: dict, payload: bytes, *, omit_length: bool = False) -> None:
        try:
            self.send_response(status)
            names = {k.lower() for k in headers}
            if "content-type" not in names:
                self.send_header("Content-Type", "application/json")
            if omit_length:
                self.send_header("Connection", "close")
                self.close_connection = True
            elif "content-length" not in names:
                self.send_header("Content-Length", str(len(payload)))
            for key, value in headers.items():
                self.send_header(key, str(value))
            self.end_headers()
            view = memoryview(payload)
            for start in range(0, len(view), _CHUNK):
                self.wfile.write(view[start:start + _CHUNK])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (timeout, size cap): exactly what some tests provoke.
            self.close_connection = True


@contextlib.contextmanager
def fake_llm_server(**kwargs: Any) -> Iterator[FakeLLM]:
    """A started FakeLLM, stopped on exit (the lead exposes it as the `fake_llm` fixture)."""
    fake = FakeLLM(**kwargs)
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


def _load_function(ref: str) -> Callable[[dict], str | dict]:
    path, _, name = ref.rpartition(":")
    if not path or not name:
        raise SystemExit(f"--default-fn wants FILE.py:FUNCTION, got {ref!r}")
    spec = importlib.util.spec_from_file_location("fake_llm_default", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def _script_reply(item: dict) -> dict:
    item = dict(item)
    if isinstance(item.get("raw_body"), str):
        item["raw_body"] = item["raw_body"].encode("utf-8")
    unknown = set(item) - set(_SPEC_KEYS)
    if unknown:
        raise SystemExit(f"unknown reply keys in script: {sorted(unknown)}")
    return item


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible chat completions server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file: a list of queue() keyword objects, served in order")
    parser.add_argument("--log", help="append one JSON line per request to this file")
    parser.add_argument("--default", choices=("empty", "error"), default="empty",
                        help='reply when the script is used up: empty = {"cards": []}, error = HTTP 500')
    parser.add_argument("--default-fn", help="FILE.py:FUNCTION producing replies when the script is used up")
    args = parser.parse_args(argv)

    fake = FakeLLM(args.host, args.port, log_path=args.log)
    if args.script:
        with open(args.script, encoding="utf-8") as fh:
            for item in json.load(fh):
                fake.queue(**_script_reply(item))
    if args.default_fn:
        fake.set_default(_load_function(args.default_fn))
    elif args.default == "empty":
        fake.set_default(lambda _body: EMPTY_CARDS)

    # The handler takes no lock: threading.Event.set() there deadlocks when the signal lands while this thread
    # holds the same Event's lock inside Event.wait() (it hung a CI run: SIGTERM, then no exit).
    stopped: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: stopped.append(signum))
    fake.start()
    print(f"READY {fake.base_url}", flush=True)
    while not stopped:
        time.sleep(0.1)
    # Stop serving in a helper thread and leave without the interpreter's tear-down: a handler thread still
    # inside a kept-alive connection of a killed client must not hold the process open.
    stopper = threading.Thread(target=fake.stop, daemon=True)
    stopper.start()
    stopper.join(timeout=5)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
