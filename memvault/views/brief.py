"""brief: the session-start memory of one project, for an agent to read before the first prompt.

`memvault context` with no question, the agents' SessionStart hook and the MCP `brief` prompt all give it: the
project's latest synopsis, its rules and preferences (and the personal ones, project null), its open threads and
questions, and its newest decisions, within a token budget, in that order of importance. It is fenced and labelled
as reference data exactly like a context pack (memvault.fence's header and fence), redacted again on the
way out, one line per card (newlines collapsed, so no card text stands on a line of its own, where the fence is).

The project comes from `--project`, else from the working folder (`project_for`): its name, as agents' logs name
their turns' project (the last part of the working folder), when the vault knows that project; else the name of
the git top folder above it when the vault knows that one; else the folder's name (the brief then holds only the
personal cards).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault import fence
from memvault.distill.llm import estimate_tokens
from memvault.errors import NoMatch, UsageError
from memvault.fence import HEADER
from memvault.redact import engine as redact
from memvault.search.index import Index
from memvault.vault.store import Vault
from memvault.views.context import MIN_BUDGET
from memvault.views.text import CJK, beyond_title, flatten

# (section, kinds, most cards, share of the room it may take before later sections had their turn)
SECTIONS = (
    ("synopsis", ("synopsis",), 1, 0.35),
    ("rules", ("rule",), 40, 0.5),
    ("preferences", ("preference",), 40, 0.5),
    ("threads", ("thread", "question"), 20, 0.6),
    ("decisions", ("decision",), 20, 1.0),
)
TITLES = {
    "en": {"synopsis": "Where the project stands", "rules": "Rules", "preferences": "Preferences",
           "threads": "Open threads and questions", "decisions": "Newest decisions"},
    "zh": {"synopsis": "项目现状", "rules": "规则", "preferences": "偏好", "threads": "进行中的事和未决问题",
           "decisions": "最新决定"},
}
LEAD = {"en": "Memory brief for project {project} (memvault): what earlier sessions settled.",
        "zh": "项目 {project} 的记忆简报（memvault）：之前的会话定下的事。"}
SYNOPSIS_CHARS = 1200
BODY_CHARS = 200


@dataclass(frozen=True)
class BriefEntry:
    id: str
    kind: str
    section: str
    title: str
    date: str
    tokens: int
    line: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "section": self.section, "title": self.title,
                "date": self.date, "tokens": self.tokens}


@dataclass(frozen=True)
class Brief:
    project: str | None
    budget: int
    used_tokens: int
    entries: tuple[BriefEntry, ...]
    omitted: int
    pack: str
    lang: str = "en"

    def to_json(self) -> dict[str, Any]:
        return {"brief": True, "query": "", "project": self.project, "budget": self.budget,
                "used_tokens": self.used_tokens, "omitted": self.omitted,
                "cards": [e.to_json() for e in self.entries], "pack": self.pack}


def build_brief(vault: Vault, project: str | None, *, budget: int | None = None,
                max_chars: int | None = None) -> Brief:
    """The brief of `project` (None: every project's cards). Raises UsageError for a budget too small,
    NoMatch (exit 1) when there is nothing to say. `max_chars` caps the text too (an agent's hook): whole card
    lines go, the last section's first, so the cut is at a line and the fence stays closed."""
    if budget is None:
        budget = int(vault.config.section("context").get("budget_tokens", 2000))
    if budget < MIN_BUDGET:
        raise UsageError(f"--budget must be at least {MIN_BUDGET} tokens")
    rules = vault.rules
    scfg = vault.config.section("search")
    kinds = [k for _s, ks, _n, _f in SECTIONS for k in ks]
    with Index(vault.root, str(scfg.get("chinese", "bigram")), int(scfg.get("stat_all_below", 5000))) as idx:
        idx.refresh()
        rows = idx.pinned_rows(kinds, project)
    cards: dict[str, dict[str, Any]] = {}
    for row in rows:
        c = _card(row)
        if c["kind"] in ("synopsis", "thread", "question", "decision") and project and c["project"] != project:
            continue  # personal cards (project null) bring their rules and preferences, not others' threads
        cards.setdefault(c["id"], c)
    if not cards:
        where = f"project {project!r}" if project else "the vault"
        raise NoMatch(f"nothing to brief for {where}: no synopsis, rule, preference, thread, question or "
                      "decision card")
    lang = _language(cards.values())
    overhead = estimate_tokens(HEADER[lang].format(fence=fence.mark("0")) + "\n") + 2 * estimate_tokens(
        fence.mark("0") + "\n") + estimate_tokens(LEAD[lang].format(project=project or "-") + "\n")
    room = budget - overhead
    chosen: list[BriefEntry] = []
    used = 0
    for section, skinds, most, share in SECTIONS:
        mine = sorted((c for c in cards.values() if c["kind"] in skinds), key=_newest_first)[:most]
        cap = room - used if share >= 1 else min(room - used, int(room * share))
        spent = 0
        for c in mine:
            head = 0 if any(e.section == section for e in chosen) else estimate_tokens(
                f"## {TITLES[lang][section]}\n")
            line = redact.redact(_line(c, SYNOPSIS_CHARS if section == "synopsis" else BODY_CHARS), rules).text
            cost = estimate_tokens(line + "\n") + head
            if spent + cost > cap:
                continue  # a smaller card further down may still fit
            spent += cost
            chosen.append(BriefEntry(id=c["id"], kind=c["kind"], section=section,
                                     title=redact.redact(flatten(c["title"], 160), rules).text, date=c["date"],
                                     tokens=cost - head, line=line))
        used += spent
    if not chosen:
        raise UsageError(f"--budget {budget} is too small for even one card")
    while True:
        text = _render(chosen, project, lang, rules)
        used = estimate_tokens(text)
        if (used <= budget and (max_chars is None or len(text) <= max_chars)) or len(chosen) == 1:
            break
        # Trigger: the whole-brief redaction grew the text, or it is longer than the host takes. Outcome: drop
        # the last card (the least useful section's oldest); drop whole lines first when far over.
        over = len(text) - max_chars if max_chars is not None else 0
        if over <= 0:
            chosen.pop()
        while over > 0 and len(chosen) > 1:
            over -= len(chosen.pop().line) + 1
    if max_chars is not None and len(text) > max_chars:
        raise NoMatch(f"even one card of the brief is longer than {max_chars} characters")
    return Brief(project=project, budget=budget, used_tokens=used, entries=tuple(chosen),
                 omitted=len(cards) - len(chosen), pack=text, lang=lang)


def project_for(vault: Vault, folder: str | Path) -> str:
    """The project a working folder stands for (see the module's note)."""
    folder = Path(folder).expanduser()
    names = [folder.name or str(folder)]
    top = _git_top(folder)
    if top is not None and top.name and top.name not in names:
        names.append(top.name)
    scfg = vault.config.section("search")
    with Index(vault.root, str(scfg.get("chinese", "bigram")), int(scfg.get("stat_all_below", 5000))) as idx:
        idx.refresh()
        known = idx.project_counts()
    return next((n for n in names if known.get(n)), names[0])


def _git_top(folder: Path) -> Path | None:
    for p in (folder, *folder.parents):
        if (p / ".git").exists():
            return p
    return None


def _card(row: tuple) -> dict[str, Any]:
    cid, kind, title, body, project, _status, created, valid_from, _succ, _tags = row
    return {"id": cid, "kind": kind, "title": title or "", "body": body or "", "project": project,
            "created": created or "", "date": (valid_from or created or "")[:10]}


def _newest_first(c: dict[str, Any]) -> tuple:
    return tuple(-ord(ch) for ch in (c["date"] + c["created"])), c["id"]


def _language(cards) -> str:
    titles = [c["title"] for c in cards]
    cjk = sum(1 for t in titles if CJK.search(t))
    return "zh" if titles and cjk * 2 > len(titles) else "en"


def _line(c: dict[str, Any], body_chars: int) -> str:
    meta = [c["id"]] + ([c["date"]] if c["date"] else []) + ([flatten(c["project"], 40)] if c["project"] else [])
    if c["kind"] == "question":
        meta.append("question")
    text = f"- [{' · '.join(meta)}] {flatten(c['title'], 160)}"
    body = flatten(beyond_title(c["title"], c["body"]), body_chars)
    if body and body != flatten(c["title"], 160):
        text += ("：" if CJK.search(c["title"]) else ": ") + body
    return text


def _render(chosen: list[BriefEntry], project: str | None, lang: str, rules: redact.Rules) -> str:
    lines = [LEAD[lang].format(project=flatten(project or "-", 80))]
    for section, *_ in SECTIONS:
        mine = [e for e in chosen if e.section == section]
        if mine:
            lines.append(f"## {TITLES[lang][section]}")
            lines.extend(e.line for e in mine)
    inner = "\n".join(lines)
    return redact.redact(fence.wrap(inner, HEADER[lang]), rules).text

__all__ = ["Brief", "BriefEntry", "build_brief", "project_for"]
