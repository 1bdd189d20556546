"""memvault.vault.files: the file primitives other packages call instead of writing files themselves."""

from __future__ import annotations

import os

from memvault.vault import files, store


def test_remove_file_removes_once_and_tolerates_a_missing_file(tmp_path):
    path = tmp_path / "search.sqlite-wal"
    path.write_bytes(b"x")
    assert files.remove_file(path) is True
    assert not path.exists()
    assert files.remove_file(path) is False  # already gone: not an error


def test_ensure_dir_creates_parents_and_is_idempotent(tmp_path):
    target = tmp_path / ".memvault" / "a" / "b"
    assert files.ensure_dir(target) == target
    assert target.is_dir()
    (target / "keep").write_text("k")
    assert files.ensure_dir(target) == target
    assert (target / "keep").read_text() == "k"


def test_ends_with_newline_and_torn_tail_repair(tmp_path):
    path = tmp_path / "day.jsonl"
    path.write_bytes(b"")
    assert files.ends_with_newline(path)
    path.write_bytes(b'{"a": 1}\n{"b"')
    assert not files.ends_with_newline(path)
    assert files.repair_torn_tail(path) == 4
    assert path.read_bytes() == b'{"a": 1}\n'
    files.append_lines(path, ['{"c": 3}'])
    assert [raw for _n, raw in files.iter_lines(path)] == [b'{"a": 1}', b'{"c": 3}']


def test_atomic_write_leaves_no_temp_file(tmp_path):
    path = tmp_path / "cards" / "2026-01" / "c.md"
    files.atomic_write(path, "新的 card\n")
    assert path.read_text(encoding="utf-8") == "新的 card\n"
    assert os.listdir(path.parent) == ["c.md"]


def test_store_keeps_re_exporting_the_moved_names():
    for name in ("atomic_write", "append_lines", "iter_lines", "repair_torn_tail", "remove_file",
                 "ensure_dir", "ends_with_newline"):
        assert getattr(store, name) is getattr(files, name), name
    from memvault.vault import episodes

    for name in ("EpisodeIndex", "user_digest", "user_part_digests", "revoked_ids"):
        assert getattr(store, name) is getattr(episodes, name), name
