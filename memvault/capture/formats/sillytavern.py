"""The sillytavern format: a SillyTavern chat file, a header line then one message per line; the chosen
swipe is the message's text, the session comes from the header or the file name. What the character (or a
narrator) says before the person's first message is a `greeting`, not a turn.
"""

from __future__ import annotations

from collections.abc import Iterator

from memvault.model import Message

from .records import Item, Shape, line_ref, speaker_or_none, str_or_none
from .records import session_from_name as _session_from_name
from .times import normalize_ts


def parse(obj: dict, lineno: int, state: dict) -> Iterator[Item]:
    if "mes" not in obj and ("user_name" in obj or "character_name" in obj or "chat_metadata" in obj):
        state["session"] = _sillytavern_session(obj)
        state["header"] = True
        return
    if "mes" not in obj and "swipes" not in obj:
        raise Shape("not a SillyTavern message (no mes)")
    mes = obj.get("mes")
    if mes is not None and not isinstance(mes, str):
        raise Shape("mes is not text")
    text = mes or ""
    swipes, swipe_id = obj.get("swipes"), obj.get("swipe_id")
    if (isinstance(swipes, list) and isinstance(swipe_id, int) and not isinstance(swipe_id, bool)
            and 0 <= swipe_id < len(swipes) and isinstance(swipes[swipe_id], str)):
        text = swipes[swipe_id]
    extra = obj.get("extra") if isinstance(obj.get("extra"), dict) else {}
    if obj.get("is_user") is True:
        role = "user"
    elif obj.get("is_system") is True or extra.get("type") == "narrator":
        role = "system"
    else:
        role = "assistant"
    if "session" not in state:
        state["session"] = _session_from_name(state["name"])
    start = state.get("header", False)  # the chat's header line came first: this is its opening message
    if start and role != "user":
        # Trigger: a character's greeting (first_mes) or a narrator line before the person said anything.
        # Why: it has no user side; stored, "hello" turns crowd out what was said. Outcome: counted as a
        # greeting, never a turn; the person's first message still starts the conversation.
        role = "greeting"
    else:
        state.pop("header", None)
    yield Message(role=role, text=text, ref=line_ref(state, lineno), ts=normalize_ts(obj.get("send_date")),
                  session=state["session"], start=start, speaker=speaker_or_none(obj.get("name")))


def _sillytavern_session(header: dict) -> str | None:
    # SillyTavern names a chat file "<character> - <create_date>.jsonl"; building the same string from the
    # header keeps the session stable whether the chat arrives as a file or on stdin.
    character, created = str_or_none(header.get("character_name")), str_or_none(header.get("create_date"))
    if character and created:
        return f"{character} - {created}"
    meta = header.get("chat_metadata") if isinstance(header.get("chat_metadata"), dict) else {}
    return str_or_none(meta.get("integrity")) or str_or_none(meta.get("chat_id_hash"))

