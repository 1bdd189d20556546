"""The LLM synopsis of a project (issue 14), and what reflect.py shares with it: which cards a model is shown,
how they are fenced, the one counted call, and how cited card ids are checked.

The project's active cards go to the model newest and most important first within `synopsis.max_input_tokens`,
listed with their ids between a fence line that carries a hash of what it encloses (so no card can close it),
the whole prompt redacted again (a card written by hand, or a `redact.deny` rule added since, never leaks).
Card text is data, never instructions: the prompt says so, and whatever the model answers is only ever used
as lines of text citing ids it was shown. Every cited id is checked: one written in another case, in brackets
or inline in the text is fixed; a line citing none of the shown cards is dropped. An answer that is not JSON,
cut off, has no valid line, or drops more lines than it keeps (a hostile or confused model) raises Fallback,
and consolidate writes the offline synopsis instead, with a warning: never a half-written card.

`basis` is a hash of what the model would be shown (and the model's name): a project whose latest synopsis
was written by the model from the same basis is unchanged, so a rerun makes no call and writes nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import Any

from memvault.errors import LLMError
from memvault.model import Card
from memvault.vault.store import Vault

PROMPT_VERSION = "1"
MAX_LINES = 30  # lines a synopsis may hold: it is pinned in every context pack
LINE_CHARS = 160
# Which cards come first when the budget is short: what a synopsis lists, then what explains it.
PRIORITY = {"rule": 0, "decision": 0, "state": 0, "thread": 1, "question": 1, "preference": 2, "fact": 2}
SECTIONS = ("decisions", "state", "open", "rules")
_SECTION_WORDS = {"decision": "decisions", "decisions": "decisions", "state": "state", "current state": "state",
                  "open": "open", "open threads": "open", "threads": "open", "thread": "open",
                  "questions": "open", "rules": "rules", "rule": "rules"}
_ID = re.compile(r"\bc-\d{8}-[0-9a-f]{6,64}\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_CJK = re.compile(r"[\u3400-\u9fff]")
_USER_MARK = "=== user ==="
LANGUAGE = {"en": "English", "zh": "Chinese (简体中文)"}


class Fallback(Exception):
    """The model gave no usable answer; `reason` names why, never quoting the answer."""

    def __init__(self, reason: str, kind: str = "invalid_output"):
        super().__init__(reason)
        self.reason = reason
        self.kind = kind  # llm_error (the endpoint failed) | invalid_output (the answer is unusable)


def load_prompt(name: str) -> tuple[str, str]:
    """(system, user template) of prompts/<name>.md."""
    text = resources.files("memvault.distill").joinpath(f"prompts/{name}.md").read_text(encoding="utf-8")
    system, _, user = text.partition(_USER_MARK)
    return system.strip() + "\n", user.strip() + "\n"


def language(cards: Iterable[Card]) -> str:
    """"zh" when most of the cards' titles hold Chinese, else "en" (the rule of the offline synopsis)."""
    cards = list(cards)
    return "zh" if 2 * sum(bool(_CJK.search(c.title)) for c in cards) > len(cards) else "en"


def flat(text: str, cap: int) -> str:
    text = _SPACE.sub(" ", text or "").strip()
    return text if len(text) <= cap else text[: cap - 1].rstrip() + "…"


def card_line(card: Card) -> str:
    """How a card is shown to the model: its id first, so the model can cite it."""
    state = f" [{card.subject}.{card.field}={card.value}]" if card.kind == "state" and card.subject else ""
    body = flat(card.body, 160)
    return (f"[{card.id}] {card.kind}{state} · {flat(card.title, 160)} ({(card.valid_from or card.created)[:10]})"
            + (f" — {body}" if body else ""))


def _day(card: Card) -> str:
    return (card.valid_from or card.created or "")[:10]


def select(cards: Iterable[Card], budget_tokens: int, *, by_priority: bool) -> list[Card]:
    """The cards a model is shown, in order, within the token budget: newest first, and with `by_priority`
    the kinds a synopsis lists before the others. Deterministic (ties go to the id)."""
    from memvault.distill.llm import estimate_tokens

    ordered = sorted(cards, key=lambda c: (_day(c), c.created, c.id), reverse=True)
    if by_priority:
        ordered.sort(key=lambda c: PRIORITY.get(c.kind, 3))  # stable: newest first within a tier
    out, used = [], 0
    for card in ordered:
        cost = estimate_tokens(card_line(card)) + 1
        if out and used + cost > budget_tokens:
            break
        out.append(card)
        used += cost
    return out


def basis(shown: Sequence[Card], model: str, what: str) -> str:
    """A hash of exactly what the model is shown, and which model: the same basis gives the same prompt."""
    text = "\x1f".join([what, PROMPT_VERSION, model, *(card_line(c) for c in shown)])
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def fence(*parts: str) -> str:
    return "<<<UNTRUSTED-CARDS-" + hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")
                                                  ).hexdigest()[:12] + ">>>"


def fill(template: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", value)
    return template


class Asker:
    """One endpoint for a consolidate or reflect run: counted calls, redacted prompts, usage summed."""

    def __init__(self, vault: Vault, env: Mapping[str, str], **client_kw: Any):
        from memvault.distill.llm import Client
        from memvault.distill.llm_engine import llm_settings
        from memvault.redact import engine as redact

        settings = llm_settings(vault, env)
        self.model = settings.model
        self.client = Client(settings, **client_kw)
        self.rules = redact.compile_rules(list(vault.config.section("redact").get("deny") or []))
        self.usage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}

    def redact(self, text: str) -> str:
        from memvault.redact import engine as redact

        return redact.redact(text, self.rules).text if text else text

    def ask(self, system: str, user: str) -> Any:
        """The model's JSON answer. Raises Fallback (endpoint error, cut off, not JSON)."""
        from memvault.distill.llm import LLMFailure, extract_json
        from memvault.distill.llm_engine import _looks_cut

        # Defence in depth: cards are redacted when written, but rules may have grown since, or a card may
        # have been written by hand. Nothing unredacted leaves the machine.
        messages = [{"role": "system", "content": self.redact(system)}, {"role": "user", "content": self.redact(user)}]
        self.usage["calls"] += 1
        try:
            reply = self.client.complete(messages)
        except (LLMFailure, LLMError) as exc:
            raise Fallback(exc.message, "llm_error") from None
        self.usage["prompt_tokens"] += reply.prompt_tokens
        self.usage["completion_tokens"] += reply.completion_tokens
        if reply.finish_reason == "length" or _looks_cut(reply.text):
            raise Fallback(f"the answer was cut off at llm.max_output_tokens ({self.client.settings.max_output_tokens})")
        try:
            return extract_json(reply.text)
        except ValueError as exc:
            raise Fallback(f"the answer is not JSON ({exc})") from None

    def close(self) -> None:
        self.client.close()


def cited(item: Mapping[str, Any], shown: Mapping[str, Card], text: str) -> tuple[list[str], int]:
    """(the shown card ids an answer item cites, how many cited ids were not shown). An id in another case,
    in brackets, or written inline in the text instead of under "cards" is fixed; an unknown one is dropped."""
    raw = item.get("cards")
    given = [str(x) for x in raw] if isinstance(raw, list) else ([str(raw)] if isinstance(raw, str) else [])
    out, unknown = [], 0
    for value in given + _ID.findall(text):
        found = _ID.search(value.strip().strip("[]").lower())
        cid = found.group(0).lower() if found else ""
        if cid in shown:
            if cid not in out:
                out.append(cid)
        elif value in given:
            unknown += 1
    return out, unknown


def clean_text(text: Any, cap: int) -> str:
    """A line of the model's text with any card id (or bracket) it wrote removed: ids are cited by us."""
    if not isinstance(text, str):
        return ""
    text = _ID.sub("", text).replace("[", "(").replace("]", ")").replace("()", "").replace("( )", "")
    return flat(text, cap).strip(" ,;:-")


def read_lines(data: Any, shown: Mapping[str, Card]) -> tuple[dict[str, list[tuple[str, list[str]]]], int, int]:
    """Checked synopsis lines by section from the model's JSON: ({section: [(text, ids)]}, kept, dropped).
    Raises Fallback when the answer is not the asked shape, keeps no line, or drops more than it keeps."""
    lines = data.get("lines") if isinstance(data, dict) else None
    if not isinstance(lines, list):
        raise Fallback('the answer has no "lines" list')
    out: dict[str, list[tuple[str, list[str]]]] = {s: [] for s in SECTIONS}
    kept = dropped = 0
    seen: set[str] = set()
    for item in lines:
        if kept >= MAX_LINES:
            dropped += 1
            continue
        if not isinstance(item, dict):
            dropped += 1
            continue
        section = _SECTION_WORDS.get(str(item.get("section") or "").strip().lower())
        raw_text = item.get("text") if isinstance(item.get("text"), str) else ""
        text = clean_text(raw_text, LINE_CHARS)
        ids, unknown = cited(item, shown, raw_text)
        if section is None or not text or not ids or text.casefold() in seen:
            dropped += 1
            continue
        seen.add(text.casefold())
        out[section].append((text, ids))
        kept += 1
    if kept == 0:
        raise Fallback("no line of the answer cites a card it was shown")
    if dropped > kept:
        raise Fallback(f"{dropped} of {kept + dropped} lines of the answer were unusable (unknown ids or shape)")
    return out, kept, dropped


def render(lines: Mapping[str, list[tuple[str, list[str]]]], headings: Mapping[str, str]) -> str:
    """The synopsis body, in the offline synopsis's shape: `## Heading`, then `- text [c-…, c-…]`."""
    parts = []
    for section in SECTIONS:
        if lines.get(section):
            body = "\n".join(f"- {text} [{', '.join(ids)}]" for text, ids in lines[section])
            parts.append(f"## {headings[section]}\n{body}")
    return "\n\n".join(parts)


def write(asker: Asker, project: str, shown: Sequence[Card], lang: str,
          headings: Mapping[str, str]) -> tuple[str, int, int]:
    """(body, lines, distinct cards cited) of the model's synopsis of `project` from the `shown` cards.
    Raises Fallback when the answer is unusable."""
    system, user = load_prompt("synopsis")
    listing = "\n".join(card_line(c) for c in shown)
    values = {"project": project, "language": LANGUAGE[lang], "max_lines": str(MAX_LINES),
              "fence": fence(listing), "count": str(len(shown)), "cards": listing}
    data = asker.ask(fill(system, values), fill(user, values))
    lines, kept, _dropped = read_lines(data, {c.id: c for c in shown})
    redacted = {s: [(asker.redact(t), ids) for t, ids in items] for s, items in lines.items()}
    cards = {cid for items in redacted.values() for _, ids in items for cid in ids}
    return render(redacted, headings), kept, len(cards)
