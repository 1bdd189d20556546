"""graph_page: the data graph.html embeds, and the page itself (one self-contained file, no network).

The page's CSS and JS live beside this module in graph_assets/ (package data); this module fills them into
graph_assets/page.html with the vault's data as JSON escaped for a <script> block (`<`, `>`, `&`, U+2028 and
U+2029 as \\uXXXX), so no card text can close the block or start markup. A Content-Security-Policy allows only the
page's own script and style (by their sha256): no request can leave the page, even from injected markup.
Every string of the data went through redaction first, as the CLI's output does.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from memvault.redact import engine as redact
from memvault.views import graph_layout

BODY_CHARS = 4000  # a card's body in the page is cut here (cards are short; this bounds the file)
_OPTIONS = re.compile(r'<meta name="memvault-graph" content="([^"]*)">')


def card_record(row: tuple) -> dict[str, Any]:
    """One Index.graph_rows row as a dict (list columns decoded)."""
    (cid, kind, title, body, project, status, created, vf, vt, ents, eps, sup, sup_by) = row
    return {"id": cid, "kind": kind, "title": title, "body": body or "", "project": project or "",
            "status": status or "active", "created": created or "", "valid_from": vf or "", "valid_to": vt or "",
            "entities": list(dict.fromkeys(json.loads(ents or "[]"))), "sources": json.loads(eps or "[]"),
            "supersedes": json.loads(sup or "[]"), "superseded_by": json.loads(sup_by or "[]")}


def page_data(rows: list[tuple], deny: list[str], options: dict[str, Any],
              limit: int = graph_layout.CARD_LIMIT) -> dict[str, Any]:
    """What graph.html draws: the picked cards (redacted, laid out), their entities and the counts."""
    rules = redact.compile_rules(deny)
    every = [card_record(r) for r in rows]
    cards = graph_layout.pick(every, limit)
    pos = graph_layout.layout(cards)
    ent_names = sorted(pos["entities"])
    ent_index = {e: i for i, e in enumerate(ent_names)}
    projects_of: dict[str, set[str]] = {e: set() for e in ent_names}
    for c in cards:
        for e in c["entities"]:
            if c["project"]:
                projects_of[e].add(c["project"])
    kinds = sorted({c["kind"] for c in cards})
    projects = sorted({c["project"] for c in cards})
    out_cards = []
    for c in cards:
        x, y = pos["cards"][c["id"]]
        body = c["body"] if len(c["body"]) <= BODY_CHARS else c["body"][:BODY_CHARS] + " […]"
        rec = {"id": c["id"], "k": kinds.index(c["kind"]), "t": c["title"], "b": body,
               "p": projects.index(c["project"]), "s": c["status"], "c": c["created"], "x": x, "y": y,
               "e": [ent_index[e] for e in c["entities"]]}
        for key, field in (("vf", "valid_from"), ("vt", "valid_to"), ("src", "sources"), ("sup", "supersedes")):
            if c[field]:
                rec[key] = c[field]
        out_cards.append(rec)
    ents = []
    for e in ent_names:
        x, y, r, m = pos["entities"][e]
        ents.append({"n": e, "x": x, "y": y, "r": r, "m": m, **({"xp": 1} if len(projects_of[e]) > 1 else {})})
    data = {"cards": out_cards, "ents": ents, "kinds": kinds, "projects": projects, "total": len(every),
            "hidden": len(every) - len(cards), "bounds": list(pos["bounds"]), "options": options}
    return _redacted(data, rules, {})


def _redacted(data: Any, rules: redact.Rules, seen: dict[str, str]) -> Any:
    """redact.redact_tree with each distinct string redacted once (dates, kinds, projects repeat a lot)."""
    if isinstance(data, str):
        if data not in seen:
            seen[data] = redact.redact(data, rules).text if data else data
        return seen[data]
    if isinstance(data, dict):
        return {k: _redacted(v, rules, seen) for k, v in data.items()}
    if isinstance(data, list):
        return [_redacted(v, rules, seen) for v in data]
    return data


def script_json(data: Any) -> str:
    """JSON that is safe inside <script type="application/json">: nothing in it can end the element."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


@lru_cache(maxsize=None)
def _asset(name: str) -> str:
    return resources.files("memvault.views").joinpath("graph_assets", name).read_text(encoding="utf-8")


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def render(data: dict[str, Any]) -> str:
    """The whole page as text: depends only on `data` (no time, no machine)."""
    css, js = _asset("page.css"), _asset("page.js")
    csp = f"default-src 'none'; style-src {_sha(css)}; script-src {_sha(js)}; img-src data:"
    options = json.dumps(data["options"], sort_keys=True, separators=(",", ":"))
    values = {"CSP": html.escape(csp), "OPTIONS": html.escape(options), "CSS": css, "JS": js,
              "DATA": script_json(data)}
    # One pass: a value (a project named "@@JS@@") is never searched for placeholders again.
    return re.sub(r"@@(CSP|OPTIONS|CSS|JS|DATA)@@", lambda m: values[m.group(1)], _asset("page.html"))


def read_options(text: str) -> dict[str, Any] | None:
    """The --project/--since an existing graph.html was drawn with ({} for a page of an older memvault, None when
    the file is not memvault's page: memvault never rewrites a file it did not write)."""
    m = _OPTIONS.search(text[:4096])
    if not m:
        return {} if "<title>memvault graph</title>" in text[:4096] else None
    try:
        value = json.loads(html.unescape(m.group(1)))
    except ValueError:
        return None
    return {k: value.get(k) for k in ("project", "since")} if isinstance(value, dict) else None
