"""Secrets at rest: find them in a vault file's text and redact them in place (doctor, doctor --fix).

Only secret rules count: an email or a home directory in a card is not damage. Positions and rule ids are
reported, never the matched text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memvault.redact import engine as redact

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


def json_line_findings(text: str, rules: redact.Rules) -> list[tuple[int, list[redact.Finding]]]:
    """(line number, findings) for each line of a JSON-lines file that holds a secret.

    A finding must show both in the raw line and in the line's decoded string values, under the same rule.
    Raw alone is wrong: JSON writes a newline as the two characters `\\n`, so `私钥：\\n[REDACTED:private-key]`
    looks like a key and its value. Decoded alone is wrong too: a source reference such as
    `/tmp/secrets-chat.jsonl:55` ends its string, and `secrets…:55` at the end of a line reads as an assignment.
    A line that is not JSON is judged on its raw text (doctor reports it as damage anyway).
    """
    out = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        raw = find_secrets(line, rules)
        if not raw:
            continue
        try:
            strings = list(_strings(json.loads(line)))
        except ValueError:
            out.append((lineno, raw))
            continue
        rule_ids = {f.rule for f in raw}
        decoded = [f for string in strings for f in find_secrets(string, rules) if f.rule in rule_ids]
        if decoded:
            out.append((lineno, decoded))
    return out


def _strings(data: Any):
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for v in data.values():
            yield from _strings(v)
    elif isinstance(data, list):
        for v in data:
            yield from _strings(v)


def redact_json_lines(text: str, rules: redact.Rules, dump) -> str:
    """JSON-lines text (episodes, journal, audit) with secrets replaced; every line stays valid JSON.

    Only the lines json_line_findings flags change: they are written again with `dump` (the layout memvault
    writes), their strings redacted. Other lines keep their bytes.
    """
    lines = text.split("\n")
    for lineno, found in json_line_findings(text, rules):
        line = lines[lineno - 1]
        try:
            lines[lineno - 1] = dump(_redact_obj(json.loads(line), rules))
        except ValueError:
            lines[lineno - 1] = _replace(line, find_secrets(line, rules))
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
