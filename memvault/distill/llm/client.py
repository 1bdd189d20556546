"""The HTTP client of one /chat/completions endpoint: request body, retries with backoff, capped reads, and
parsing the reply into a Completion.

httpx is imported only inside functions, so `memvault --help` never pays for it. Nothing here prints or
reads the environment: the caller hands over the key. Error messages name the endpoint and the HTTP status,
never the key, the prompt or the reply text.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any, Callable
from urllib.parse import urlsplit

from memvault import __version__
from memvault.distill.llm.protocol import (
    Inflater,
    content_text,
    display_endpoint,
    error_tag,
    is_loopback,
    parse_retry_after,
    usage_count,
)
from memvault.distill.llm.settings import Completion, LLMFailure, LLMSettings
from memvault.distill.llm.tokens import estimate_tokens

# Error bodies are only read for their error.type / error.code.
_MAX_ERROR_BYTES = 64 * 1024
_BACKOFF_BASE = 1.0


class _Transient(Exception):
    """One attempt failed in a way worth retrying; `reason` is safe to show."""

    def __init__(self, reason: str, status: int | None = None, retry_after: float | None = None,
                 timed_out: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.timed_out = timed_out
        self.status = status
        self.retry_after = retry_after


class Client:
    """One endpoint, one model. `complete()` makes up to max_retries + 1 HTTP attempts."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ):
        self.settings = settings
        self.url = f"{settings.base_url.rstrip('/')}/chat/completions"
        self.endpoint = display_endpoint(self.url)
        self._sleep = sleep
        self._random = (rng or random.Random()).random
        self._http: Any = None
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise LLMFailure(f"llm.base_url must be an http:// or https:// URL, got {self.endpoint}")
        self._loopback = is_loopback(parts.hostname)
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            # Trigger: a compressed body could inflate far past max_response_bytes in one chunk.
            # Outcome: ask for none; a server that compresses anyway is decoded with a bounded inflater.
            "Accept-Encoding": "identity",
            "User-Agent": f"memvault/{__version__}",
        }
        key = (settings.api_key or "").strip()
        if key:
            # h11 quotes an illegal header value in its exception, which would put the key in a message.
            if not all(33 <= ord(ch) <= 126 for ch in key):
                raise LLMFailure("the API key contains characters that cannot be sent in an HTTP header "
                                 "(a stray newline or space?)")
            self._headers["Authorization"] = f"Bearer {key}"

    # -- lifecycle -------------------------------------------------------------------------------------------
    def _client(self) -> Any:
        if self._http is None:
            import httpx

            timeout = self.settings.timeout
            self._http = httpx.Client(
                timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
                follow_redirects=False,
                # A local server (Ollama, llama.cpp) must never be reached through a corporate proxy.
                trust_env=not self._loopback,
            )
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests --------------------------------------------------------------------------------------------
    def payload(self, messages: list[dict], *, schema: dict | None = None, schema_name: str = "cards",
                max_tokens: int | None = None) -> dict:
        """The request body complete() sends (exposed so dry runs and tests can inspect it)."""
        s = self.settings
        body: dict[str, Any] = {
            "model": s.model,
            "messages": messages,
            "temperature": s.temperature,
            "max_tokens": self._max_tokens(max_tokens),
            "stream": False,
        }
        if s.json_mode == "json_schema" and schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
        elif s.json_mode in ("json_object", "json_schema"):
            # json_schema without a schema still wants JSON: json_object is the closest thing servers know.
            body["response_format"] = {"type": "json_object"}
        return body

    def _max_tokens(self, max_tokens: int | None) -> int:
        cap = self.settings.max_output_tokens
        return cap if max_tokens is None else max(1, min(cap, int(max_tokens)))

    def call_timeout(self, max_tokens: int | None = None) -> float:
        """Seconds one attempt may take: llm.timeout plus llm.per_token_timeout for each token it may write."""
        s = self.settings
        return s.timeout + max(0.0, s.timeout_per_token) * self._max_tokens(max_tokens)

    def complete(
        self, messages: list[dict], *, schema: dict | None = None, schema_name: str = "cards",
        max_tokens: int | None = None,
    ) -> Completion:
        """The reply to `messages`, asking for at most `max_tokens` (llm.max_output_tokens caps it).

        429, 5xx and broken connections are retried with backoff; a timeout is not (raises LLMFailure with
        timed_out): a local server that answers one request at a time may still be computing this one, and a
        retry would make it compute the same answer again. The caller asks again for less (a smaller batch)."""
        data = json.dumps(self.payload(messages, schema=schema, schema_name=schema_name, max_tokens=max_tokens),
                          ensure_ascii=False).encode("utf-8")
        timeout = self.call_timeout(max_tokens)
        attempts = 0
        while True:
            attempts += 1
            try:
                raw = self._attempt(data, attempts, timeout)
            except _Transient as failure:
                if failure.timed_out:
                    raise LLMFailure(f"LLM endpoint {self.endpoint} did not answer within {timeout:.0f} s "
                                     f"({failure.reason}); not retried", attempts=attempts, timed_out=True) from None
                if attempts > self.settings.max_retries:
                    raise LLMFailure(
                        f"LLM endpoint {self.endpoint} failed: {failure.reason} after {attempts} attempts",
                        status=failure.status, attempts=attempts,
                    ) from None
                self._sleep(self._wait(attempts, failure.retry_after))
                continue
            return self._parse(raw, messages, attempts)

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        cap = self.settings.max_retry_wait
        if retry_after is not None:
            return min(retry_after, cap)
        # Equal jitter: at least half the exponential step, so retries still spread out when many runs collide.
        step = min(cap, _BACKOFF_BASE * 2 ** (attempt - 1))
        return step * (0.5 + 0.5 * self._random())

    def _attempt(self, data: bytes, attempt: int, timeout: float) -> bytes:
        """One POST. Returns the body of a 200; raises _Transient (retry) or LLMFailure (give up)."""
        import httpx

        started = time.monotonic()
        try:
            with self._client().stream("POST", self.url, content=data, headers=self._headers,
                                       timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0))) as resp:
                status = resp.status_code
                if status == 200:
                    return self._read_capped(resp, self.settings.max_response_bytes, started, fatal=True,
                                             timeout=timeout)
                try:
                    tag = error_tag(self._read_capped(resp, _MAX_ERROR_BYTES, started, fatal=False,
                                                      timeout=timeout))
                except _Transient:
                    tag = ""
                detail = f"HTTP {status}" + (f" ({tag})" if tag else "")
                if status == 429 or 500 <= status <= 599:
                    raise _Transient(detail, status, self._retry_after(resp.headers))
                raise LLMFailure(self._hint(status, detail), status=status, attempts=attempt)
        except httpx.ConnectTimeout:
            raise _Transient("connection timed out (ConnectTimeout)") from None  # nothing computed: retry
        except httpx.TimeoutException as exc:
            raise _Transient(f"timed out ({type(exc).__name__})", timed_out=True) from None
        except httpx.ConnectError as exc:
            # Certificate problems do not heal by waiting; say so at once.
            if "CERTIFICATE_VERIFY_FAILED" in str(exc):
                raise LLMFailure(f"LLM endpoint {self.endpoint}: TLS certificate verification failed",
                                 attempts=attempt) from None
            raise _Transient("connection failed (ConnectError)") from None
        except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
            raise _Transient(f"connection broken ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise LLMFailure(f"LLM endpoint {self.endpoint} failed: {type(exc).__name__}",
                             attempts=attempt) from None

    def _retry_after(self, headers: Any) -> float | None:
        ms = headers.get("retry-after-ms")
        if ms:
            try:
                return max(0.0, float(ms) / 1000.0)
            except ValueError:
                pass
        return parse_retry_after(headers.get("retry-after"))

    def _hint(self, status: int, detail: str) -> str:
        where = f"LLM endpoint {self.endpoint}"
        if status in (401, 403):
            return f"{where}: authentication failed ({detail}): check the API key"
        if status == 404:
            return f"{where}: not found ({detail}): check llm.base_url (usually ends in /v1) and llm.model"
        if 300 <= status <= 399:
            return f"{where}: redirected ({detail}): check llm.base_url (http vs https, trailing /v1)"
        if status in (400, 422) and self.settings.json_mode != "text":
            return (f"{where} rejected the request ({detail}); if this server does not support "
                    f"response_format, set llm.json_mode to text")
        if status == 413:
            return f"{where} rejected the request as too large ({detail}): lower the batch size"
        return f"{where} rejected the request ({detail})"

    def _read_capped(self, resp: Any, cap: int, started: float, *, fatal: bool, timeout: float) -> bytes:
        """Read at most `cap` decoded bytes of the body, never holding more than one chunk beyond it."""
        def too_big() -> LLMFailure:
            return LLMFailure(f"LLM endpoint {self.endpoint} sent a response larger than {cap} bytes")

        length = resp.headers.get("content-length", "")
        if fatal and length.isdigit() and int(length) > cap:
            raise too_big()
        encoding = resp.headers.get("content-encoding", "identity").strip().lower()
        inflate = Inflater(encoding) if encoding not in ("", "identity") else None
        if inflate is not None and not inflate.ok:
            raise LLMFailure(f"LLM endpoint {self.endpoint} used an unsupported Content-Encoding")
        out = bytearray()
        for raw in resp.iter_raw():
            for chunk in (inflate.feed(raw) if inflate is not None else (raw,)):
                out += chunk
                if len(out) > cap:
                    if fatal:
                        raise too_big()
                    return bytes(out[:cap])
            # The read timeout bounds each gap; this bounds a server that trickles bytes forever.
            if time.monotonic() - started > timeout:
                raise _Transient("timed out (slow body)", timed_out=True)
        return bytes(out)

    def _parse(self, raw: bytes, messages: list[dict], attempts: int) -> Completion:
        where = f"LLM endpoint {self.endpoint}"
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            raise LLMFailure(f"{where} returned a body that is not JSON ({len(raw)} bytes)",
                             status=200, attempts=attempts) from None
        if not isinstance(data, dict):
            raise LLMFailure(f"{where} returned JSON that is not an object", status=200, attempts=attempts)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            tag = error_tag(raw) if "error" in data else ""
            why = f"an error ({tag})" if tag else ("an error" if "error" in data else "a reply without choices")
            raise LLMFailure(f"{where} returned {why}", status=200, attempts=attempts)
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise LLMFailure(f"{where} returned a choice without a message", status=200, attempts=attempts)
        text = content_text(message.get("content"))
        finish = choice.get("finish_reason")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        prompt_tokens = usage_count(usage.get("prompt_tokens"))
        completion_tokens = usage_count(usage.get("completion_tokens"))
        # Some local servers send no usage: estimate so budgets and the journal still see a number.
        if prompt_tokens is None:
            prompt_tokens = sum(4 + estimate_tokens(content_text(m.get("content"))) for m in messages)
        if completion_tokens is None:
            completion_tokens = estimate_tokens(text)
        return Completion(
            text=text,
            finish_reason=finish if isinstance(finish, str) else None,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            calls=attempts,
        )
