"""Reading the journal: which episodes distill consumed, when it last ran, which batches were rolled back.

Pure functions over parsed journal records (vault.journal() reads them); nothing here touches files.
"""

from __future__ import annotations

from typing import Any, Iterable


def distilled_ids(journal: Iterable[dict[str, Any]]) -> set[str]:
    """Episode ids consumed by distill batches that were not rolled back since."""
    batches: dict[str, list[str]] = {}
    undone: set[str] = set()
    for rec in journal:
        if rec.get("type") == "distill" and isinstance(rec.get("episodes"), list):
            batches[str(rec.get("batch"))] = [str(e) for e in rec["episodes"]]
        elif rec.get("type") == "rollback" and isinstance(rec.get("batches"), list):
            undone.update(str(b) for b in rec["batches"])
    out: set[str] = set()
    for bid, eps in batches.items():
        if bid not in undone:
            out.update(eps)
    return out


def last_distill(journal: Iterable[dict[str, Any]]) -> str | None:
    times = [str(r.get("at")) for r in journal if r.get("type") == "distill" and r.get("at")]
    return max(times) if times else None


def journal_order(journal: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records in the order they happened: by `at`, then by position (files are read in month order and a
    run appends its lines in order; a git union merge may interleave machines, which `at` sorts out)."""
    indexed = list(enumerate(journal))
    indexed.sort(key=lambda t: (str(t[1].get("at") or ""), t[0]))
    return [rec for _i, rec in indexed]


def rolled_back_batches(journal: Iterable[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for rec in journal:
        if rec.get("type") == "rollback" and isinstance(rec.get("batches"), list):
            out.update(str(b) for b in rec["batches"])
    return out
