"""What capture removes or refuses before a turn is redacted and stored: the capture settings, compiled once.

- `<private>…</private>` spans a person marked are dropped first, in every format, and replaced by the mark
  `[private]` (so a reader sees that something was left out, never what). An opening tag with no closing tag
  drops the rest of that message. Nested tags count by depth; a stray closing tag is dropped.
- memvault's own fenced memory (a brief or context pack an agent was given, memvault.fence, also when a host
  HTML-escaped it) and the blocks hosts wrap around what they inject (`<hook_context>`, `<session_context>`) are
  removed, so the brief never comes back as a turn or a card; `strip_tags` blocks (`<system-reminder>`,
  `<think>` …) are removed; `skip_patterns` mark harness injections.
- `memvault:off` in a person's message stops capture of that session from that message on; `memvault:on` starts
  it again. Both messages themselves are never stored. (The rule is the same whether a log is captured once at
  the end or after every turn, so an agent's hook and a later `memvault capture` of the same log agree.)
- `capture.exclude`: projects (globs) and working folders (globs; a folder covers everything below it) whose
  turns are never stored.

Pure: standard library, memvault.fence and memvault.redact only.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from memvault import fence
from memvault.redact import engine as redact

PRIVATE_MARK = "[private]"
# Blocks a host wraps around what it injects into the user's message (Gemini CLI: a hook's additionalContext in
# <hook_context>, its own preamble in <session_context>): never the person's words, whatever capture.strip_tags says.
_HOST_BLOCKS = re.compile(r"<(hook_context|session_context)\b[^>]*>.*?(?:</\1\s*>|\Z)|</(?:hook|session)_context\s*>",
                          re.S | re.I)
_PRIVATE_TAG = re.compile(r"<(/?)private\b[^<>]{0,200}>", re.I)
_SWITCH = re.compile(r"(?<![\w/-])memvault:(off|on)\b", re.I)


@dataclass(frozen=True)
class Cleaned:
    text: str
    private: int = 0  # spans dropped
    unclosed: int = 0  # spans that ran to the end of the message (no closing tag)


def strip_private(text: str) -> Cleaned:
    """`text` without its private spans (each replaced by PRIVATE_MARK), and how many there were."""
    if "<" not in text or not _PRIVATE_TAG.search(text):
        return Cleaned(text)
    out: list[str] = []
    depth = spans = 0
    pos = 0
    for m in _PRIVATE_TAG.finditer(text):
        closing = m.group(1) == "/"
        if depth == 0:
            out.append(text[pos:m.start()])
            if not closing:
                depth, spans = 1, spans + 1
                out.append(PRIVATE_MARK)
            # a closing tag with nothing open: dropped, the text around it stays
        elif closing:
            depth -= 1
        else:
            depth += 1
        pos = m.end()
    unclosed = 1 if depth else 0
    if not depth:
        out.append(text[pos:])
    return Cleaned("".join(out), spans, unclosed)


def switch_in(text: str) -> str | None:
    """"off" or "on" when a person's message holds memvault:off / memvault:on (the last one wins)."""
    found = _SWITCH.findall(text) if "memvault:" in text.lower() else []
    return found[-1].lower() if found else None


@dataclass(frozen=True)
class Hygiene:
    """The capture settings of memvault.yaml, compiled once."""

    strip: re.Pattern | None
    skip: tuple[re.Pattern, ...]
    min_chars: int
    max_chars: int
    sidechains: bool
    max_line_bytes: int
    rules: redact.Rules
    exclude_projects: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, cfg: dict, deny: Iterable[str]) -> "Hygiene":
        tags = [re.escape(t) for t in cfg.get("strip_tags") or []]
        strip = re.compile(rf"<({'|'.join(tags)})\b[^>]*>.*?</\1\s*>", re.S | re.I) if tags else None
        exclude = cfg.get("exclude") or {}
        if not isinstance(exclude, dict):
            exclude = {}
        return cls(
            strip=strip, skip=tuple(re.compile(p) for p in cfg.get("skip_patterns") or []),
            min_chars=int(cfg.get("min_chars", 0)), max_chars=int(cfg.get("max_chars", 0)),
            sidechains=bool(cfg.get("sidechains", False)),
            max_line_bytes=int(cfg.get("max_line_bytes", 8 * 1024 * 1024)),
            rules=redact.compile_rules(list(deny)),
            exclude_projects=tuple(str(p) for p in exclude.get("projects") or [] if str(p).strip()),
            exclude_paths=tuple(_folder(str(p)) for p in exclude.get("paths") or [] if str(p).strip()),
        )

    def clean(self, text: str) -> str:
        return self.cleaned(text).text

    def cleaned(self, text: str) -> Cleaned:
        """Private spans out first (a private span may hold anything, a strip tag included), then memvault's own
        fenced memory, then strip tags."""
        c = strip_private(text)
        out = _HOST_BLOCKS.sub("", c.text) if "_context" in c.text else c.text
        out = fence.strip(out)
        if self.strip is not None and "<" in out:
            out = self.strip.sub("", out)
        return Cleaned(out.strip(), c.private, c.unclosed)

    def is_injection(self, text: str) -> bool:
        return any(p.search(text) for p in self.skip)

    def cap(self, text: str) -> str:
        if self.max_chars and len(text) > self.max_chars:
            cut = len(text) - self.max_chars
            return f"{text[: self.max_chars]}\n…[memvault: cut {cut} chars]"
        return text

    def excluded(self, project: str | None, cwd: str | None = None, source: str | None = None) -> bool:
        """Whether capture.exclude names this project, or the working folder (or input file) it came from."""
        if project and any(fnmatch.fnmatchcase(project, p) for p in self.exclude_projects):
            return True
        return bool(self.exclude_paths) and any(path_excluded(where, self.exclude_paths)
                                                for where in (cwd, source) if where)


def path_excluded(path: str, patterns: Iterable[str]) -> bool:
    """`path` is one of the folders (globs) or below one of them."""
    path = _folder(path)
    return any(fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(path, p.rstrip("/") + "/*")
               for p in map(_folder, patterns))


def _folder(path: str) -> str:
    path = os.path.expanduser(path.strip())
    return path.replace("\\", "/").rstrip("/") or "/"
