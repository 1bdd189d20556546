"""Privacy filter: text -> (clean text, findings). Pure: stdlib, memvault.errors and memvault.redact.

Runs the rule table (memvault.redact.rules) over a text and rewrites what it finds. Overlapping secret matches
merge into one redaction named after the most specific rule. Emails and home directories yield to secrets.
Existing markers (``[REDACTED:…]``, ``[email]``) and ``data:image/…;base64,`` payloads are never matched
again, which keeps ``redact`` idempotent. Users add rules as regexes (memvault.yaml `redact.deny`).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import namedtuple
from collections.abc import Iterable, Iterator, Sequence

from memvault.errors import UsageError
from memvault.redact.finders import Finder, Span
from memvault.redact.rules import BUILTIN, EMAIL, HOME, SECRET, Rule
from memvault.redact.shapes import Lazy, distinct_lines

TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Finding", "Redaction", "Rules", "compile_rules", "default_rules", "redact", "redact_batch",
           "count_by_rule"]


# A named tuple, not a dataclass (`dataclasses` costs ~8 ms at search start-up) nor typing.NamedTuple (`typing`
# ~2.3 ms): rule (its id), start and end (the span in the ORIGINAL text), line (1-based, in the original text),
# family (the rule's family: provider-token, config, prose, command-line, …).
Finding = namedtuple("Finding", "rule start end line family", defaults=("",))
# text (the clean text), findings (tuple of Finding)
Redaction = namedtuple("Redaction", "text findings")


class Rules:
    """A compiled rule set. Opaque; build with compile_rules() or default_rules() and reuse."""

    __slots__ = ("_rules", "_gates", "_index")

    def __init__(self, rules: Sequence[Rule]):
        self._rules = tuple(rules)
        # Each rule runs only on a text holding one of its keywords: each keyword is looked up (str `in`, memchr
        # speed) at most once per text, and not at all once another keyword of the same gate was found.
        self._gates = tuple(tuple(dict.fromkeys(r.keywords)) for r in self._rules)
        self._index: dict[str, int] = {}

    def index_of(self, name: str) -> int:
        """The rule that found a secret named `name` (a provider's name: the one-pass provider-token rule)."""
        if not self._index:
            for i, r in enumerate(self._rules):
                self._index.setdefault(r.id, i)
        return self._index.get(name, self._index.get("provider-token", 0))

    def __repr__(self) -> str:
        return f"Rules({len(self._rules)} rules)"


_MARKER = Lazy(r"\[REDACTED:[a-z0-9-]{1,64}\]|\[email\]")
_DATA_IMAGE = Lazy(r"data:image/[\w.+-]{1,40};base64,[A-Za-z0-9+/=\s]++")
_REPLACEMENT = {EMAIL: "[email]", HOME: "~"}
# Spelled out: importing `string` compiles string.Template's regex, at every search start-up.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# --------------------------------------------------------------------------- public API

def compile_rules(deny: Sequence[str] = ()) -> Rules:
    """Built-in rules plus the user's deny regexes (memvault.yaml `redact.deny`), ids user-deny-1, -2, …"""
    extra = []
    for i, pattern in enumerate(deny, start=1):
        try:
            rx = re.compile(pattern)
        except (re.error, TypeError) as exc:
            # The pattern is configuration, not captured text, but its index is all a person needs.
            raise UsageError(f"redact.deny pattern #{i} is not a valid regular expression: {exc}") from None
        extra.append(Rule(f"user-deny-{i}", _deny_finder(rx), (), family="user-deny"))
    return Rules(BUILTIN + tuple(extra))


def _deny_finder(rx: re.Pattern[str]) -> Finder:
    def find(text: str, low: str) -> Iterator[Span]:
        for m in rx.finditer(text):
            if m.end() > m.start():
                yield m.span()

    return find


@functools.cache
def default_rules() -> Rules:
    return Rules(BUILTIN)


def redact(text: str, rules: Rules | None = None, known: dict[str, str] | None = None) -> Redaction:
    """Replace every secret, email and home directory in `text`; spans in findings refer to `text`.
    Every copy of a secret found goes too, wherever it stands; so does every copy of a `known` value
    (value -> rule id: secrets found in other texts of the same batch, see redact_batch)."""
    rules = rules or default_rules()
    low = text.lower()
    if len(low) != len(text):
        # A few characters lower to two (İ -> i̇); anchors found in `low` must index `text`.
        low = text.translate(_ASCII_LOWER)
    protected = [m.span() for m in _MARKER.finditer(text)] if "[" in text else []
    if "data:image/" in text:
        protected += [m.span() for m in _DATA_IMAGE.finditer(text)]
        protected.sort()

    secrets: list[tuple[int, int, int, str]] = []  # start, end, rule index (lower = more specific), name
    soft: list[tuple[int, int, int]] = []
    seen: dict[str, bool] = {}  # keyword -> in the text; each looked up once, and only while a gate needs it
    hay = distinct_lines(low)
    for idx, rule in enumerate(rules._rules):
        gate = rules._gates[idx]
        if gate and not any(seen[k] if k in seen else seen.setdefault(k, k in hay) for k in gate):
            continue
        for span in rule.find(text, low):
            # A finder may name each span (tokens.find_prefixed: one pass, many providers): (start, end, rule id).
            name = span[2] if len(span) == 3 else rule.id
            for ps, pe in _outside(span[0], span[1], text, protected):
                if rule.kind == SECRET:
                    secrets.append((ps, pe, idx, name))
                else:
                    soft.append((ps, pe, idx))
    if secrets or known:
        # copies never land inside a marker ([REDACTED:…] stays whole: redacting twice changes nothing)
        secrets += [(ps, pe, idx, name) for s, e, idx, name in _copies(text, secrets, known, rules)
                    for ps, pe in _outside(s, e, text, protected)]
    if not secrets and not soft:
        return Redaction(text, ())

    chosen = _merge(secrets)
    chosen += [(s, e, idx, rules._rules[idx].id) for s, e, idx in _fit(soft, chosen)]
    chosen.sort()

    out: list[str] = []
    findings: list[Finding] = []
    pos, line = 0, 1
    for s, e, idx, name in chosen:
        rule = rules._rules[idx]
        out.append(text[pos:s])
        out.append(_REPLACEMENT.get(rule.kind) or f"[REDACTED:{name}]")
        line += text.count("\n", pos, s)
        findings.append(Finding(name, s, e, line, rule.family))
        line += text.count("\n", s, e)
        pos = e
    out.append(text[pos:])
    return Redaction("".join(out), tuple(findings))


def redact_batch(texts: Sequence[str], rules: Rules | None = None) -> list[Redaction]:
    """redact() of each text, and every secret found in one text redacted in all of them (the fields of a
    turn, the turns of one capture): a key quoted once after `token =` and pasted bare elsewhere goes both times."""
    rules = rules or default_rules()
    done = [redact(t, rules) for t in texts]
    found: dict[str, str] = {}
    for t, r in zip(texts, done):
        for f in r.findings:
            if f.family not in _CONTEXT_FREE and f.end - f.start >= COPY_MIN:
                found.setdefault(t[f.start:f.end], f.rule)
    if not found:
        return done
    many = len(found) > _FIND_MAX
    out = []
    for t, r in zip(texts, done):
        own = {t[f.start:f.end] for f in r.findings}
        if many:  # a whole piece of the text (see _copies), found by set intersection in C
            cand = set(_PIECE.findall(t)).intersection(found).difference(own)
        else:
            cand = [v for v in found if v in t and v not in own]
        if cand:
            r = redact(t, rules, {v: found[v] for v in cand})
        out.append(r)
    return out


def count_by_rule(findings: Iterable[Finding]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.rule] = counts.get(f.rule, 0) + 1
    return dict(sorted(counts.items()))


def redact_tree(data: Any, rules: Rules | None = None) -> Any:
    """Every string inside nested dicts/lists/tuples redacted: output of reading commands (show, timeline,
    graph) is filtered once more, for vaults written by older versions or by hand."""
    if isinstance(data, str):
        return redact(data, rules).text if data else data
    if isinstance(data, dict):
        return {k: redact_tree(v, rules) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(redact_tree(v, rules) for v in data)
    return data


# --------------------------------------------------------------------------- copies of a secret

COPY_MIN = 6  # shorter values (a PIN, "1234") would hit ordinary words and numbers elsewhere
# A provider's token is found by its shape wherever it stands: its copies need no search of their own. Values
# found by their context (a key name, a flag, a sentence) do: their copies elsewhere have no such context.
_CONTEXT_FREE = frozenset({"provider-token", "personal-data"})
_COPY_ANYWHERE = 16  # shorter copies must stand apart (not inside a longer word or number)
_FIND_MAX = 64  # up to this many distinct secret values, one str.find scan each (~0.1 ms per MB)
_PIECE = Lazy(r"[^\s\"'`<>()\[\]{},;|=:&?/@]{6,}+")


def _copies(text: str, secrets: list[tuple[int, int, int, str]], known: dict[str, str] | None,
            rules: Rules) -> list[tuple[int, int, int, str]]:
    """Spans of every other occurrence of a secret value found in `text` (or `known` from the batch)."""
    values: dict[str, tuple[int, str]] = {}
    for s, e, idx, name in secrets:
        rule = rules._rules[idx]
        if e - s >= COPY_MIN and rule.kind == SECRET and rule.family not in _CONTEXT_FREE:
            values.setdefault(text[s:e], (idx, name))
    for v, name in (known or {}).items():
        if v not in values and len(v) >= COPY_MIN:
            values[v] = (rules.index_of(name), name)
    out = []
    n = len(text)
    if len(values) > _FIND_MAX:
        # Many secrets (a detector's test file): one pass over the text's pieces instead of a search per value;
        # a copy is then a whole piece (between spaces, quotes, brackets, = : & ? / @).
        get = values.get
        for m in _PIECE.finditer(text):
            hit = get(m[0])
            if hit is not None:
                out.append((m.start(), m.end(), *hit))
        return out
    for v, (idx, name) in values.items():
        i = text.find(v)
        if i >= 0 and text.find(v, i + 1) < 0 and v not in (known or ()):
            continue  # the one occurrence, already found
        while i >= 0:
            e = i + len(v)
            if len(v) >= _COPY_ANYWHERE or ((i == 0 or not text[i - 1].isalnum())
                                            and (e == n or not text[e].isalnum())):
                out.append((i, e, idx, name))
            i = text.find(v, i + 1)
    return out


# --------------------------------------------------------------------------- span arithmetic

def _outside(s: int, e: int, text: str, protected: list[Span]) -> Iterator[Span]:
    """The parts of [s, e) outside protected spans that still hold something worth hiding."""
    if not protected:
        yield s, e
        return
    i = bisect.bisect_right(protected, (s, len(text) + 1)) - 1
    i = max(i, 0)
    cur = s
    while i < len(protected) and protected[i][0] < e:
        ps, pe = protected[i]
        if pe > cur:
            if ps > cur:
                yield from _worth(cur, min(ps, e), text)
            cur = max(cur, pe)
        i += 1
    if cur < e:
        yield from _worth(cur, e, text)


def _worth(s: int, e: int, text: str) -> Iterator[Span]:
    if any(c.isalnum() for c in text[s:e]):
        yield s, e


def _merge(spans: list[tuple[int, int, int, str]]) -> list[tuple[int, int, int, str]]:
    """Union overlapping secret spans; the merged span keeps the most specific rule (and its name)."""
    spans.sort()
    merged: list[list] = []
    for s, e, idx, name in spans:
        if merged and s < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], e)
            if idx < last[2]:
                last[2], last[3] = idx, name
        else:
            merged.append([s, e, idx, name])
    return [(s, e, idx, name) for s, e, idx, name in merged]


def _fit(soft: list[tuple[int, int, int]], taken: list[tuple[int, int, int, str]]) -> list[tuple[int, int, int]]:
    """Emails and home directories that overlap no secret and no earlier soft match."""
    starts = [t[0] for t in taken]
    ends = [t[1] for t in taken]
    out: list[tuple[int, int, int]] = []
    last_end = -1
    for s, e, idx in sorted(soft, key=lambda t: (t[0], t[2])):
        if s < last_end:
            continue
        i = bisect.bisect_right(starts, s) - 1
        if i >= 0 and ends[i] > s:
            continue
        j = bisect.bisect_left(starts, s)
        if j < len(starts) and starts[j] < e:
            continue
        out.append((s, e, idx))
        last_end = e
    return out
