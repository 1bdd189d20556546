"""Reading what an OpenAI-compatible endpoint sends: safe endpoint names, error tags, Retry-After, message
content, usage counts, and a bounded gzip/deflate inflater. No network and no httpx here; messages never quote
a body (a bad server may echo the prompt back).
"""

from __future__ import annotations

import email.utils
import json
import re
import zlib
from datetime import datetime, timezone
from typing import Any, Iterator

from memvault.distill.llm.settings import LLMFailure
from memvault.redact.urls import display_url

_INFLATE_PIECE = 64 * 1024


def display_endpoint(url: str) -> str:
    """scheme://host[:port]/path of a URL, without userinfo or query, safe to show in a message."""
    return display_url(url, "llm.base_url")


def is_loopback(host: str | None) -> bool:
    return host in ("localhost", "127.0.0.1", "::1") or (host or "").startswith("127.")


_SAFE_CODE = re.compile(r"[^A-Za-z0-9_.\-]")


def error_tag(body: bytes) -> str:
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


def usage_count(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def content_text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a content list; anything else is empty."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


class Inflater:
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
