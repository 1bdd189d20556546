"""Format detection: guess an input's format from its first bytes (~64 KiB), or raise InputError when unsure.

JSON lines are classified by the first line that says what it is; documents too big or too pretty to parse
from the head by their unescaped keys; a transcript by its speaker lines. A first line longer than the head (a
pasted dump) is classified by the keys its prefix holds (`sniff_cut_line`); the caller may then read on and
sniff the lines after it.
"""

from __future__ import annotations

import json
import re

from memvault.errors import InputError

from . import antigravity, cursor, gemini, opencode
from .claude_code import OTHER_TYPES
from .codex import is_line
from .records import FORMATS
from .text import SPEAKER_LINE


def sniff_format(head: bytes) -> str:
    """Guess the format from the first bytes of an input (~64 KiB); raise InputError when unsure."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text:
        raise InputError("unknown format: the input is empty")
    if text[0] in "[{":
        fmt = _sniff_lines(text) or _sniff_document(text)
        if fmt:
            return fmt
    # A transcript may open with "[2026-01-08 09:30] User: …", so JSON-looking starts fall through to here.
    if any(SPEAKER_LINE.match(ln) for ln in text.splitlines()[:200]):
        return "text"
    raise InputError(f"unknown format (expected one of: {', '.join(FORMATS)}); pass --format")


def _sniff_lines(text: str) -> str | None:
    """Line-based formats: the first line that says what it is decides."""
    for ln in text.splitlines()[:50]:
        ln = ln.strip()
        if not ln:
            continue
        try:
            obj = json.loads(ln)
        except ValueError:
            return None  # a pretty-printed document or a truncated line: try the document rules
        fmt = _classify_line(obj)
        if fmt:
            return fmt
    return None


def sniff_cut_line(head: bytes) -> str | None:
    """The line format of a JSON line cut short (only its first bytes are known), from the top-level keys
    before the cut; None when they do not say."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    obj = _prefix_object(text)
    return _classify_line(obj) if obj else None


_DECODER = json.JSONDecoder()
_CUT = {"{": dict, "[": list, '"': str}


def _prefix_object(text: str) -> dict | None:
    """The top-level keys of a JSON object cut short, with their values; the value the cut falls in is an
    empty one of its type (a cut string "", a cut object {}). None when `text` is not the start of an object."""
    if not text.startswith("{"):
        return None
    out: dict = {}
    i = 1
    while True:
        i = _skip_ws(text, i)
        if i >= len(text) or text[i] != '"':
            return out
        try:
            key, i = json.decoder.scanstring(text, i + 1)
        except ValueError:
            return out
        i = _skip_ws(text, i)
        if i >= len(text) or text[i] != ":":
            return out
        i = _skip_ws(text, i + 1)
        if i >= len(text):
            return out
        try:
            out[key], i = _DECODER.raw_decode(text, i)
        except (ValueError, RecursionError):
            cut = _CUT.get(text[i])
            if cut is not None:
                out[key] = cut()
            return out
        i = _skip_ws(text, i)
        if i >= len(text) or text[i] != ",":
            return out
        i += 1


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _classify_line(obj: object) -> str | None:
    if isinstance(obj, list):
        first = obj[0] if obj else None
        if isinstance(first, dict) and isinstance(first.get("chat_messages"), list):
            return "claude-ai"
        if isinstance(first, dict) and "mapping" in first:
            return "chatgpt"
        if isinstance(first, dict) and "role" in first:
            return "openai"
        return None
    if not isinstance(obj, dict):
        return None
    if "mapping" in obj:
        return "chatgpt"
    if isinstance(obj.get("chat_messages"), list):
        return "claude-ai"
    if opencode.is_document(obj):
        return "opencode"
    if isinstance(obj.get("messages"), list) and not gemini.is_line(obj):
        return "openai"
    if "user_name" in obj or "character_name" in obj or ("is_user" in obj and "mes" in obj):
        return "sillytavern"
    if gemini.is_line(obj):
        return "gemini"
    if antigravity.is_line(obj):
        return "antigravity"
    kind = obj.get("type")
    if "sessionId" in obj or (kind in ("user", "assistant") and isinstance(obj.get("message"), dict)):
        return "claude-code"
    if kind in OTHER_TYPES and ("leafUuid" in obj or "uuid" in obj or "messageId" in obj):
        return "claude-code"
    if is_line(obj):
        return "codex"
    if cursor.is_line(obj):
        return "cursor"
    if "role" in obj:
        return "jsonl"
    return None


def _sniff_document(text: str) -> str | None:
    """Documents too big or too pretty to parse from the head: look for unescaped keys."""
    def has_key(key: str, after: str = "") -> bool:
        return re.search(r'(?<!\\)"' + key + r'"\s*:\s*' + after, text) is not None

    if has_key("mapping", r"\{") and (has_key("current_node") or has_key("children")):
        return "chatgpt"
    if has_key("chat_messages", r"\["):
        return "claude-ai"
    if has_key("sessionId") and has_key("projectHash"):
        return "gemini"
    if has_key("info", r"\{") and (has_key("parts", r"\[") or has_key("sessionID") or has_key("projectID")):
        return "opencode"
    if has_key("messages", r"\["):
        return "openai"
    if text[0] == "[" and has_key("role"):
        return "openai"
    return None
