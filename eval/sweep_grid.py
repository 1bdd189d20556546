"""The fusion settings `python eval/hybrid.py --sweep` compares (label, memvault.search.fusion.fuse keyword
arguments; None = lexical only). hybrid.choose picks one of them on the tuning half alone.

Families, in the order they were added (eval/REPORT.md, "Fusion, issue 25"):
- the former weighted sum, RRF, and the "z" rule over lexical weight × nearest-item candidates × a z gate or an
  admit cosine;
- the admit gate per query language (`admit_lang`, resolved by hybrid.fused_all);
- "stands out" (`stand` = (margin, floor)): the nearest item, found by meaning alone, is admitted below the admit
  cosine when it is at least margin above the second nearest and at least floor;
- weak words (`weak` = (cut, weight)): the lexical weight when the best lexical score is below cut, alone and with
  "stands out".
Within a family the stricter setting comes first (hybrid.choose keeps the first of a tie). Rows of the z rule
before the weak-words family say `weak=None`: they were measured with one lexical weight for every question.
"""

from __future__ import annotations

STANDS = [(m, f) for m in (0.02, 0.015, 0.01) for f in (0.83, 0.80)]  # (margin, floor), strict first


def grid(chosen: dict) -> list[tuple[str, dict | None]]:
    out: list[tuple[str, dict | None]] = [("lexical only", None), ("chosen (fusion.py defaults)", chosen),
                                          ("before: wsum 0.8 win 0.3 admit 0.86", dict(rule="wsum", weight=0.8,
                                                                                      window=0.3, admit=0.86))]
    for w in (0.4, 0.5, 0.6, 0.7, 0.8):
        for top in (10, 20, 30):
            for z in (1.0, 1.5, 2.0, 2.5, 3.0, 99.0):
                out.append((f"z w={w} top={top} admit_z={z}", dict(rule="z", weight=w, top=top, admit_z=z,
                                                                    weak=None)))
            for admit in (0.85, 0.86):
                out.append((f"z w={w} top={top} admit={admit}", dict(rule="z", weight=w, top=top, admit_z=-99.0,
                                                                      admit=admit, weak=None)))
    for w in (0.6, 0.7):  # the admit gate per query language (hybrid.query_language), top 20
        for cjk in (0.85, 0.855, 0.86, 0.865, 0.87, 0.875, 0.88):
            for other in (0.83, 0.835, 0.84, 0.845, 0.85, 0.855, 0.86, 0.865, 0.87):
                out.append((f"z w={w} admit cjk={cjk} oth={other}",
                            dict(rule="z", weight=w, top=20, admit_z=-99.0, weak=None,
                                 admit_lang={"cjk": cjk, "other": other})))
    for k in (10, 60):
        out.append((f"rrf k={k} admit=0.86", dict(rule="rrf", k=k, admit=0.86)))
    for w in (0.5, 0.6, 0.7):
        out.append((f"wsum a={w} win=0.3 admit=0.86", dict(rule="wsum", weight=w, window=0.3, admit=0.86)))
    z = dict(rule="z", weight=0.7, top=20, admit_z=-99.0, admit=0.86)
    for stand in STANDS:
        out.append((f"z w=0.7 admit=0.86 stand={stand}", z | dict(stand=stand, weak=None)))
    for cut in (2.5, 3.0, 3.5, 4.0):
        for low in (0.6, 0.5, 0.4):
            for stand in (None, *STANDS):
                out.append((f"z w=0.7 admit=0.86 weak=({cut}, {low}) stand={stand}",
                            z | dict(stand=stand, weak=(cut, low))))
    return out
