"""Rules files cut short (issue 35: "the rule files each have … tail tests"): every file of tests/data/rules is
cut with `tail -n 2..6` and the cut is imported under the file's own name, as when a file is half-saved or an
editor truncated it, both ways round:

- whole, then the cut, then the whole again: the cut writes no card (it only retracts what it lacks), and the
  whole file brings back exactly the cards it had, same ids, each once, none left retracted;
- the cut first, then the whole: the cards are the whole file's statements, each once, none retracted.
A cut that starts inside a code block, a comment, front matter, a wrapped list item or mid-sentence yields no
fragment as a statement. The service in this process, on real files.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from memvault.distill.import_rules import import_rules
from memvault.vault.store import Vault

ROOT = Path(__file__).resolve().parents[2]
RULES = sorted((ROOT / "tests" / "data" / "rules").iterdir())
NOW = iter(f"2026-12-06T10:{m:02d}:{s:02d}Z" for m in range(60) for s in range(60))


def _vault(path: Path) -> Vault:
    shutil.copytree(ROOT / "vault-template", path)
    return Vault.open(path, {})


def _import(vault: Vault, path: Path):
    return import_rules(vault, [path], now=lambda: next(NOW), project="p")


def _active(vault: Vault) -> Counter:
    return Counter(c.source.get("hash") for c in vault.cards() if c.status == "active")


def _ids(vault: Vault) -> dict[str, str]:
    return {c.id: c.status for c in vault.cards()}


def _cuts(path: Path) -> list[tuple[int, str]]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return [(k, "".join(lines[-k:])) for k in range(2, 7) if k < len(lines)]


def test_whole_cut_whole_leaves_the_cards_as_they_were(tmp_path):
    bad, cuts = [], 0
    for i, src in enumerate(RULES):
        for k, cut in _cuts(src):
            cuts += 1
            vault = _vault(tmp_path / f"v{i}-{k}")
            path = tmp_path / f"f{i}-{k}" / src.name
            path.parent.mkdir()
            path.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
            _import(vault, path)
            whole = _ids(vault)
            path.write_text(cut, encoding="utf-8")
            mid = _import(vault, path).files[0]
            path.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
            back = _import(vault, path).files[0]
            if mid.new or back.new or _ids(vault) != whole or max(_active(vault).values(), default=1) > 1:
                bad.append(f"{src.name} tail -n {k}: cut wrote {len(mid.new)}, whole again wrote {len(back.new)}, "
                           f"restored {len(back.restored)} of {len(mid.retracted)} retracted")
    assert cuts >= 15
    assert bad == [], "\n".join(bad)


def test_cut_then_whole_stores_each_statement_once(tmp_path):
    bad = []
    for i, src in enumerate(RULES):
        ref = _vault(tmp_path / f"ref{i}")
        whole_path = tmp_path / f"w{i}" / src.name
        whole_path.parent.mkdir()
        shutil.copy(src, whole_path)
        _import(ref, whole_path)
        want = _active(ref)
        for k, cut in _cuts(src):
            vault = _vault(tmp_path / f"v{i}-{k}")
            path = tmp_path / f"c{i}-{k}" / src.name
            path.parent.mkdir()
            path.write_text(cut, encoding="utf-8")
            _import(vault, path)
            shutil.copy(src, path)
            res = _import(vault, path).files[0]
            if res.retracted or res.superseded or _active(vault) != want:
                bad.append(f"{src.name} tail -n {k} then whole: {len(res.retracted)} retracted, "
                           f"{len(res.superseded)} superseded, {sum(_active(vault).values())} active of "
                           f"{sum(want.values())}")
    assert bad == [], "\n".join(bad)
