"""graph: neighbours of a card or entity through shared entities; `graph --html` renders the whole vault."""

from __future__ import annotations

import html
import json
from typing import Any

from memvault.errors import NoMatch
from memvault.search.index import Index, entity_names


def neighbours(idx: Index, ident: str, limit: int = 20, include_all: bool = False) -> dict[str, Any]:
    """A card's neighbours: other cards sharing any of its entities, most shared first (hub entities count
    less: weight = sum of 1/log2(1 + cards of the entity)). An entity's neighbours: its cards and the entities
    they also name."""
    idx.refresh()
    row = idx.card_head(ident)
    if row:
        ents = idx.card_entities_sorted(row[0])
        found: dict[str, dict[str, Any]] = {}
        for ent in ents:
            degree = idx.entity_degree(ent)
            for cid, kind, title, project, st in idx.entity_neighbours(ent, row[0], include_all):
                n = found.setdefault(cid, {"id": cid, "type": "card", "kind": kind, "title": title,
                                           "project": project, "status": st, "via": [], "weight": 0.0})
                n["via"].append(ent)
                n["weight"] += 1.0 / _log2(1 + degree)
        items = sorted(found.values(), key=lambda n: (-n["weight"], n["id"]))[:limit]
        for n in items:
            n["weight"] = round(n["weight"], 4)
        return {"center": {"id": row[1], "type": "card", "kind": row[2], "title": row[3], "project": row[4],
                           "status": row[5], "entities": ents}, "neighbours": items}
    found = entity_names(idx, ident)
    if found is None:
        raise NoMatch(f"no card or entity named {ident!r}")
    slug, names = found
    cards = [{"id": r[0], "type": "card", "kind": r[1], "title": r[2], "project": r[3], "status": r[4],
              "via": [slug], "weight": 1.0} for r in idx.cards_naming(sorted(names), include_all)]
    co = idx.co_entities(sorted(names))
    ents = [{"id": e, "type": "entity", "title": e, "via": [], "weight": float(n)} for e, n in co]
    title = next((n for n in names if n != slug), slug)  # the page's name when it has one
    return {"center": {"id": slug, "type": "entity", "title": title},
            "neighbours": (cards + ents)[:limit] if limit else cards + ents}


def _log2(x: float) -> float:
    import math

    return math.log2(x) if x > 1 else 1.0


def whole_graph(idx: Index, include_all: bool = False) -> dict[str, Any]:
    """Every card and entity as nodes, card-entity mentions as edges; sorted, so the bytes are deterministic."""
    idx.refresh()
    cards = [{"id": r[0], "type": "card", "kind": r[1], "title": r[2], "project": r[3], "status": r[4]}
             for r in idx.card_heads(include_all)]
    keep = {c["id"] for c in cards}
    edges = sorted({(cid, ent) for cid, ent in idx.card_entity_pairs() if cid in keep})
    ents = sorted({e for _, e in edges})
    return {"nodes": cards + [{"id": e, "type": "entity", "title": e} for e in ents],
            "edges": [{"source": a, "target": b} for a, b in edges]}


def render_html(data: dict[str, Any]) -> str:
    """A self-contained page (no network): nodes and edges, laid out by a seeded force simulation in the
    browser. The file itself depends only on the cards, never on time or machine."""
    payload = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    payload = payload.replace("</", "<\\/")
    return _PAGE.replace("@@DATA@@", payload).replace("@@COUNT@@", html.escape(
        f"{sum(1 for n in data['nodes'] if n['type'] == 'card')} cards, "
        f"{sum(1 for n in data['nodes'] if n['type'] == 'entity')} entities"))


_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>memvault graph</title>
<style>body{margin:0;font:13px sans-serif}svg{width:100vw;height:100vh}
.card{fill:#4a78c2}.entity{fill:#d98b2b}line{stroke:#bbb}text{pointer-events:none;fill:#333}</style></head>
<body><div style="position:fixed;top:4px;left:8px">memvault graph: @@COUNT@@</div>
<svg id="g"></svg>
<script id="data" type="application/json">@@DATA@@</script>
<script>
const data = JSON.parse(document.getElementById("data").textContent);
const W = innerWidth, H = innerHeight, idx = new Map();
let seed = 42; const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
data.nodes.forEach((n, i) => { n.x = W / 2 + (rnd() - .5) * W * .8; n.y = H / 2 + (rnd() - .5) * H * .8;
  n.vx = 0; n.vy = 0; idx.set(n.type + ":" + n.id, n); });
const links = data.edges.map(e => [idx.get("card:" + e.source), idx.get("entity:" + e.target)]);
for (let it = 0; it < 300; it++) {
  for (const a of data.nodes) for (const b of data.nodes) { if (a === b) continue;
    const dx = a.x - b.x, dy = a.y - b.y, d2 = dx * dx + dy * dy + .01; a.vx += dx / d2 * 30; a.vy += dy / d2 * 30; }
  for (const [a, b] of links) { const dx = b.x - a.x, dy = b.y - a.y; a.vx += dx * .01; a.vy += dy * .01;
    b.vx -= dx * .01; b.vy -= dy * .01; }
  for (const n of data.nodes) { n.vx += (W / 2 - n.x) * .002; n.vy += (H / 2 - n.y) * .002;
    n.x += n.vx * .5; n.y += n.vy * .5; n.vx *= .6; n.vy *= .6; }
}
const svg = document.getElementById("g"), NS = "http://www.w3.org/2000/svg";
const el = (t, a) => { const e = document.createElementNS(NS, t); for (const k in a) e.setAttribute(k, a[k]); svg.appendChild(e); return e; };
for (const [a, b] of links) el("line", {x1: a.x, y1: a.y, x2: b.x, y2: b.y});
for (const n of data.nodes) { const c = el("circle", {cx: n.x, cy: n.y, r: n.type === "card" ? 4 : 7, class: n.type});
  const t = document.createElementNS(NS, "title"); t.textContent = n.id + " " + (n.title || ""); c.appendChild(t);
  if (n.type === "entity") el("text", {x: n.x + 8, y: n.y + 4}).textContent = n.title; }
</script></body></html>
"""
