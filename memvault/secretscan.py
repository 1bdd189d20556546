"""Secrets at rest: find them in a vault file's text and redact them in place (doctor, doctor --fix).

Only secret rules count: an email or a home directory in a card is not damage. Positions and rule ids are
reported, never the matched text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memvault import redact

SOFT_RULES = frozenset({"email", "home-dir"})
# A YAML plain scalar starts here: `key: ` or `- ` with nothing else before it on the line.
_SCALAR_START = re.compile(r"^[ \t]*(?:-[ \t]+|[^#'\"\n][^#\n]*?:[ \t]+)$")


def find_secrets(text: str, rules: redact.Rules) -> list[redact.Finding]:
    """Secret findings in `text` (spans and 1-based lines refer to `text`)."""
    if not text:
        return []
    return [f for f in redact.redact(text, rules).findings if f.rule not in SOFT_RULES]


_BATCH_SEP = "\n\x00\n"
_BATCH_CHARS = 1 << 20


def scan_files(texts, rules: redact.Rules):
    """(key, findings) for each (key, text) of `texts` that holds a secret.

    Fast path: one redaction pass over a batch of files joined together (~1 MB) instead of one per file, so the
    per-call cost of the rule pre-filter is paid once per batch; a batch with a secret is scanned again file by
    file for exact lines. Nearly every batch of a healthy vault is clean.
    """
    batch: list[tuple[object, str]] = []
    size = 0

    def flush():
        if batch and find_secrets(_BATCH_SEP.join(t for _, t in batch), rules):
            for key, text in batch:
                found = find_secrets(text, rules)
                if found:
                    yield key, found
        batch.clear()

    for key, text in texts:
        batch.append((key, text))
        size += len(text)
        if size >= _BATCH_CHARS:
            yield from flush()
            size = 0
    yield from flush()


def _marker(rule: str) -> str:
    return f"[REDACTED:{rule}]"


def _replace(text: str, findings: list[redact.Finding], yaml_quote: bool = False) -> str:
    out, pos = [], 0
    for f in sorted(findings, key=lambda f: f.start):
        if f.start < pos:
            continue
        line_start = text.rfind("\n", 0, f.start) + 1
        if yaml_quote and _SCALAR_START.match(text[line_start:f.start]):
            # `api_key: [REDACTED:x]` would parse as a list: quote the value up to the end of its line.
            line_end = text.find("\n", f.end)
            line_end = len(text) if line_end < 0 else line_end
            rest, comment = re.match(r"(.*?)([ \t]+#.*)?$", text[f.end:line_end].rstrip()).groups()
            out.append(text[pos:f.start])
            out.append("'" + (_marker(f.rule) + rest).replace("'", "''") + "'" + (comment or ""))
            pos = line_end
            continue
        out.append(text[pos:f.start])
        out.append(_marker(f.rule))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def redact_yaml_text(text: str, rules: redact.Rules) -> str:
    """YAML (memvault.yaml, or a card/page whose front matter no longer parses): secrets replaced in place,
    a value that would start with the marker quoted."""
    return _replace(text, find_secrets(text, rules), yaml_quote=True)


def redact_json_lines(text: str, rules: redact.Rules, dump) -> str:
    """JSON-lines text (episodes, journal, audit) with secrets replaced; every line stays valid JSON.

    A line is edited in place when the result still parses (bytes around the secret untouched); otherwise
    it is parsed, redacted string by string, and written again with `dump`.
    """
    lines = text.split("\n")
    for i, line in enumerate(lines):
        found = find_secrets(line, rules)
        if not found:
            continue
        edited = _replace(line, found)
        try:
            json.loads(edited)
        except ValueError:
            try:
                edited = dump(_redact_obj(json.loads(line), rules))
            except ValueError:
                pass  # not JSON at all: the plain edit stands (doctor reports the line anyway)
        lines[i] = edited
    return "\n".join(lines)


def _redact_obj(data: Any, rules: redact.Rules) -> Any:
    if isinstance(data, str):
        found = find_secrets(data, rules)
        return _replace(data, found) if found else data
    if isinstance(data, dict):
        return {k: _redact_obj(v, rules) for k, v in data.items()}
    if isinstance(data, list):
        return [_redact_obj(v, rules) for v in data]
    return data
