"""Reading an agent's instruction or memory file (CLAUDE.md, AGENTS.md, GEMINI.md, Claude Code's MEMORY.md,
.cursorrules, .cursor/rules/*.mdc) into the rules and preferences it states, each with its line. Pure: text in,
`Statement`s out.

What counts as a statement: each list item (nested items carry their label: "Testing: use pytest" under a
"- Testing:" item), and each sentence of a prose paragraph. Headings give the section a statement sits in;
front matter (.mdc), code blocks, HTML comments, tables, `@file` imports and lines too short to state anything
("Overview", "TODO") are skipped. A Markdown link keeps its text (MEMORY.md indexes its notes as links).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

MIN_CHARS = 8  # shorter than this (spaces aside) states nothing: "Notes", "TODO", "见下"


@dataclass(frozen=True)
class Statement:
    line: int  # 1-based line of the file where it begins
    text: str  # one line, Markdown emphasis and link syntax removed
    kind: str  # "rule" or "preference"
    section: str = ""  # the heading it sits under, if any

    @property
    def digest(self) -> str:
        return text_digest(self.text)


def text_digest(text: str) -> str:
    """What identifies a statement across imports: its words, case and spacing aside."""
    norm = " ".join(text.split()).casefold()
    return "sha256:" + hashlib.sha256(norm.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_PREFERENCE = re.compile(
    r"\b(i|we)\s+(prefer|like|love|enjoy|usually)\b|\b(i|we)('d|\s+would)\s+rather\b|\bprefer(s|red|ably)?\b|"
    r"\bpreference\b|\bfavou?rite\b|喜欢|偏好|偏爱|倾向于|更愿意|习惯(用|于)?|最爱", re.I)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_TABLE = re.compile(r"^\s*\|")
_RULE_LINE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")  # ---, ***, ___
_IMPORT = re.compile(r"^\s*(@\S+\s*)+$")  # CLAUDE.md / GEMINI.md imports: @docs/style.md
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|(?<!\w)\*(?!\s)|(?<!\w)_(?!\s))")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(`])|(?<=[。！？；])")


def classify(text: str) -> str:
    return "preference" if _PREFERENCE.search(text) else "rule"


def read_statements(text: str) -> list[Statement]:
    """Every statement of a rules file, in file order, the same text once (its first line)."""
    lines = text.splitlines()
    start = _after_front_matter(lines)
    start, fragment = _cut_start(lines, start)
    out: list[Statement] = []
    section = ""
    in_fence = in_comment = False
    para: list[tuple[int, str]] = []  # a prose paragraph, or the one list item being read (and its wrapped lines)
    in_item = False
    labels: list[tuple[int, str]] = []  # (indent, label) of the "- Label:" items above the current one

    def flush() -> None:
        nonlocal in_item
        if para:
            out.extend(_whole(para, section) if in_item else _sentences(para, section))
            para.clear()
        in_item = False

    for i in range(start, len(lines)):
        raw, lineno = lines[i], i + 1
        if _FENCE.match(raw):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if in_comment or "<!--" in raw:
            raw, in_comment = _drop_comments(raw, in_comment)
        if not raw.strip():
            flush()
            continue
        heading = _HEADING.match(raw)
        if heading:
            flush()
            labels.clear()
            section = _plain(heading.group(2))
            continue
        if _TABLE.match(raw) or _RULE_LINE.match(raw) or _IMPORT.match(raw):
            flush()
            continue
        item = _ITEM.match(raw)
        if item:
            flush()
            indent, said = len(item.group(1).expandtabs(4)), _plain(item.group(2))
            while labels and labels[-1][0] >= indent:
                labels.pop()
            if said.endswith((":", "：")):
                labels.append((indent, said.rstrip(":：").strip()))
                continue
            prefix = ": ".join(label for _i, label in labels)
            para.append((lineno, f"{prefix}: {said}" if prefix else said))
            in_item = True
            continue
        if in_item and not raw[:1].isspace():
            flush()  # a paragraph right under a list item, not indented: not its continuation
        para.append((lineno, _plain(raw)))
    flush()
    if fragment is not None and out and out[0].line == fragment:
        out.pop(0)  # the end of a sentence whose start was cut off
    seen: set[str] = set()
    unique = []
    for st in out:
        if st.digest not in seen:
            seen.add(st.digest)
            unique.append(st)
    return unique


def _after_front_matter(lines: list[str]) -> int:
    """The index of the first line after a `---` front matter block (.mdc rules carry one)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return i + 1
        return len(lines)  # a file cut inside its front matter: nothing stated yet
    return 0


_YAML_KEY = re.compile(r"^[A-Za-z_][\w-]*:(\s|$)")


def _cut_start(lines: list[str], start: int) -> tuple[int, int | None]:
    """Where to begin reading a file that may be cut at its start (a half-saved file, `tail` of one), and the
    line of a sentence fragment to drop: the rest of a front matter block (`key: value` lines up to `---`),
    of a code block (a bare closing fence with no opening fence before it), of an HTML comment (`-->` before
    any `<!--`), indented lines (a list item's wrapped tail, nested items whose label is gone), or prose that
    begins in lower case mid-sentence."""
    body = [i for i in range(start, len(lines)) if lines[i].strip()]
    if not body:
        return start, None
    first = body[0]
    head = list(range(first, len(lines)))
    yaml_end = next((i for i in head if lines[i].strip() == "---"), None)
    if yaml_end is not None and yaml_end > first and all(_YAML_KEY.match(lines[i]) or lines[i][:1].isspace()
                                                         for i in range(first, yaml_end)):
        return _cut_start(lines, yaml_end + 1)
    fences = [i for i in head if _FENCE.match(lines[i])]
    if len(fences) % 2 and lines[fences[0]].strip() in ("```", "~~~"):
        return _cut_start(lines, fences[0] + 1)  # a bare fence first, one too many: it closes a cut block
    closing, opening = _find(lines, head, "-->"), _find(lines, head, "<!--")
    if closing is not None and (opening is None or closing < opening):
        return _cut_start(lines, closing + 1)
    if lines[first][:1].isspace():  # the tail of a list item, or nested items whose label was cut off
        nxt = next((i for i in head if lines[i].strip() and not lines[i][:1].isspace()), len(lines))
        return _cut_start(lines, nxt)
    if lines[first][:1].islower() and lines[first][:1].isascii() and not _ITEM.match(lines[first]):
        return start, first + 1
    return start, None


def _find(lines: list[str], rows: list[int], needle: str) -> int | None:
    return next((i for i in rows if needle in lines[i]), None)


def _drop_comments(raw: str, in_comment: bool) -> tuple[str, bool]:
    kept, rest = [], raw
    while rest:
        if in_comment:
            end = rest.find("-->")
            if end < 0:
                return "".join(kept), True
            rest, in_comment = rest[end + 3:], False
        else:
            begin = rest.find("<!--")
            if begin < 0:
                kept.append(rest)
                break
            kept.append(rest[:begin])
            rest, in_comment = rest[begin + 4:], True
    return "".join(kept), in_comment


def _plain(text: str) -> str:
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub("", text)
    return " ".join(text.split())


def _whole(para: list[tuple[int, str]], section: str) -> list[Statement]:
    """A list item with its wrapped lines: one statement, at the item's line."""
    st = _statement(para[0][0], " ".join(text for _n, text in para), section)
    return [st] if st is not None else []


def _sentences(para: list[tuple[int, str]], section: str) -> list[Statement]:
    """A prose paragraph: one statement per sentence, each at the line it begins on."""
    out = []
    for lineno, line in para:
        for sentence in _SENTENCE_END.split(line):
            if out and out[-1] is not None and not _ends(out[-1].text):
                prev = out.pop()  # a sentence wrapped onto this line
                out.append(_statement(prev.line, f"{prev.text} {sentence}", section))
            else:
                out.append(_statement(lineno, sentence, section))
    return [st for st in out if st is not None]


def _ends(text: str) -> bool:
    return text.rstrip().endswith((".", "!", "?", "。", "！", "？", "；", ":", "："))


def _statement(lineno: int, text: str, section: str) -> Statement | None:
    text = " ".join(text.split())
    if len("".join(text.split())) < MIN_CHARS:
        return None
    return Statement(line=lineno, text=text, kind=classify(text), section=section)
