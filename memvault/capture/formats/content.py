"""Message content shared by the OpenAI-style formats: content parts -> (text, tool blocks), role names ->
our roles, and one OpenAI-style message dict -> `Message`.
"""

from __future__ import annotations

from memvault.model import Message

from .records import Shape, speaker_or_none
from .times import normalize_ts


_TOOL_PART_TYPES = {
    "tool_use", "tool_result", "tool_call", "function_call", "function_call_output", "server_tool_use",
    "web_search_tool_result", "mcp_tool_use", "mcp_tool_result", "tool-call", "tool-result",
}
_IMAGE_PART_TYPES = {"image", "image_url", "input_image", "image_file"}
_DROPPED_PART_TYPES = {"thinking", "redacted_thinking", "reasoning"}


def content_text(content: object) -> tuple[str, int]:
    """(text, tool blocks) from a string or a list of content parts."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        raise Shape("content is neither text nor a list of parts")
    texts: list[str] = []
    tools = 0
    for part in content:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            raise Shape("content part is not an object")
        kind = part.get("type")
        if kind in _TOOL_PART_TYPES:
            tools += 1
        elif kind in _IMAGE_PART_TYPES:
            texts.append("[image]")
        elif kind in _DROPPED_PART_TYPES:
            pass
        elif isinstance(part.get("text"), str):  # "text", "input_text", "output_text", …
            texts.append(part["text"])
    return "\n".join(t for t in texts if t), tools


_ROLE_ALIASES = {
    "user": "user", "human": "user",
    "assistant": "assistant", "ai": "assistant", "bot": "assistant", "model": "assistant", "gpt": "assistant",
    "system": "system", "developer": "system",
    "tool": "tool", "function": "tool", "ipython": "tool",
}


def role_of(raw: object) -> str:
    role = _ROLE_ALIASES.get(raw.lower()) if isinstance(raw, str) else None
    if role is None:
        raise Shape("missing or unknown role")
    return role


def chat_message(obj: dict, ref: str, session: str | None = None, project: str | None = None) -> Message:
    """One OpenAI-style message dict (also the jsonl format's line) -> Message."""
    role = role_of(obj.get("role"))
    text, tools = content_text(obj.get("content"))
    calls = obj.get("tool_calls")
    tools += len(calls) if isinstance(calls, list) else 0
    tools += 1 if obj.get("function_call") else 0
    if role == "tool":
        text, tools = "", max(tools, 1)  # a tool's output is counted, never stored
    ts = None
    for key in ("ts", "timestamp", "time", "created_at", "create_time", "date"):
        if obj.get(key) is not None:
            ts = normalize_ts(obj[key])
            break
    speaker = speaker_or_none(obj.get("name")) or speaker_or_none(obj.get("speaker"))
    return Message(role=role, text=text, ref=ref, ts=ts, session=session, project=project, tools=tools,
                   speaker=speaker)
