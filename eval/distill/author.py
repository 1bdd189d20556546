"""Renders the labelled extraction set written by hand in conversations.yaml (conversations, their turns and the
cards each turn should yield).

`python eval/distill/author.py` renders them into chat logs of every capture format (eval/distill/inputs/) and
eval/distill/labels.jsonl. The rendered files are the frozen set; this file is how they were written (rerunning
it must reproduce them byte for byte, tests/e2e/test_distill_eval.py checks that). Labelling rules: README.md.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent

@dataclass
class C:
    kind: str
    subject: str
    value: str
    evidence: str  # the words of the USER's text the card rests on (checked to be in the episode)
    entities: tuple = ()
    tag: str | None = None  # a name for `sup` of a later card
    sup: str | None = None  # tag of the earlier card (same file) this one replaces
    title: str | None = None
    who: str = "user"  # whose text the evidence is in: "user", or "assistant" (the second person of a named log)
    when: str | None = None  # YYYY-MM-DD the card's fact holds from (README: dates), where the text gives one


@dataclass
class T:
    user: str
    asst: str
    cards: list = field(default_factory=list)
    nothing: str | None = None  # why the turn yields no card (the nothing-set category)


@dataclass
class Conv:
    file: str
    fmt: str
    lang: str
    start: str  # ISO time of the first turn
    turns: list
    session: str = ""
    project: str = ""
    title: str = ""
    persona: tuple = ("User", "Assistant")
    named: bool = False  # put the persona's names on every message (`speaker` in jsonl, `name` in openai)
    part: str = ""  # "new" for the issue 20 set, "ml" for issue 32's (rows say so); "" for the issue 10 set
    half: str = ""  # tuning half: "A" or "B" (the new set), "tune" or "held" (the ml set)


def load(path: Path = HERE / "conversations.yaml") -> list[Conv]:
    """The conversations of the data file, in file order."""
    import yaml

    convs = []
    for d in yaml.safe_load(path.read_text(encoding="utf-8")):
        turns = [T(t["user"], t["assistant"], [C(**{**c, "entities": tuple(c.get("entities", ()))}) for c in t.get("cards", ())],
                   t.get("nothing")) for t in d["turns"]]
        convs.append(Conv(d["file"], d["format"], d["lang"], d["start"], turns, session=d.get("session", ""),
                          project=d.get("project", ""), title=d.get("title", ""),
                          persona=tuple(d.get("persona", ("User", "Assistant"))), named=bool(d.get("named")),
                          part=d.get("part", ""), half=d.get("half", "")))
    return convs


# The issue 10 and 20 parts, then the multilingual part of issue 32 (`part: ml`, halves "tune" and "held").
CONVS: list[Conv] = load() + load(HERE / "conversations_ml.yaml")


def _times(conv: Conv):
    t0 = datetime.fromisoformat(conv.start.replace("Z", "+00:00"))
    for i in range(len(conv.turns)):
        yield t0 + timedelta(minutes=3 * i)


def _iso(t: datetime, ms: bool = False) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z" if ms else "%Y-%m-%dT%H:%M:%SZ")


def _uid(*parts) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "memvault-eval:" + ":".join(map(str, parts))))


def _dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def render_jsonl(conv: Conv) -> str:
    lines, n = [], 0
    for t, when in zip(conv.turns, _times(conv)):
        for role, text, dt in (("user", t.user, 0), ("assistant", t.asst, 20)):
            if not text:
                continue
            n += 1
            if conv.named:  # a two-person log: who spoke; ids stay unique when several sessions share a file
                head = {"id": f"{conv.session}-m-{n:03d}", "role": role,
                        "speaker": conv.persona[0 if role == "user" else 1]}
            else:
                head = {"id": f"m-{n:03d}", "role": role}
            lines.append(_dump({**head, "session": conv.session, "project": conv.project,
                                "ts": _iso(when + timedelta(seconds=dt)), "content": text}))
    return "\n".join(lines) + "\n"


# The system message of an OpenAI document, by the conversation's language.
SYSTEM = {
    "en": "You are a helpful assistant.",
    "zh": "用中文回答。",
    "fr": "Tu es un assistant utile. Réponds en français.",
    "de": "Du bist ein hilfreicher Assistent. Antworte auf Deutsch.",
    "es": "Eres un asistente útil. Responde en español.",
    "ja": "あなたは親切なアシスタントです。日本語で答えてください。",
    "ko": "당신은 친절한 어시스턴트입니다. 한국어로 답하세요.",
}


def render_openai(conv: Conv) -> str:
    if conv.named:
        return _render_openai_named(conv)
    msgs = [{"role": "system", "content": SYSTEM[conv.lang]}]
    for t in conv.turns:
        if t.user:
            msgs.append({"role": "user", "content": t.user})
        msgs.append({"role": "assistant", "content": t.asst})
    doc = {"model": "gpt-4o-mini", "session": conv.session, "project": conv.project, "messages": msgs}
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def _render_openai_named(conv: Conv) -> str:
    """A two-person log as an OpenAI messages document: each message names its speaker and has its time."""
    msgs = []
    for t, when in zip(conv.turns, _times(conv)):
        for role, text, dt in (("user", t.user, 0), ("assistant", t.asst, 20)):
            if text:
                msgs.append({"role": role, "name": conv.persona[0 if role == "user" else 1],
                             "ts": _iso(when + timedelta(seconds=dt)), "content": text})
    doc = {"session": conv.session, "project": conv.project, "messages": msgs}
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def render_chatgpt(convs: list[Conv]) -> str:
    out = []
    for conv in convs:
        root = _uid(conv.session, "root")
        mapping = {root: {"id": root, "message": None, "parent": None, "children": []}}
        parent = root
        for i, (t, when) in enumerate(zip(conv.turns, _times(conv))):
            for role, text, dt in (("user", t.user, 0), ("assistant", t.asst, 15)):
                if not text:
                    continue
                nid = _uid(conv.session, i, role)
                mapping[parent]["children"].append(nid)
                mapping[nid] = {"id": nid, "message": {
                    "id": nid, "author": {"role": role, "name": None, "metadata": {}},
                    "create_time": (when + timedelta(seconds=dt)).timestamp(), "update_time": None,
                    "content": {"content_type": "text", "parts": [text]}, "status": "finished_successfully",
                    "end_turn": role == "assistant", "weight": 1.0, "metadata": {}, "recipient": "all", "channel": None},
                    "parent": parent, "children": []}
                parent = nid
        first = next(_times(conv)).timestamp()
        out.append({"title": conv.title, "create_time": first, "update_time": first + 3600, "mapping": mapping,
                    "current_node": parent, "id": conv.session, "conversation_id": conv.session})
    return json.dumps(out, ensure_ascii=False) + "\n"


def render_claude_code(conv: Conv) -> str:
    lines = []
    base = {"isSidechain": False, "userType": "external", "cwd": conv.project, "sessionId": conv.session,
            "version": "2.0.31", "gitBranch": "main"}
    parent = None
    t0 = next(_times(conv))
    caveat = _uid(conv.session, "caveat")
    lines.append(_dump({"parentUuid": None, **base, "isMeta": True, "type": "user", "message": {"role": "user", "content":
        "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these "
        "messages or otherwise consider them in your response unless the user explicitly asks you to."},
        "uuid": caveat, "timestamp": _iso(t0 - timedelta(seconds=5), ms=True)}))
    parent = caveat
    for i, (t, when) in enumerate(zip(conv.turns, _times(conv))):
        uid = _uid(conv.session, i, "user")
        lines.append(_dump({"parentUuid": parent, **base, "type": "user", "message": {"role": "user", "content": t.user},
                            "uuid": uid, "timestamp": _iso(when, ms=True)}))
        aid = _uid(conv.session, i, "assistant")
        lines.append(_dump({"parentUuid": uid, **base, "type": "assistant", "message": {
            "id": "msg_" + aid.replace("-", "")[:24], "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": t.asst}], "stop_reason": "end_turn"},
            "uuid": aid, "timestamp": _iso(when + timedelta(seconds=30), ms=True)}))
        parent = aid
    return "\n".join(lines) + "\n"


def render_codex(conv: Conv) -> str:
    t0 = next(_times(conv))
    lines = [_dump({"timestamp": _iso(t0 - timedelta(seconds=10), ms=True), "type": "session_meta", "payload": {
        "id": conv.session, "timestamp": _iso(t0 - timedelta(seconds=10), ms=True), "cwd": conv.project,
        "originator": "codex_cli_rs", "cli_version": "0.98.0", "source": "cli", "model_provider": "openai"}})]
    lines.append(_dump({"timestamp": _iso(t0 - timedelta(seconds=9), ms=True), "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text":
            f"<environment_context>\n  <cwd>{conv.project}</cwd>\n  <approval_policy>on-request</approval_policy>\n"
            "  <sandbox_mode>workspace-write</sandbox_mode>\n</environment_context>"}]}}))
    for t, when in zip(conv.turns, _times(conv)):
        lines.append(_dump({"timestamp": _iso(when, ms=True), "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": t.user}]}}))
        lines.append(_dump({"timestamp": _iso(when, ms=True), "type": "event_msg", "payload": {
            "type": "user_message", "message": t.user}}))
        lines.append(_dump({"timestamp": _iso(when + timedelta(seconds=25), ms=True), "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t.asst}]}}))
    return "\n".join(lines) + "\n"


def render_sillytavern(conv: Conv) -> str:
    user, char = conv.persona
    t0 = next(_times(conv))
    lines = [_dump({"user_name": user, "character_name": char, "create_date": t0.strftime("%Y-%m-%d@%Hh%Mm%Ss"),
                    "chat_metadata": {"integrity": _uid(conv.file, "integrity"), "note_prompt": "", "tainted": False}})]
    for t, when in zip(conv.turns, _times(conv)):
        stamp = when.strftime("%B %-d, %Y %-I:%M%p").replace("AM", "am").replace("PM", "pm")
        if t.user:
            lines.append(_dump({"name": user, "is_user": True, "is_system": False, "send_date": stamp, "mes": t.user,
                                "extra": {}}))
        lines.append(_dump({"name": char, "is_user": False, "is_system": False, "send_date": stamp, "mes": t.asst,
                            "extra": {"api": "openai", "model": "gpt-4o"}}))
    return "\n".join(lines) + "\n"


def render_text(conv: Conv) -> str:
    user, asst = conv.persona
    colon = "：" if conv.lang == "zh" else ":"
    out = []
    if conv.lang == "en":
        out.append("# Pairing notes\n")
    for t, when in zip(conv.turns, _times(conv)):
        stamp = when.strftime("[%Y-%m-%d %H:%M] ")
        out.append(f"{stamp}{user}{colon}{t.user}")
        out.append(f"{stamp}{asst}{colon}{t.asst}")
        out.append("")
    return "\n".join(out)


# ============================================================================================ labels


def episode_key(conv: Conv, turn: int, multi: bool) -> str:
    return f"{conv.file}#{conv.session}#{turn}" if multi else f"{conv.file}#{turn}"


def build() -> tuple[dict[str, str], list[dict]]:
    files: dict[str, list[Conv]] = {}
    for conv in CONVS:
        files.setdefault(conv.file, []).append(conv)
    rendered: dict[str, str] = {}
    labels: list[dict] = []
    for name, convs in files.items():
        fmt = convs[0].fmt
        if fmt == "chatgpt":
            rendered[name] = render_chatgpt(convs)
        elif fmt == "jsonl" and len(convs) > 1:  # several sessions of the same two people, one after another
            rendered[name] = "".join(render_jsonl(c) for c in convs)
        else:
            assert len(convs) == 1, name
            rendered[name] = {"jsonl": render_jsonl, "openai": render_openai, "claude-code": render_claude_code,
                              "codex": render_codex, "sillytavern": render_sillytavern, "text": render_text}[fmt](convs[0])
        multi = len(convs) > 1
        tags: dict[str, str] = {}  # a later session may supersede a card of an earlier one of the same file
        for conv in convs:
            for i, t in enumerate(conv.turns, start=1):
                key = episode_key(conv, i, multi)
                assert bool(t.cards) != bool(t.nothing), key
                cards = []
                for k, c in enumerate(t.cards, start=1):
                    cid = f"{key}/{k}"
                    assert c.who in ("user", "assistant"), (cid, c.who)
                    assert c.evidence in (t.user if c.who == "user" else t.asst), (cid, f"evidence not in the {c.who}'s text")
                    assert c.when is None or re.fullmatch(r"\d{4}-\d{2}-\d{2}", c.when), (cid, c.when)
                    if c.tag:
                        tags[c.tag] = cid
                    card = {"id": cid, "kind": c.kind, "subject": c.subject, "value": c.value,
                            "title": c.title or f"{c.subject}: {c.value}", "entities": list(c.entities),
                            "supersedes": tags[c.sup] if c.sup else None, "evidence": c.evidence}
                    if c.who != "user":
                        card["who"] = c.who
                    if c.when:
                        card["when"] = c.when
                    cards.append(card)
                row = {"episode": key, "file": name, "format": fmt, "lang": conv.lang,
                       "session": conv.session if multi else None, "turn": i, "cards": cards, "nothing": t.nothing}
                if conv.part:
                    row.update(part=conv.part, half=conv.half)
                labels.append(row)
    return rendered, labels


def main() -> None:
    rendered, labels = build()
    inputs = HERE / "inputs"
    inputs.mkdir(exist_ok=True)
    for name, text in rendered.items():
        (inputs / name).write_text(text, encoding="utf-8")
    with open(HERE / "labels.jsonl", "w", encoding="utf-8") as fh:
        for row in labels:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
