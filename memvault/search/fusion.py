"""Fusing a lexical ranking with a dense ("meaning") one: pure functions, no numpy, no I/O.

The search pipeline hands `fuse` two things for one query:
- `lexical`: (key, score) pairs, best first, for the hits that passed the lexical floor and the status rules;
- `meaning`: key -> cosine similarity between the query vector and the item's vector, for every item the dense
  layer scored (its nearest neighbours, plus every lexical hit that has a vector).
It returns `Fused` rows, best first: which keys to show, in which order, and for each the cosine (`meaning`, shown
as `why: meaning 0.83`) when one is known. Keys only the dense side found are admitted at `admit` or above; a
lexical hit whose cosine is known and below `reject` is dropped (a question about something never said shares
topic words with stored cards, but not their meaning).

Rules (`rule=`):
- "z" (the default): candidates are the lexical hits and the DENSE_TOP nearest items; each side's score becomes a
  z-score over the candidates and the fused score is weight * z_lexical + (1 - weight) * z_dense (_fuse_z);
- "rrf": reciprocal rank fusion, 1/(k + lexical rank) + 1/(k + dense rank);
- "maxmin": max(l, d) + weight * min(l, d);
- "wsum": weight * l + (1 - weight) * d.
For the last two, l is the lexical score over the query's best lexical score and d = max(0, 1 - (best cosine -
cosine) / window): cosines of one model sit in a narrow band (multilingual-e5: ~0.7-0.9). A missing side counts 0.

Chosen by measurement (eval/hybrid.py --sweep, eval/REPORT.md "Fusion, issue 25"): picked on the tuning half
(even own question numbers, LoCoMo conversations 0-2) among the settings that keep every tuning-half figure of the
lexical ranking (old set R@5, MRR within 0.05 and negatives, LoCoMo turn R@10, entity-bridge R@1), by own MRR +
LoCoMo turn and multi-hop R@10; reported on the other half: "z", lexical weight 0.7 (0.4 when the best lexical
score is below 3.5: WEAK), the 20 nearest items as candidates, admit 0.86 for multilingual-e5-small, and for that
model the nearest item admitted below 0.86 when it stands 0.015 above the second nearest at 0.80 or more
(MEASURED_STAND). The admit gate is a cosine measured per model (MEASURED_ADMIT): a gate in z units over the
question's own cosines (model-free) was measured too and lets far more negatives in for the same paraphrases found
(admit_z 2.0: 5 of 6 old negatives against 0 at 0.86, tuning half), so it is only the fallback for a model
nobody measured (ADMIT_Z 3.0, the first z gate with no old negative through on the tuning half). The reject gate
is off: no cosine threshold separates a question about something never said from a real one (both 0.80-0.91
with multilingual-e5-small); every threshold tried lost real hits first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

RULES = ("rrf", "maxmin", "wsum", "z")
RULE, RRF_K, WEIGHT, WINDOW = "z", 60, 0.7, 0.3
DENSE_TOP, ADMIT_Z = 20, 3.0  # the "z" rule: nearest items that are candidates, and their gate in z units
OLD_ADMIT = 0.86  # the admit cosine the other rules were measured with (multilingual-e5-small)
ADMIT, REJECT = None, -1.0  # gates, as cosines: None = measured per model (admit_for) or the z gate; -1.0: off
# The admit cosine measured for a model (eval/hybrid.py --sweep, tuning half; eval/REPORT.md). A model not listed
# here gets the z gate alone (ADMIT_Z: its own cosines per question, no constant of another model), until it is
# measured and listed, or set with embeddings.admit.
MEASURED_ADMIT = {"multilingual-e5-small-q4": 0.86, "multilingual-e5-small": 0.86}
# The "stands out" gate measured for a model, (margin, floor): the dense side's nearest item, found by meaning
# alone, is admitted below the admit cosine when its cosine is at least `floor` and at least `margin` above the
# second nearest (a question with an answer often has one card well ahead; a question about something never said
# usually has its nearest cards bunched: all 6 old negatives of the tuning half within 0.01, but one held-out
# negative stands 0.016 ahead, eval/REPORT.md). A model not listed here gets no such gate.
MEASURED_STAND = {"multilingual-e5-small-q4": (0.015, 0.80), "multilingual-e5-small": (0.015, 0.80)}
# The "z" rule's lexical weight when the words found nothing strong, (cut, weight): when the best lexical score is
# below `cut` (BM25F, memvault's own scale: a few common words matched), the lexical side gets `weight` instead of
# WEIGHT. Measured on the 101-card fixture and LoCoMo's conversations only; a rare word's IDF grows with the
# vault, so in a larger vault the cut should fire less often (not measured). None: off.
WEAK: tuple[float, float] | None = (3.5, 0.4)


def _model_key(model: str) -> str:
    return model.strip().lower().removeprefix("intfloat/")


def admit_for(model: str) -> float | None:
    """The measured admit cosine of `model` (by its name in embeddings.model), or None (not measured)."""
    return MEASURED_ADMIT.get(_model_key(model))


def stand_for(model: str) -> tuple[float, float] | None:
    """The measured "stands out" gate of `model`, (margin, floor), or None (not measured)."""
    return MEASURED_STAND.get(_model_key(model))


class Fused(NamedTuple):
    key: str
    score: float
    meaning: float | None  # cosine with the query, when the item has a vector
    lexical: bool  # the lexical side found it too


def fuse(lexical: Sequence[tuple[str, float]], meaning: Mapping[str, float], *,
         admit: float | None = ADMIT, reject: float = REJECT, rule: str = RULE, k: float = RRF_K,
         weight: float = WEIGHT, window: float = WINDOW, top: int = DENSE_TOP, admit_z: float | None = None,
         stand: tuple[float, float] | None = None, weak: tuple[float, float] | None = WEAK) -> list[Fused]:
    """The fused ranking of one query (module docstring), best first; ties by key. The z rule's gate: `admit`
    (a cosine) when given, else `admit_z` (default ADMIT_Z); both when both are given; `stand` (margin, floor)
    also admits the nearest item when it stands out (MEASURED_STAND); `weak` (cut, weight): the lexical weight
    when the best lexical score is below cut (WEAK)."""
    if rule not in RULES:
        raise ValueError(f"fusion rule must be one of {', '.join(RULES)}")
    if rule == "z":
        if admit_z is None:
            admit_z = ADMIT_Z if admit is None else float("-inf")
        if weak is not None and lexical and max(s for _, s in lexical) < weak[0]:
            weight = weak[1]
        return _fuse_z(lexical, meaning, admit, reject, weight, top, admit_z, stand)
    admit = OLD_ADMIT if admit is None else admit
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


def _z(values: Sequence[float]) -> tuple[float, float]:
    """(mean, standard deviation) of `values`; a deviation of 0 (or one value) comes back as 0."""
    if len(values) < 2:
        return (values[0] if values else 0.0), 0.0
    mean = sum(values) / len(values)
    return mean, (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5


def _fuse_z(lexical: Sequence[tuple[str, float]], meaning: Mapping[str, float], admit: float | None,
            reject: float, weight: float, top: int, admit_z: float,
            stand: tuple[float, float] | None = None) -> list[Fused]:
    """The "z" rule: candidates are the lexical hits and the `top` nearest items; each side's score becomes a
    z-score over the candidates (lexical: 0 for an item the words did not find; dense: the candidates' mean for an
    item without a vector), and the fused score is weight * z_lexical + (1 - weight) * z_dense. An item only the
    dense side found is admitted when its cosine stands admit_z standard deviations above the mean of every
    cosine the dense side reported for the query (its nearest items: the model's own scale, measured per
    question, not a constant of one model), and, with `admit` set, when its cosine is at least `admit`; with
    `stand` = (margin, floor), the nearest item is admitted too when its cosine is at least floor and margin above
    the second nearest."""
    lex = dict(lexical)
    dense_order = sorted(meaning.items(), key=lambda kv: (-kv[1], kv[0]))
    mu_all, sd_all = _z([c for _, c in dense_order])
    near = []
    for i, (key, cos) in enumerate(dense_order[:top]):
        if key in lex:
            continue
        if sd_all <= 0 or (cos - mu_all) / sd_all < admit_z or (admit is not None and cos < admit):
            if not (i == 0 and stand is not None and cos >= stand[1]
                    and cos - (dense_order[1][1] if len(dense_order) > 1 else 0.0) >= stand[0]):
                continue
        near.append(key)
    keys = [k_ for k_, _ in lexical if not (meaning.get(k_) is not None and meaning[k_] < reject)] + near
    if not keys:
        return []
    mu_l, sd_l = _z([lex.get(k_, 0.0) for k_ in keys])
    known = [meaning[k_] for k_ in keys if k_ in meaning]
    mu_d, sd_d = _z(known)
    out = []
    for key in keys:
        cos = meaning.get(key)
        zl = (lex.get(key, 0.0) - mu_l) / sd_l if sd_l > 0 else 0.0
        zd = (cos - mu_d) / sd_d if cos is not None and sd_d > 0 else 0.0
        out.append(Fused(key, weight * zl + (1.0 - weight) * zd, cos, key in lex))
    out.sort(key=lambda f: (-f.score, f.key))
    return out
