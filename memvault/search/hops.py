"""The hops stage of a search (pipeline.py): from the scored hits to everything the search reaches, as Hits.
Cards: entity hops from the best hits (damped for hub entities), supersede chains carrying relevance along, and
the status rules (a superseded card weighs less for a question about now, full for a history one). Turns:
context within a conversation (the neighbour turns, the session's best score). Reads the index only through
named Index methods (no SQL here)."""

from __future__ import annotations

from collections import namedtuple
from operator import itemgetter

from memvault.search import bm25
from memvault.search.index import CardFilter, Index
from memvault.search.index.reads import json_list
from memvault.search.order import final_order
from memvault.search.query import Analysis
from memvault.search.results import Hit, SearchOptions, pending
from memvault.search.scoring import Scored
from memvault.search.candidates import Candidates
from memvault.voices import turn_text

# A hop through an entity brings its newest HOP_CAP neighbours (shown, not re-scored). HOP_CAP 50 cost the
# tuning half's search any@10 (0.861 -> 0.859): a hop's neighbours tie, and a history question shows the oldest
# of them first.
HOP_CAP = 200
HOP_WEIGHT = 0.35  # a neighbour reached through an entity gets this share of its seed's score (damped for hubs)
SUPERSEDED_NOW = 0.45  # weight of a superseded card for a "what is true now" question
SUPERSEDED_HISTORY = 1.15  # … and for a history question (full weight, and it wins a tie with its successor)
NEIGHBOUR, NEIGHBOUR_FETCH = 0.3, 50  # a turn borrows this share of the best adjacent turn's score
SESSION = 0.25  # … and this share of its session's best score

# The hops stage's record: cards and turns (Hits, unordered; a card's title None until the fuse stage reads the
# shown ones); below (the score stage's: nothing reached the floor).
Reached = namedtuple("Reached", "cards turns below")


def reached(idx: Index, a: Analysis, c: Candidates, s: Scored, opts: SearchOptions) -> Reached:
    """The hops stage."""
    cards = _cards(idx, a, s, opts) if s.cards else []
    turns = _turns(idx, a, c, s.turns, opts) if s.turns else []
    return Reached(cards, turns, s.below)


def _cards(idx: Index, a: Analysis, s: Scored, opts: SearchOptions) -> list[Hit]:
    """Cards with their `why` still in index terms (the present stage makes it readable). With `a.keep`, of the
    cards reached only through hops and chains (shown, not re-scored: ~600 at 100k cards) only the `keep` best
    in the order the order stage gives hits (score, date, id) become hits; the search then shows no more than
    `keep` cards and orders them by nothing else (no recency prior, no dense fusion)."""
    intent, keep = a.cards.intent, a.keep
    scored, rows = dict(s.cards), dict(s.rows)
    flt = CardFilter(opts.include_all, opts.project, opts.kind)
    keys: dict[int, tuple[int, str, str, str]] = {}  # rowid -> (rowid, id, status, created) of hop neighbours
    if opts.hops and not opts.bm25_only:
        _hop(idx, scored, opts, flt, keys)
    if not opts.bm25_only:
        _follow_chains(idx, scored, rows, intent, flt)
    missing = [r for r in scored if r not in rows]
    if keep is not None and len(missing) > keep:
        # Trigger: hops reached more cards than can be shown. Why: reading and building each costs ~15 us, and
        # at most `keep` of them can rank in the first `keep`. Outcome: the `keep` best by the final order.
        best = set(_best_unscored(idx, scored, missing, keys, intent, opts.bm25_only, keep))
        for rowid in missing:
            if rowid not in best:
                del scored[rowid]
        missing = [r for r in missing if r in best]
    if missing:  # reached through hops and chains only: shown, not re-scored
        rows.update(idx.card_heads(missing, tokens=False))
    hits = []
    for rowid, (score, matched, why) in scored.items():
        row = rows[rowid]
        status = row["status"]
        why = list(why)
        if matched:
            why.insert(0, "matched: " + ", ".join(matched))
        score *= status_weight(status, intent, opts.bm25_only)
        if status == "superseded" and not opts.bm25_only and intent == "history":
            why.append("history question: superseded card at full weight")
        if row["superseded_by"]:
            why.append("superseded by " + ", ".join(row["superseded_by"]))
        if status == "retracted":
            why.append("retracted")
        # title None: the title, snippet text, sources and path are read only for the hits shown (fuse stage).
        hits.append(Hit(
            id=row["id"], kind=row["kind"], title=None, project=row["project"], status=status,  # type: ignore[arg-type]
            score=score, snippet=pending("", matched), why=tuple(why), created=row["created"], rowid=rowid,
            world=row.get("valid_from") or row["created"] or "", cover=s.covers.get(rowid, (0.0, 0.0))))
    return hits


def _best_unscored(idx: Index, scored: dict, rowids: list[int], known: dict, intent: str, bm25_only: bool,
                   keep: int) -> list[int]:
    """The `keep` first of `rowids` in the order the order stage gives hits: the score after the status rule
    below (rounded to 6 places), then the date (newest first unless a history question), then the id. `known`:
    rowid -> (rowid, id, status, created) already read (the hops'); the others are read here."""
    read = [known[r] for r in rowids if r in known]
    rest = [r for r in rowids if r not in known]  # reached through a supersede chain only
    if rest:
        read += idx.card_keys(rest)
    keys = [(scored[rowid][0] * status_weight(status, intent, bm25_only), created, card_id, rowid)
            for rowid, card_id, status, created in read]
    return [k[3] for k in final_order(keys, intent, itemgetter(0), itemgetter(1), itemgetter(2))[:keep]]


def status_weight(status: str, intent: str, bm25_only: bool) -> float:
    """What a card's score is multiplied by for its status: a superseded card counts less for a question about
    now and full for a history question."""
    if status != "superseded" or bm25_only:
        return 1.0
    return SUPERSEDED_HISTORY if intent == "history" else SUPERSEDED_NOW


def _hop(idx: Index, scored: dict, opts: SearchOptions, flt: CardFilter, keys: dict) -> None:
    """Neighbours through shared entities of the best hits: `opts.hops` rounds, each from the round before.
    `keys` gets each neighbour's (rowid, id, status, created), read with it."""
    frontier = sorted(scored.items(), key=lambda kv: -kv[1][0])[:3]
    seen: dict[str, tuple[float, list]] = {}  # slug -> (damping, its newest cards): seeds share entities
    for _round in range(opts.hops):
        if not frontier:
            return
        best = frontier[0][1][0]
        found: dict[int, tuple[float, list[str], list[str]]] = {}
        for rowid, (score, _m, _w) in frontier:
            if score < 0.5 * best:
                continue
            seed_id = idx.card_id(rowid)
            for slug in idx.card_entity_slugs(rowid):
                if slug not in seen:
                    seen[slug] = (bm25.hub_damping(idx.entity_degree(slug)), idx.entity_card_keys(slug, flt, HOP_CAP))
                damping, neighbours = seen[slug]
                gain = score * HOP_WEIGHT * damping
                for key in neighbours:
                    other = key[0]
                    if other == rowid:
                        continue
                    if other in scored:
                        continue
                    keys[other] = key
                    prev = found.get(other)
                    if prev is None or gain > prev[0]:
                        found[other] = (gain, [], [f"via entity {slug} (from {seed_id})"])
        scored.update(found)
        frontier = sorted(found.items(), key=lambda kv: -kv[1][0])[:3]


def _follow_chains(idx: Index, scored: dict, rows: dict, intent: str, flt: CardFilter) -> None:
    """Supersede chains carry relevance along: a history question about "before we moved to X" finds the card
    X superseded even when that card never names X; a "now" question that matched an old card finds the card
    that replaced it. The carried score is the source's (the status rule then orders the pair)."""
    todo = [rowid for rowid, (_s, matched, why) in scored.items() if matched]  # not from hop-only hits
    seen = set()
    while todo:
        rowid = todo.pop()
        if rowid in seen:
            continue
        seen.add(rowid)
        row = rows.get(rowid)
        if row is None:
            row = rows[rowid] = idx.card_heads([rowid], tokens=False)[rowid]
        if intent == "history":
            links = row["supersedes"]
        else:
            links = row["superseded_by"] if row["status"] == "superseded" else []
        if not links:
            continue
        score = scored[rowid][0]
        for (other, _other_id) in idx.cards_with_ids(links, flt):
            prev = scored.get(other)
            if prev is None or prev[0] < score:
                note = f"{'earlier version of' if intent == 'history' else 'replaces'} {row['id']}, which matched"
                scored[other] = (score, prev[1] if prev else [], [*(prev[2] if prev else []), note])
                todo.append(other)
                seen.discard(other)


def _turns(idx: Index, a: Analysis, c: Candidates, scored: list, opts: SearchOptions) -> list[Hit]:
    """Turns as Hits, with their context unless bm25_only. Each hit's `cover` is (share of the question's IDF
    mass it matched, share of the rest of the question, without the names of what it names)."""
    if not opts.bm25_only:
        scored = _with_context(idx, scored)
    q, names = c.turns, a.turn_names
    hits = []
    mass = sum(q.idfs.values()) + q.extra_mass
    free_mass = mass - sum(v for t, v in q.idfs.items() if t in names)
    for score, matched, row, *extra in scored:
        _rowid, ep_id, at, project, session, refs, user, assistant, _tu, _ta, _turn, speakers = row
        text = turn_text(user, assistant, _speakers(speakers))
        title = " ".join(user.split())[:80] or " ".join(assistant.split())[:80]
        why = (("matched: " + ", ".join(matched),) if matched else ()) + tuple(extra)
        hits.append(Hit(
            id=ep_id, kind="episode", title=title, project=project, status="live", score=score,
            snippet=pending(text, matched), why=why,
            refs=tuple(json_list(refs)), created=at, session=session, world=at or "",
            cover=_cover(q.idfs, matched, names, mass, free_mass)))
    return hits


def _cover(idfs: dict[str, float], matched: list[str], names: frozenset[str], mass: float,
           free_mass: float) -> tuple[float, float]:
    whole = sum(idfs.get(t, 0.0) for t in matched) / mass if mass else 0.0
    if free_mass <= 1e-9:
        return whole, whole
    return whole, sum(idfs.get(t, 0.0) for t in matched if t not in names) / free_mass


def _with_context(idx: Index, scored: list) -> list:
    """Context within a conversation. A turn is often only understood with its neighbours (the reply to "what's
    your best camping memory?" never says camping; "love the horse!" follows the photo it praises), so each
    turn borrows NEIGHBOUR of the best score next to it in its session; and a session whose turns match
    well lends SESSION of its best score to each of its turns, which lifts the quieter turns of a story."""
    if not (NEIGHBOUR or SESSION) or not scored:
        return scored
    own = {row[0]: (sc, m, row) for sc, m, row in scored}
    pos = {(row[3], row[4], row[10]): row[0] for _s, _m, row in scored}
    best_session: dict[tuple, float] = {}
    for sc, _m, row in scored:
        key = (row[3], row[4])
        best_session[key] = max(best_session.get(key, 0.0), sc)
    borrowed: dict[tuple, float] = {}
    if NEIGHBOUR:
        for sc, _m, row in scored:
            for d in (-1, 1):
                key = (row[3], row[4], row[10] + d)
                borrowed[key] = max(borrowed.get(key, 0.0), sc)
        missing = [k for k in borrowed if k not in pos]
        for key in missing[:NEIGHBOUR_FETCH]:
            r = idx.episode_at(*key)
            if r is not None:
                own[r[0]] = (0.0, [], r)
                pos[key] = r[0]
    out = []
    for rowid, (sc, matched, row) in own.items():
        total = sc + NEIGHBOUR * borrowed.get((row[3], row[4], row[10]), 0.0)
        total += SESSION * best_session.get((row[3], row[4]), 0.0)
        extra = [] if matched else ["next to a matching turn"]
        out.append((total, matched, row, *extra))
    return out


def _speakers(text: str | None) -> dict | None:
    if not text or text == "{}":
        return None
    import json  # turns with speakers' names only

    return json.loads(text)
