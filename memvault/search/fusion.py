"""Fusing a lexical ranking with a dense ("meaning") one: pure functions, no numpy, no I/O.

The search pipeline hands `fuse` two things for one query:
- `lexical`: (key, score) pairs, best first, for the hits that passed the lexical floor and the status rules;
- `meaning`: key -> cosine similarity between the query vector and the item's vector, for every item the dense
  layer scored (its nearest neighbours, plus every lexical hit that has a vector).
It returns `Fused` rows, best first: which keys to show, in which order, and for each the cosine (`meaning`, shown
as `why: meaning 0.83`) when one is known. Keys only the dense side found are admitted at `admit` or above; a
lexical hit whose cosine is known and below `reject` is dropped (a question about something never said shares
topic words with stored cards, but not their meaning).

The rule and its constants are chosen by measurement (eval/hybrid.py); the baseline here is reciprocal rank fusion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

RRF_K = 60


class Fused(NamedTuple):
    key: str
    score: float
    meaning: float | None  # cosine with the query, when the item has a vector
    lexical: bool  # the lexical side found it too


def fuse(lexical: Sequence[tuple[str, float]], meaning: Mapping[str, float], *,
         admit: float = 1.0, reject: float = -1.0) -> list[Fused]:
    """Reciprocal rank fusion of the two rankings (k=60), with the admit/reject gates described above."""
    lex_rank = {key: i for i, (key, _) in enumerate(lexical)}
    dense_order = sorted(meaning.items(), key=lambda kv: (-kv[1], kv[0]))
    dense_rank = {key: i for i, (key, _) in enumerate(dense_order)}
    out: list[Fused] = []
    for key in dict.fromkeys([k for k, _ in lexical] + [k for k, _ in dense_order]):
        cos = meaning.get(key)
        in_lex = key in lex_rank
        if in_lex and cos is not None and cos < reject:
            continue
        if not in_lex and (cos is None or cos < admit):
            continue
        score = 0.0
        if in_lex:
            score += 1.0 / (RRF_K + lex_rank[key] + 1)
        if cos is not None:
            score += 1.0 / (RRF_K + dense_rank[key] + 1)
        out.append(Fused(key, score, cos, in_lex))
    out.sort(key=lambda f: (-f.score, f.key))
    return out
