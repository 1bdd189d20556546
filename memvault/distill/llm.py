"""Client for any OpenAI-compatible /chat/completions endpoint (Ollama, llama.cpp, vLLM, DeepSeek, OpenAI).

The only module that imports httpx, and only inside functions, so `memvault --help` never pays for it.
Nothing here prints or reads the environment: the caller hands over the key. Error messages name the endpoint
and the HTTP status, never the key, the prompt or the reply text (a bad server may echo the prompt back).
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from memvault import __version__
from memvault.errors import LLMError, UsageError

JSON_MODES = ("json_object", "json_schema", "text")

# A 200 reply to one distill batch is a few KiB; anything near this is a broken or hostile server.
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024
# Error bodies are only read for their error.type / error.code.
_MAX_ERROR_BYTES = 64 * 1024
_BACKOFF_BASE = 1.0
_INFLATE_PIECE = 64 * 1024


@dataclass(frozen=True)
class LLMSettings:
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 120.0
    temperature: float = 0.0
    max_output_tokens: int = 4096
    json_mode: str = "json_object"
    max_retries: int = 3
    max_retry_wait: float = 60.0
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    def __post_init__(self) -> None:
        if self.json_mode not in JSON_MODES:
            raise UsageError(f"llm.json_mode must be one of {', '.join(JSON_MODES)}, not {self.json_mode!r}")


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    calls: int


class LLMFailure(LLMError):
    """The endpoint could not give us a usable reply (network, HTTP status, protocol, size)."""

    def __init__(self, message: str, *, kind: str = "llm_error", status: int | None = None, attempts: int = 0):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.attempts = attempts


class _Transient(Exception):
    """One attempt failed in a way worth retrying; `reason` is safe to show."""

    def __init__(self, reason: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


_CJK = re.compile(
    "[\u2e80-\u9fff"  # CJK radicals, punctuation, kana, unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # compatibility ideographs
    "\uff00-\uffef"  # full-width forms
    "\U00020000-\U0003134f]"  # extension B..G
)


def estimate_tokens(text: str) -> int:
    """Rough token count for budgets: a CJK character is ~1 token, other text ~4 characters a token.

    Real tokenizers differ by model (a Chinese character is 0.6-1.5 tokens); this errs towards the middle.
    """
    if not text:
        return 0
    cjk = len(text) - len(_CJK.sub("", text))
    return cjk + (len(text) - cjk + 3) // 4


def display_endpoint(url: str) -> str:
    """scheme://host[:port]/path of a URL, without userinfo or query, safe to show in a message."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<unparseable llm.base_url>"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return f"{parts.scheme}://{netloc}{parts.path}"


def _is_loopback(host: str | None) -> bool:
    return host in ("localhost", "127.0.0.1", "::1") or (host or "").startswith("127.")


_SAFE_CODE = re.compile(r"[^A-Za-z0-9_.\-]")


def _error_tag(body: bytes) -> str:
    """`error.type`/`error.code` of an OpenAI-style error body, sanitised; never `error.message`."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return ""
    err = data.get("error") if isinstance(data, dict) else None
    if not isinstance(err, dict):
        return ""
    tags = []
    for key in ("type", "code"):
        value = err.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            clean = _SAFE_CODE.sub("", str(value))[:64]
            if clean and clean not in tags:
                tags.append(clean)
    return "/".join(tags)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or an HTTP date); None if absent or garbled."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - (now or datetime.now(timezone.utc))).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


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
        self._loopback = _is_loopback(parts.hostname)
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
    def payload(self, messages: list[dict], *, schema: dict | None = None, schema_name: str = "cards") -> dict:
        """The request body complete() sends (exposed so dry runs and tests can inspect it)."""
        s = self.settings
        body: dict[str, Any] = {
            "model": s.model,
            "messages": messages,
            "temperature": s.temperature,
            "max_tokens": s.max_output_tokens,
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

    def complete(
        self, messages: list[dict], *, schema: dict | None = None, schema_name: str = "cards"
    ) -> Completion:
        data = json.dumps(self.payload(messages, schema=schema, schema_name=schema_name),
                          ensure_ascii=False).encode("utf-8")
        attempts = 0
        while True:
            attempts += 1
            try:
                raw = self._attempt(data, attempts)
            except _Transient as failure:
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

    def _attempt(self, data: bytes, attempt: int) -> bytes:
        """One POST. Returns the body of a 200; raises _Transient (retry) or LLMFailure (give up)."""
        import httpx

        started = time.monotonic()
        try:
            with self._client().stream("POST", self.url, content=data, headers=self._headers) as resp:
                status = resp.status_code
                if status == 200:
                    return self._read_capped(resp, self.settings.max_response_bytes, started, fatal=True)
                try:
                    tag = _error_tag(self._read_capped(resp, _MAX_ERROR_BYTES, started, fatal=False))
                except _Transient:
                    tag = ""
                detail = f"HTTP {status}" + (f" ({tag})" if tag else "")
                if status == 429 or 500 <= status <= 599:
                    raise _Transient(detail, status, self._retry_after(resp.headers))
                raise LLMFailure(self._hint(status, detail), status=status, attempts=attempt)
        except httpx.TimeoutException as exc:
            raise _Transient(f"timed out ({type(exc).__name__})") from None
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

    def _read_capped(self, resp: Any, cap: int, started: float, *, fatal: bool) -> bytes:
        """Read at most `cap` decoded bytes of the body, never holding more than one chunk beyond it."""
        def too_big() -> LLMFailure:
            return LLMFailure(f"LLM endpoint {self.endpoint} sent a response larger than {cap} bytes")

        length = resp.headers.get("content-length", "")
        if fatal and length.isdigit() and int(length) > cap:
            raise too_big()
        encoding = resp.headers.get("content-encoding", "identity").strip().lower()
        inflate = _Inflater(encoding) if encoding not in ("", "identity") else None
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
            if time.monotonic() - started > self.settings.timeout:
                raise _Transient("timed out (slow body)")
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
            tag = _error_tag(raw) if "error" in data else ""
            why = f"an error ({tag})" if tag else ("an error" if "error" in data else "a reply without choices")
            raise LLMFailure(f"{where} returned {why}", status=200, attempts=attempts)
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise LLMFailure(f"{where} returned a choice without a message", status=200, attempts=attempts)
        text = _content_text(message.get("content"))
        finish = choice.get("finish_reason")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        prompt_tokens = _count(usage.get("prompt_tokens"))
        completion_tokens = _count(usage.get("completion_tokens"))
        # Some local servers send no usage: estimate so budgets and the journal still see a number.
        if prompt_tokens is None:
            prompt_tokens = sum(4 + estimate_tokens(_content_text(m.get("content"))) for m in messages)
        if completion_tokens is None:
            completion_tokens = estimate_tokens(text)
        return Completion(
            text=text,
            finish_reason=finish if isinstance(finish, str) else None,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            calls=attempts,
        )


def _count(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _content_text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a content list; anything else is empty."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


class _Inflater:
    """gzip/deflate decoding that never expands one chunk beyond a given limit (a zip bomb stays small)."""

    def __init__(self, encoding: str):
        wbits = {"gzip": 31, "x-gzip": 31, "deflate": 15}.get(encoding)
        self.ok = wbits is not None
        self._deflate = encoding == "deflate"
        self._z = zlib.decompressobj(wbits or 15)
        self._first = True

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        """Decoded pieces of at most _INFLATE_PIECE bytes; the caller stops pulling once it has enough."""
        while chunk:
            try:
                out = self._z.decompress(chunk, _INFLATE_PIECE)
            except zlib.error:
                if not (self._deflate and self._first):
                    raise LLMFailure("the LLM endpoint sent a corrupt compressed body") from None
                # Some servers send raw deflate without the zlib header.
                self._z = zlib.decompressobj(-15)
                out = self._z.decompress(chunk, _INFLATE_PIECE)
            self._first = False
            chunk = self._z.unconsumed_tail
            if out:
                yield out
            elif not chunk:
                break


# -- JSON out of a chatty model --------------------------------------------------------------------------------
_THINK_LEAD = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_OPEN = re.compile(r"\A\s*<(?:think|thinking|reasoning)>", re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)
_FENCE = re.compile(r"```[ \t]*(?:json[c5]?|javascript|js)?[ \t]*\r?\n(.*?)```", re.S | re.I)
_START = re.compile(r"[\[{]")


def extract_json(text: str) -> Any:
    """The first complete top-level JSON object or array in a model reply.

    Drops <think>…</think> blocks (and everything before a lone closing tag, as reasoning models served with
    the opening tag in the template send), prefers the content of ```json fences, then scans for the first
    `{` or `[` that starts a value the json module accepts. Raises ValueError, never quoting the text.
    """
    if not isinstance(text, str):
        raise ValueError("model reply is not text")
    # Reasoning comes first; only leading blocks are dropped, so a card body quoting the tags survives.
    while (lead := _THINK_LEAD.match(text)) is not None:
        text = text[lead.end():]
    if _THINK_OPEN.match(text):
        # Unclosed: the reply stopped while reasoning; nothing after the tag is the answer.
        raise ValueError("model reply ends inside a <think> block (no JSON after the reasoning)")
    close = _THINK_CLOSE.search(text)
    if close and not text.lstrip().startswith(("{", "[")) and "<think" not in text[: close.start()].lower():
        # A lone closing tag: the server put the opening tag in the template, so the reasoning precedes it.
        text = text[close.end():]
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except (ValueError, RecursionError):
            pass
    for fenced in _FENCE.findall(text):
        found = _scan(fenced)
        if found is not _NOTHING:
            return found
    found = _scan(text)
    if found is _NOTHING:
        raise ValueError("no complete JSON object or array found in the model reply")
    return found


_NOTHING = object()
_DECODER = json.JSONDecoder()


_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}"]', re.S)
_PAIR = {"]": "[", "}": "{"}


def _scan(text: str) -> Any:
    """First `{`/`[` that starts a complete JSON value; linear work on ordinary replies, bounded on hostile ones.

    A bracket/string matcher finds where the value starting at an opener ends (or breaks); json.loads then
    judges only that slice (json.JSONDecoder.raw_decode on the whole text counts lines up to the error on every
    failure, which is quadratic). Trigger: a slice does not parse. Why: openers before the parse error are
    nested in a valid prefix, so a cut-off reply must not yield one of its inner objects. Outcome: resume at
    the error; give up once the scanning done exceeds a few times the text length.
    """
    budget = 4 * len(text) + 65536
    pos = 0
    while (match := _START.search(text, pos)) is not None:
        start = match.start()
        stack: list[str] = []
        stop = len(text)
        for tok in _TOKEN.finditer(text, start):
            char = tok.group()
            if char in "[{":
                stack.append(char)
            elif char in "]}":
                if stack[-1] != _PAIR[char]:
                    stop = tok.end()
                    break
                stack.pop()
                if not stack:
                    stop = tok.end()
                    break
            elif char == '"':
                break  # unterminated string: the value runs to the end of the text
        chunk = text[start:stop]
        try:
            return json.loads(chunk)
        except json.JSONDecodeError as exc:
            # An unterminated string reports where it began, which is still inside this value.
            resume = start + max(exc.pos, 1)
        except (ValueError, RecursionError):
            resume = start + 1
        budget -= 2 * len(chunk)
        if budget < 0:
            return _NOTHING
        pos = resume
    return _NOTHING
