"""A real HTTP server on 127.0.0.1 that speaks OpenAI POST /v1/embeddings with deterministic vectors, for tests.

Standard library only; runs as a thread of the test process (a memvault subprocess can call it too):

    with FakeEmbed(dim=64, model="fake-e5", synonyms={"vehicle": "automobile"}) as fake:
        ... embeddings.base_url = fake.base_url ...
        fake.requests  # [{"path", "headers", "body"}]; fake.texts: every input text received

Vectors are hashed bags of words: ASCII words (lower case) and CJK characters, each to a signed slot of the
vector (blake2b), so texts that share words are near. `synonyms` rewrites words first (ASCII words, or any CJK
string), so a pair of words with no letter in common lands on the same slot: the "meaning" a lexical search
cannot see. A text with nothing to hash gets a fixed slot of its own.

Failure modes (attributes, changeable while it runs):
    status      HTTP status of every answer (e.g. 503); `fail_first` n: only the first n answers fail
    dim         vector length (change it to answer with a wrong dimension)
    delay       seconds to sleep before answering (timeouts, kill -9 mid-run)
    per_text    seconds more per input text, as a model on the CPU takes (memvault embed-server: ~0.5 on a loaded
                2-core machine, measured by bench/embed_server.py)
    block_from  n: the n-th request and every later one wait until `release` is set (a client stopped at a
                known request, however fast or slow the machine)
    models      accepted model names (others: 404); None accepts any
    key         when set, an "Authorization: Bearer <key>" header is required (else 401)
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")


def vector(text: str, dim: int, synonyms: dict[str, str] | None = None) -> list[float]:
    text = text.lower()
    for a, b in (synonyms or {}).items():
        text = re.sub(rf"\b{re.escape(a)}\b", b, text) if a.isascii() else text.replace(a, b)
    vec = [0.0] * dim
    toks = _WORD.findall(text) or ["\0empty"]
    for tok in toks:
        h = hashlib.blake2b(tok.encode("utf-8"), digest_size=8).digest()
        vec[int.from_bytes(h[:4], "little") % dim] += 1.0 if h[4] & 1 else -1.0
    return vec


class FakeEmbed:
    def __init__(self, dim: int = 64, model: str | None = None, synonyms: dict[str, str] | None = None,
                 key: str | None = None):
        self.dim = dim
        self.models = {model} if model else None
        self.synonyms = dict(synonyms or {})
        self.key = key
        self.status = 200
        self.fail_first = 0
        self.delay = 0.0
        self.per_text = 0.0
        self.block_from: int | None = None
        self.release = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.texts: list[str] = []
        self.lock = threading.Lock()
        self.base_url = ""
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> FakeEmbed:
        owner = self

        class Handler(_Handler):
            fake = owner

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeEmbed:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, headers: dict[str, str], body: Any) -> tuple[int, dict]:
        with self.lock:
            self.requests.append({"headers": headers, "body": body})
            n = len(self.requests)
        if self.block_from is not None and n >= self.block_from:
            self.release.wait(600)  # a hang guard only
        if self.delay:
            time.sleep(self.delay)
        if self.per_text and isinstance(body, dict):
            time.sleep(self.per_text * len(body.get("input") or []))
        if self.status != 200 and (not self.fail_first or n <= self.fail_first):
            return self.status, {"error": {"message": "fake failure", "type": "server_error"}}
        if self.key is not None and headers.get("authorization") != f"Bearer {self.key}":
            return 401, {"error": {"message": "bad key", "type": "auth"}}
        if not isinstance(body, dict) or "input" not in body:
            return 400, {"error": {"message": "no input", "type": "invalid_request"}}
        if self.models is not None and body.get("model") not in self.models:
            return 404, {"error": {"message": "model not found", "type": "not_found"}}
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        with self.lock:
            self.texts.extend(inputs)
        data = [{"object": "embedding", "index": i, "embedding": vector(t, self.dim, self.synonyms)}
                for i, t in enumerate(inputs)]
        data.reverse()  # clients must order by "index"
        return 200, {"object": "list", "model": body.get("model"), "data": data,
                     "usage": {"prompt_tokens": 0, "total_tokens": 0}}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeEmbed
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not self.path.rstrip("/").endswith("/embeddings"):
            status, reply = 404, {"error": {"message": "not found"}}
        else:
            status, reply = self.fake.answer({k.lower(): v for k, v in self.headers.items()}, body)
        data = json.dumps(reply).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
