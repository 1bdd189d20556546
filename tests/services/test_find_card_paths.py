"""Vault.find_card_paths: the same answer as find_card_path for each id (the conflict scan asks for thousands)."""

from __future__ import annotations

import os

from memvault.vault.store import Vault


def test_many_paths_at_once_match_one_by_one(vault):
    cards = vault / "cards"
    for month, name in [("2026-01", "c-260101-aaaa01"), ("2026-02", "c-260101-aaaa01"),  # one id in two months
                        ("2026-02", "c-260202-bbbb02"), (".hidden", "c-260303-cccc03"), ("2025-12", "c-251212-dddd04"),
                        ("2026-03", "c-260404-eeee05.txt")]:
        (cards / month).mkdir(parents=True, exist_ok=True)
        (cards / month / (name if name.endswith(".txt") else name + ".md")).write_text("x", encoding="utf-8")
    (cards / "2026-03" / "c-260505-ffff06.md").mkdir()  # a folder with a card's name: found as glob finds it
    (cards / "not-a-folder.md").write_text("x", encoding="utf-8")
    os.symlink(cards / "2025-12", cards / "2025-12-link")
    v = Vault.open(vault, {})
    ids = ["c-260101-aaaa01", "c-260202-bbbb02", "c-260303-cccc03", "c-251212-dddd04", "c-260404-eeee05",
           "c-260505-ffff06", "c-999999-none00", "../etc/passwd", "not-a-folder"]
    many = v.find_card_paths(ids)
    one = {i: v.find_card_path(i) for i in ids}
    assert many == {i: p for i, p in one.items() if p is not None}
    assert many["c-260101-aaaa01"].parent.name == "2026-01"  # the first month, as sorted glob hits give
    assert "c-999999-none00" not in many and "../etc/passwd" not in many
    assert Vault.open(vault, {}).find_card_paths([]) == {}
