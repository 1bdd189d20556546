"""A client for any OpenAI-compatible POST {base_url}/embeddings (Ollama, llama.cpp server, vLLM, OpenAI,
memvault[embed]'s local server).

httpx is imported only when a request is made. Texts go in batches of `batch`; a 5xx answer is retried once;
an answer is read up to a size bound (256 KiB a text) and within its time in all, however slowly it comes:
`timeout` for a question, `batch_timeout` for a batch of cards or turns (both overridden by `timeout=`);
every failure is an EmbedError naming the endpoint and what went wrong, never the key, the texts sent, or the
body the server answered (it may echo them). Vectors are checked: one per text, all of one length, and that
length must be `dimensions` when the setting is not 0.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from memvault.errors import EmbedError
from memvault.redact.urls import display_url
from memvault.search.dense.settings import EmbedSettings


# An answer's size bound: 256 KiB per text holds a 4096-dimension vector written as JSON three times over.
_MAX_BYTES_BASE = 1 << 20
_MAX_BYTES_PER_TEXT = 256 << 10


class EmbedClient:
    def __init__(self, settings: EmbedSettings, env: Mapping[str, str], timeout: float | None = None):
        self.settings = settings
        self.endpoint = settings.endpoint
        self.shown = display_url(settings.endpoint, "embeddings.base_url")  # no user:password@ in messages
        self.timeout = timeout or settings.timeout  # a question's vector
        self.batch_timeout = timeout or settings.batch_timeout  # a batch of passages
        # identity: a compressed answer could inflate far past the size bound in one chunk
        self._headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if settings.api_key_env:
            key = env.get(settings.api_key_env)
            if not key:
                # Named only when it looks like a conventional variable name: a key pasted into api_key_env by
                # mistake must not be echoed.
                name = settings.api_key_env if re.fullmatch(r"[A-Z_][A-Z0-9_]{0,63}", settings.api_key_env) else ""
                raise EmbedError(f"the environment variable named by embeddings.api_key_env{' (' + name + ')' if name else ''}"
                                 " is not set")
            if not key.isascii() or any(c in key for c in "\r\n"):
                raise EmbedError(f"the API key in {settings.api_key_env} cannot be sent in an HTTP header")
            self._headers["Authorization"] = f"Bearer {key}"
        self._http: Any = None
        self._rules: Any = None

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> EmbedClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def embed(self, texts: Sequence[str], kind: str = "passage",
              on_batch: Callable[[int, list[list[float]]], None] | None = None) -> list[list[float]]:
        """Vectors for `texts` (kind "query" or "passage": picks the prefix and the input_type), in order.
        With `on_batch`, each batch's vectors are handed over as they come (start index, vectors)."""
        s = self.settings
        prefix = s.query_prefix if kind == "query" else s.passage_prefix
        out: list[list[float]] = []
        for start in range(0, len(texts), s.batch):
            chunk = [prefix + self.clean(t) for t in texts[start:start + s.batch]]
            vecs = self._post(chunk, kind)
            if on_batch is not None:
                on_batch(start, vecs)
            out.extend(vecs)
        return out

    def clean(self, text: str) -> str:
        """`text` redacted with the built-in rules and redact.deny: a card edited by hand, or a rule added since
        it was written, never reaches the endpoint (which may be remote)."""
        from memvault.redact import engine as redact  # here: an embeddings-off search never compiles rules

        if self._rules is None:
            self._rules = redact.compile_rules(list(self.settings.deny))
        return redact.redact(text, self._rules).text

    def _client(self) -> Any:
        if self._http is None:
            import httpx  # here: a search with embeddings off never loads it

            # Plain http:// (a local server) never uses TLS: skip loading the CA store, ~17 ms per search.
            verify = self.endpoint.startswith("https://")
            # A local server is never reached through a proxy (nor pays for reading the proxy settings); a
            # remote one (OpenAI…) goes through HTTPS_PROXY / HTTP_PROXY like the LLM client does.
            host = urlsplit(self.endpoint).hostname or ""
            local = host in ("localhost", "::1") or host.startswith("127.")
            self._http = httpx.Client(headers=self._headers, trust_env=not local, verify=verify)
        return self._http

    def _post(self, inputs: list[str], kind: str) -> list[list[float]]:
        import httpx

        body: dict[str, Any] = {"model": self.settings.model, "input": inputs}
        if self.settings.input_type:
            body["input_type"] = kind
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        where = f"embeddings endpoint {self.shown}"
        limit = self.timeout if kind == "query" else self.batch_timeout
        timeout = httpx.Timeout(limit, connect=min(limit, 5.0))
        for attempt in (1, 2):
            started = time.monotonic()
            try:
                with self._client().stream("POST", self.endpoint, content=data, timeout=timeout) as resp:
                    if resp.status_code >= 500 and attempt == 1:
                        continue
                    if resp.status_code != 200:
                        auth = resp.status_code in (401, 403)
                        hint = " (check the key named by embeddings.api_key_env)" if auth else ""
                        hint = hint or (" (check embeddings.model and base_url)"
                                        if resp.status_code in (400, 404, 422) else "")
                        raise EmbedError(f"{where}: HTTP {resp.status_code}{hint}")
                    cap = _MAX_BYTES_BASE + _MAX_BYTES_PER_TEXT * len(inputs)
                    raw = self._read(resp, cap, started, where, limit)
            except httpx.TimeoutException:
                raise EmbedError(f"{where}: timed out after {limit:g} s") from None
            except httpx.ConnectError:
                raise EmbedError(f"{where}: cannot connect (is the server running?)") from None
            except httpx.HTTPError as exc:
                raise EmbedError(f"{where}: request failed ({type(exc).__name__})") from None
            return self._parse(raw, len(inputs), where)
        raise AssertionError("unreachable")

    def _read(self, resp: Any, cap: int, started: float, where: str, limit: float) -> bytes:
        """The body, at most `cap` bytes and within the timeout in all: the read timeout bounds each gap
        between chunks, not a server that trickles bytes or answers without end."""
        length = resp.headers.get("content-length", "")
        if length.isdigit() and int(length) > cap:
            raise EmbedError(f"{where}: the answer is larger than {cap} bytes")
        out = bytearray()
        for chunk in resp.iter_bytes():
            out += chunk
            if len(out) > cap:
                raise EmbedError(f"{where}: the answer is larger than {cap} bytes")
            if time.monotonic() - started > limit:
                raise EmbedError(f"{where}: timed out after {limit:g} s (answer still coming)")
        return bytes(out)

    def _parse(self, raw: bytes, n: int, where: str) -> list[list[float]]:
        try:
            doc = json.loads(raw)
            items = doc["data"]
            items = sorted(items, key=lambda d: d.get("index", 0)) if all("index" in d for d in items) else items
            vecs = [[float(x) for x in d["embedding"]] for d in items]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise EmbedError(f"{where}: the answer is not an OpenAI embeddings list ({len(raw)} bytes)") from None
        if len(vecs) != n:
            raise EmbedError(f"{where}: sent {n} texts, got {len(vecs)} vectors back")
        dims = {len(v) for v in vecs}
        if len(dims) > 1 or 0 in dims:
            raise EmbedError(f"{where}: vectors of different or zero lengths in one answer")
        dim = dims.pop() if dims else 0
        want = self.settings.dimensions
        if want and dim != want:
            raise EmbedError(f"{where}: returned {dim}-dimensional vectors, but embeddings.dimensions is {want}")
        if any(not math.isfinite(x) for v in vecs for x in v):
            raise EmbedError(f"{where}: returned a vector with NaN or infinite values")
        return vecs
