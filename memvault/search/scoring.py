"""The score stage of a search (pipeline.py): BM25F on the candidate cards' title/entities/body/tags and BM25 on
the candidate turns, re-computed here with bm25.py so that each hit knows which terms it matched; the relevance
floor (a hit must match `floor` of the question's IDF mass, and a card resting on one word that is an entity
name, or on expansions only, may be asked to cover more: search.name_floor, search.expansion_floor); and each
hit's cover (how much of the question it matched). When nothing reaches the floor, what scored at all is kept,
marked `below` (the order stage shows it as weak, "closest"). Reads the index only through named Index methods.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Mapping

from memvault.search import bm25, expand
from memvault.search.candidates import CARD_WEIGHTS, Candidates, turn_rows
from memvault.search.index import CARD_FIELDS, Index
from memvault.search.query import Analysis
from memvault.search.results import SearchOptions

ENTITY_NAME_WEIGHT = 1.0
# A hit resting on one query word that is an entity name must cover search.name_floor of the question's IDF
# mass, and one resting on expansions only search.expansion_floor. Both default to 0 (off): the measured
# setting 0.4 / 0.25 (eval/lexical.py) stops a few hard negatives but costs the old eval set R@5 0.988 -> 0.963.
EPISODE_WEIGHTS = {"user": 1.0, "assistant": 1.0}
EPISODE_K1, EPISODE_B = bm25.K1, 0.2  # turns are short and alike in length: less length normalisation (REPORT)
PRF_DOCS, PRF_TERMS, PRF_WEIGHT = 5, 0, 0.3  # feedback on turns; off: measured on LoCoMo dev it lowers R@10 (REPORT)

# The score stage's record: rows (card rowid -> its head row, as the index gives it); cards (rowid -> (score,
# matched terms, why)); covers (rowid -> (share of the question matched, share beyond the names it names));
# turns ([(score, matched terms, row)]); below (nothing reached the floor: these are all that scored).
Scored = namedtuple("Scored", "rows cards covers turns below")


def scored(idx: Index, a: Analysis, c: Candidates, opts: SearchOptions) -> Scored:
    """The score stage."""
    rows, cards, covers, card_ok = _cards(idx, a, c, opts) if c.cards else ({}, {}, {}, set())
    turns, turn_ok = _turns(c, c.turn_rows, c.turns.terms, c.turns.idfs, opts) if c.turns else ([], [])
    below = not opts.bm25_only and not card_ok and not any(turn_ok)
    if not below:  # only what reached the floor
        cards = {r: v for r, v in cards.items() if r in card_ok}
        covers = {r: v for r, v in covers.items() if r in card_ok}
        turns = [t for t, ok in zip(turns, turn_ok) if ok]
    if PRF_TERMS and turns and not opts.bm25_only:
        turns = _feedback(idx, c, turns, opts, below)
    return Scored(rows, cards, covers, turns, below)


def _cards(idx: Index, a: Analysis, c: Candidates, opts: SearchOptions) -> tuple[dict, dict, dict, set[int]]:
    q, named = a.cards, a.named
    n_docs, avg = c.card_stats
    stats = bm25.Stats(n_docs=n_docs, avg_len=avg, df={})
    rows = idx.card_heads(c.cards)
    all_idfs = {**c.exp_idf, **q.idfs}
    cards: dict[int, tuple[float, list[str], list[str]]] = {}  # rowid -> (score, matched terms, why)
    covers: dict[int, tuple[float, float]] = {}  # rowid -> (coverage, coverage beyond the names): Hit.cover
    ok: set[int] = set()  # the rowids that reach the relevance floor
    mass = sum(q.idfs.values()) + q.extra_mass
    names = a.names
    free_mass = mass - sum(q.idfs.get(t, 0.0) for t in names)
    for rowid, row in rows.items():
        doc = dict(zip(CARD_FIELDS, row["tok"]))  # field -> its tokens, space-separated (as the index keeps them)
        s = bm25.score_text(q.terms, doc, stats, CARD_WEIGHTS, idfs=all_idfs, extra_mass=q.extra_mass)
        matched = [t for t in s.matched if t in q.idfs]
        total = s.score
        why = []
        credit, via, n_src = _expansion_credit(c.exps, matched, set(s.matched) - set(matched))
        ents = set(row["entities"])
        for slug, (naming, degree) in named.items():
            if slug in ents:
                new = [t for t in naming if t not in matched]
                # Counted like a match in the entities field: the card is about the thing the query names.
                total += ENTITY_NAME_WEIGHT * sum(q.idfs[t] for t in new) * bm25.hub_damping(degree) * 0.5
                matched.extend(new)
                why.append(f"names entity {slug}")
        coverage = min(1.0, (sum(q.idfs[t] for t in matched) + credit) / mass) if mass else 0.0
        # Other things the query names are alternatives ("sqlite postgres markdown"), not words this card fails
        # to answer: the anchor floor weighs the card against the rest of the question only.
        others = {t for slug, (ts, _d) in named.items() if slug not in ents for t in ts} - set(matched)
        rest = mass - sum(q.idfs.get(t, 0.0) for t in others)
        anchored = min(1.0, (sum(q.idfs[t] for t in matched) + credit) / rest) if rest > 0 else coverage
        if total <= 0 or ((why or not matched) and anchored + 1e-9 < (opts.name_floor if matched else opts.expansion_floor)
                          and _units(q.text, matched, named, ents) + n_src < 2):
            continue  # the hit rests on one topic word (often a name) and the question's other words are not in it
        if _relevant(coverage, matched + via, doc, len(q.terms), opts.floor, why):
            ok.add(rowid)
        cards[rowid] = (total, matched + via, why)
        free = sum(q.idfs[t] for t in matched if t not in names) + credit
        covers[rowid] = (coverage, min(1.0, free / free_mass) if free_mass > 1e-9 else coverage)
    return rows, cards, covers, ok


def _turns(c: Candidates, rows: list, terms, idfs, opts: SearchOptions,
           coverage_terms: Mapping[str, float] | None = None) -> tuple[list, list[bool]]:
    """Turns that score, [(score, matched terms, row)], and whether each reaches search.episode_floor."""
    stats = bm25.Stats(n_docs=c.turn_stats[0], avg_len=c.turn_stats[1], df={})
    base = coverage_terms if coverage_terms is not None else idfs
    mass = sum(base.values()) + c.turns.extra_mass
    out, ok = [], []
    for row in rows:
        s = bm25.score_text(terms, {"user": row[8], "assistant": row[9]}, stats, EPISODE_WEIGHTS,
                            k1=EPISODE_K1, b=EPISODE_B, idfs=idfs, extra_mass=c.turns.extra_mass)
        if s.score <= 0:
            continue
        coverage = sum(base[t] for t in s.matched if t in base) / mass if mass else 0.0
        out.append((s.score, [t for t in s.matched if t in base], row))
        ok.append(coverage + 1e-9 >= opts.episode_floor)
    return out, ok


def _feedback(idx: Index, c: Candidates, turns: list, opts: SearchOptions, below: bool) -> list:
    """Pseudo-relevance feedback (RM3-like, off: PRF_TERMS): words the best turns share widen the query a
    little, so the other turns of a story told over several sessions come up too. Coverage stays on the
    user's words."""
    q, n_docs = c.turns, c.turn_stats[0]
    weights: dict[str, float] = {}
    for _s, _m, row in sorted(turns, key=lambda x: -x[0])[:PRF_DOCS]:
        for tok in set(row[8].split()) | set(row[9].split()):
            if tok not in q.idfs and not tok.isdigit():
                weights[tok] = weights.get(tok, 0) + 1
    cands = [t for t, n in weights.items() if n >= 2]
    df = idx.doc_freq(cands, episodes=True)
    ranked = sorted(cands, key=lambda t: (-weights[t] * bm25.idf(df.get(t, n_docs), n_docs), t))[:PRF_TERMS]
    if not ranked:
        return turns
    idfs = dict(q.idfs)
    for t in ranked:
        idfs[t] = PRF_WEIGHT * bm25.idf(df.get(t, 0), n_docs)
    known = [t for t in q.terms if q.idfs[t] < bm25.max_idf(max(n_docs, 1)) - 1e-9]
    rows = turn_rows(idx, known + ranked, idfs, n_docs, opts)
    out, ok = _turns(c, rows, [*q.terms, *ranked], idfs, opts, coverage_terms=q.idfs)
    return out if below else [t for t, passed in zip(out, ok) if passed]


def _units(text: str, matched: list[str], named: Mapping[str, tuple[list[str], int]], ents: set[str]) -> int:
    """How many separate query words `matched` holds: the tokens of one entity name count once, and CJK bigrams
    that overlap in the query (林晚 晚的, 公众 众号) are one word."""
    parent = {t: t for t in matched}

    def root(t: str) -> str:
        while parent[t] != t:
            t = parent[t]
        return t

    groups = [[t for t in terms if t in parent] for slug, (terms, _d) in named.items() if slug in ents]
    pos = {t: text.find(t) for t in matched if not t.isascii()}
    groups += [[a, b] for a in pos for b in pos if pos[a] >= 0 and pos[b] == pos[a] + 1]
    for g in groups:
        for t in g[1:]:
            parent[root(t)] = root(g[0])
    return len({root(t) for t in matched})


def _expansion_credit(exps: list, matched: list[str], exp_matched: set[str]) -> tuple[float, list[str], int]:
    """Coverage credit of the sources whose own words the card lacks but whose expansions it holds, the
    expansion terms that earned it (shown in `why` as matched words), and how many sources earned it."""
    n = 0
    credit = 0.0
    via: list[str] = []
    for src, mass, terms in exps:
        if mass <= 0 or any(t in matched for t in src):
            continue  # an expansion without mass (eval/prf.py feedback terms) only re-ranks
        hit = [t for t in terms if t in exp_matched]
        if hit:
            credit += expand.COVERAGE_SHARE * mass
            n += 1
            via.extend(t for t in hit if t not in via)
    return credit, via, n


def _relevant(coverage: float, matched: list[str], doc: Mapping[str, str], n_terms: int, floor: float,
              why: list[str]) -> bool:
    """The relevance floor. A card must match `floor` of the query's IDF mass, and a single query term that
    the card only mentions in passing (body only, of a query with three or more terms) is not evidence:
    "terraform remote state locking" must not return a card that says "lock" once."""
    if coverage + 1e-9 < floor:
        return False
    if len(matched) >= 2 or n_terms <= 2 or coverage >= 2 * floor or why:
        return True
    strong = " " + " ".join(doc.get(f) or "" for f in ("title", "entities", "tags")) + " "
    return any(" " + t + " " in strong for t in matched)
