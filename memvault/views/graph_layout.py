"""graph_layout: where graph.html draws each card and entity, computed here so the same vault gives the same file.

Pure and deterministic (no randomness, no clock): ties are broken by name or id, coordinates are rounded.
The picture is a set of clusters: every entity is a hub with the cards that name it (a card sits at the hub of
its most-mentioned entity) on a sunflower spiral around it; cards naming no entity gather per project around an
unlabelled centre. Clusters are placed one by one, each as close as it fits to the clusters it shares cards with
(breadth first from the biggest), so related hubs sit side by side and the drawing stays round and compact.
Past `limit` cards only the most recent and the most connected are drawn (`pick`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

CARD_LIMIT = 3000  # cards drawn at most: past this SVG stops being smooth in a browser
SPACING = 5.0  # sunflower step between card dots (a dot has radius 2.5)
PAD = 10.0  # free space between two clusters
_GOLDEN = math.pi * (3 - math.sqrt(5))


def hub_radius(mentions: int) -> float:
    """An entity hub's radius: grows with the square root of its mentions, capped."""
    return round(min(40.0, 4.0 + 2.2 * math.sqrt(mentions)), 1)


def pick(cards: Sequence[dict[str, Any]], limit: int = CARD_LIMIT) -> list[dict[str, Any]]:
    """At most `limit` cards: half the budget to the newest (created, then id), the rest to the most connected
    (cards reached through shared entities and supersede links), newest first among equals. Order kept by id."""
    if len(cards) <= limit:
        return list(cards)
    mentions: dict[str, int] = defaultdict(int)
    for c in cards:
        for e in c["entities"]:
            mentions[e] += 1
    newest = sorted(cards, key=lambda c: (c["created"], c["id"]), reverse=True)
    keep = {c["id"] for c in newest[: limit // 2]}

    def degree(c: dict[str, Any]) -> int:
        return sum(mentions[e] - 1 for e in c["entities"]) + len(c["supersedes"]) + len(c["superseded_by"])

    for c in sorted(newest, key=degree, reverse=True):  # stable: newest first among equal degrees
        if len(keep) >= limit:
            break
        keep.add(c["id"])
    return [c for c in cards if c["id"] in keep]


def layout(cards: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Positions for `cards` (each with id, project, entities in order): {"cards": {id: (x, y)}, "entities":
    {name: (x, y, radius, mentions)}, "bounds": (x0, y0, x1, y1)}."""
    mentions: dict[str, int] = defaultdict(int)
    for c in cards:
        for e in dict.fromkeys(c["entities"]):
            mentions[e] += 1
    members: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for c in cards:
        if c["entities"]:
            home = min(dict.fromkeys(c["entities"]), key=lambda e: (-mentions[e], e))
            members[(0, home)].append(c)
        else:
            members[(1, c["project"] or "")].append(c)
    for e in mentions:
        members.setdefault((0, e), [])
    links = _cluster_links(cards, members)
    order = _bfs_order(members, links)
    radius = {key: _core(key, mentions) + (SPACING * math.sqrt(len(members[key]) + 0.5) if members[key] else 0)
              for key in members}
    centres = _place(order, radius, links)
    pos_cards: dict[str, tuple[float, float]] = {}
    for key in order:
        cx, cy = centres[key]
        core = _core(key, mentions)
        ranked = sorted(members[key], key=lambda c: (-len(c["entities"]), c["id"]))
        for k, c in enumerate(ranked):
            r = core + 2.0 + SPACING * math.sqrt(k + 0.5)
            a = k * _GOLDEN
            pos_cards[c["id"]] = (round(cx + r * math.cos(a), 1), round(cy + r * math.sin(a), 1))
    pos_ents = {e: (*centres[(0, e)], hub_radius(mentions[e]), mentions[e]) for e in sorted(mentions)}
    xs = [p[0] for p in pos_cards.values()] + [p[0] for p in pos_ents.values()]
    ys = [p[1] for p in pos_cards.values()] + [p[1] for p in pos_ents.values()]
    pad = 45.0
    bounds = (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad) if xs else (-100.0, -100.0, 100.0, 100.0)
    return {"cards": pos_cards, "entities": pos_ents, "bounds": tuple(round(b, 1) for b in bounds)}


def _core(key: tuple[int, str], mentions: dict[str, int]) -> float:
    """The empty middle of a cluster: the hub for an entity, a small gap for a project's loose cards."""
    return hub_radius(mentions[key[1]]) if key[0] == 0 else 3.0


def _cluster_links(cards, members) -> dict[tuple[int, str], dict[tuple[int, str], int]]:
    """How many cards tie each pair of clusters (a card links its home to its other entities)."""
    home = {c["id"]: key for key, cs in members.items() for c in cs}
    links: dict[tuple[int, str], dict[tuple[int, str], int]] = defaultdict(lambda: defaultdict(int))
    for c in cards:
        a = home[c["id"]]
        for e in dict.fromkeys(c["entities"]):
            b = (0, e)
            if b != a:
                links[a][b] += 1
                links[b][a] += 1
    return links


def _bfs_order(members, links) -> list[tuple[int, str]]:
    """Clusters biggest first, each followed (breadth first) by those it shares the most cards with."""
    size = {k: len(v) + sum(links[k].values()) for k, v in members.items()}
    todo = sorted(members, key=lambda k: (k[0], -size[k], k[1]))
    seen: set[tuple[int, str]] = set()
    order: list[tuple[int, str]] = []
    for start in todo:
        if start in seen:
            continue
        seen.add(start)
        queue = [start]
        while queue:
            key = queue.pop(0)
            order.append(key)
            for nxt in sorted(links[key], key=lambda k: (-links[key][k], -size[k], k)):
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
    return order


class _Grid:
    """Placed circles in square cells, to test a candidate against its near ones only."""

    def __init__(self, cell: float):
        self.cell = cell
        self.cells: dict[tuple[int, int], list[tuple[float, float, float]]] = defaultdict(list)

    def _span(self, x: float, y: float, r: float):
        c = self.cell
        for i in range(math.floor((x - r) / c), math.floor((x + r) / c) + 1):
            for j in range(math.floor((y - r) / c), math.floor((y + r) / c) + 1):
                yield i, j

    def add(self, x: float, y: float, r: float) -> None:
        for ij in self._span(x, y, r):
            self.cells[ij].append((x, y, r))

    def free(self, x: float, y: float, r: float) -> bool:
        for ij in self._span(x, y, r):
            for (px, py, pr) in self.cells.get(ij, ()):
                if (px - x) ** 2 + (py - y) ** 2 < (pr + r + PAD) ** 2:
                    return False
        return True


def _place(order, radius, links) -> dict[tuple[int, str], tuple[float, float]]:
    """Centre of each cluster: the first at the origin, each next one touching an already placed cluster, at the
    free spot nearest to the clusters it links to (else to the origin)."""
    centres: dict[tuple[int, str], tuple[float, float]] = {}
    if not order:
        return centres
    rs = sorted(radius.values())
    grid = _Grid(max(20.0, 2 * rs[len(rs) // 2] + PAD))
    placed: list[tuple[int, str]] = []
    for key in order:
        r = radius[key]
        if not placed:
            centres[key] = (0.0, 0.0)
        else:
            near = [(k, w) for k, w in links[key].items() if k in centres]
            if near:
                tot = sum(w for _, w in near)
                tx = sum(centres[k][0] * w for k, w in near) / tot
                ty = sum(centres[k][1] * w for k, w in near) / tot
            else:
                tx = ty = 0.0
            anchors = sorted(near, key=lambda kw: (-kw[1], kw[0]))[:3] or [(placed[-1], 0)]
            anchors += [(k, 0) for k in placed[-2:]]
            centres[key] = _spot(anchors, centres, radius, r, (tx, ty), grid)
        grid.add(*centres[key], r)
        placed.append(key)
    return centres


def _spot(anchors, centres, radius, r, target, grid) -> tuple[float, float]:
    """The free position nearest to `target` on rings around the anchors, widening the rings until one fits."""
    for ring in range(200):
        best = None
        for k, _w in anchors:
            ax, ay = centres[k]
            d = radius[k] + r + PAD + 1 + ring * (r + PAD)
            steps = max(12, min(96, int(2 * math.pi * d / max(r, 4.0))))
            for s in range(steps):
                a = 2 * math.pi * s / steps
                x, y = ax + d * math.cos(a), ay + d * math.sin(a)
                if grid.free(x, y, r):
                    score = (x - target[0]) ** 2 + (y - target[1]) ** 2
                    if best is None or score < best[0]:
                        best = (score, x, y)
        if best is not None:
            return round(best[1], 1), round(best[2], 1)
    raise RuntimeError("no room found for a graph cluster")  # unreachable: rings widen without end
