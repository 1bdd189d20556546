"""doctor remembers parsed cards by file stat (.memvault/doctor-cards.cache, issue 37): a second run parses
only what changed, and a change, a broken card or a damaged cache is still seen."""

import os
import time

from memvault.vault.store import Vault
from memvault.views import parsed
from memvault.views.doctor import check_vault

from search_helpers import card, write


def _age(path, seconds=10):
    """An mtime older than the two seconds a fresh one is not trusted for."""
    past = time.time() - seconds
    os.utime(path, (past, past))
    return os.stat(path)


def test_second_doctor_parses_only_changed_cards(vault):
    write(vault, card("c-20250101-aaaa", "Use SQLite for the shop", "One file.", project="shop"),
          card("c-20250102-bbbb", "数据库备份策略", "每天备份。", project="home"))
    path = next((vault / "cards").rglob("c-20250102-bbbb.md"))
    st = _age(path)
    _age(next((vault / "cards").rglob("c-20250101-aaaa.md")))
    v = Vault.open(vault, {})
    assert check_vault(v).problems == []
    assert (vault / ".memvault" / parsed.CACHE_NAME).is_file()
    # Same size, same mtime, same inode, other bytes (a broken id): the cache stands for the file, unread.
    text = path.read_text(encoding="utf-8")
    broken = text.replace("id: c-20250102-bbbb", "id: [c-20250102-bbb", 1)
    assert len(broken.encode()) == len(text.encode())
    path.write_text(broken, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert check_vault(v).problems == []
    # Any real change (the mtime moves): parsed again and reported, naming the file.
    _age(path, 5)
    assert any(p.startswith("cards/") and "c-20250102-bbbb.md" in p for p in check_vault(v).problems)
    # A damaged cache is no error: everything is parsed again.
    (vault / ".memvault" / parsed.CACHE_NAME).write_bytes(b"not a pickle")
    assert any("c-20250102-bbbb.md" in p for p in check_vault(v).problems)


def test_conflict_lines_are_reused_until_a_card_changes(vault):
    from memvault.model import Card
    from memvault.vault import codec

    def put(cid, value, day):
        card = Card(id=cid, kind="state", title=f"Shop database engine: {value}", project="shop",
                    subject="shop database", field="engine", value=value, created=f"{day}T08:00:00Z",
                    valid_from=day, source={"kind": "remember"})
        path = vault / "cards" / day[:7] / f"{cid}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(codec.card_to_text(card), encoding="utf-8")
        return path

    put("c-20261101-aaa001", "Postgres", "2026-11-01")
    second = put("c-20261102-aaa002", "SQLite", "2026-11-02")
    for p in (vault / "cards").rglob("*.md"):
        _age(p)
    v = Vault.open(vault, {})
    first = check_vault(v).conflict_lines  # one line per card of the pair; `conflicts` (--json): one per pair
    assert len(first) == 2 and (vault / ".memvault" / parsed.CONFLICTS_NAME).is_file()
    assert check_vault(v).conflicts == first[:1]
    # Same stat, other bytes (another field: no conflict any more): the stored lines stand …
    st = os.stat(second)
    text = second.read_text(encoding="utf-8")
    other = text.replace("field: engine", "field: motors").replace("engine: SQLite", "motors: SQLite")
    assert len(other.encode()) == len(text.encode()) and other != text
    second.write_text(other, encoding="utf-8")
    os.utime(second, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert check_vault(v).conflict_lines == first
    # … while a scan from nothing (both caches gone) sees the new bytes.
    for name in (parsed.CACHE_NAME, parsed.CONFLICTS_NAME):
        (vault / ".memvault" / name).unlink()
    assert check_vault(v).conflict_lines == []
    # A real change (the mtime moves): scanned again.
    put("c-20261102-aaa002", "MySQL", "2026-11-02")
    _age(second, 5)
    assert len(check_vault(v).conflict_lines) == 2


def test_sound_files_are_read_again_only_when_they_or_their_cards_change(vault):
    """.memvault/doctor-files.cache: an episode file, a card file and an entity page found sound are not read
    again while their stat holds; a page is checked again when one of its cards changes (its block is made from
    them), though its own file did not."""
    from memvault.model import Episode
    from memvault.vault import codec, pages
    from memvault.vault.store import atomic_write

    write(vault, card("c-20250101-aaaa", "The NAS answers on 10.0.0.5", "On the home LAN.", project="home",
                      entities=("nas",)),
          card("c-20250102-bbbb", "备份每晚两点运行", "每天备份。", project="home", entities=("nas",)))
    v = Vault.open(vault, {})
    target, text = pages.page_update(v, "nas", list(v.cards(problems=[])), "NAS")
    atomic_write(target, text)
    day = vault / "episodes" / "2025" / "01" / "2025-01-01.jsonl"
    day.parent.mkdir(parents=True, exist_ok=True)
    line = codec.episode_to_line(Episode(id="ep-1", at="2025-01-01T10:00:00Z", project="home", session="s-1",
                                         turn=0, user="NAS 的地址是什么？", assistant="10.0.0.5", hash="0" * 16))
    day.write_text(line + "\n" + line + "\n", encoding="utf-8")
    for path in [day, target, *(vault / "cards").rglob("*.md")]:
        _age(path)
    assert check_vault(v).problems == []
    assert (vault / ".memvault" / "doctor-files.cache").is_file()
    # Same size, mtime and inode, other bytes (a git conflict marker): the episode file stands as sound, unread.
    st = os.stat(day)
    raw = line.encode()
    marked = raw + b"\n" + (b"<<<<<<< HEAD " + b"x" * len(raw))[:len(raw)] + b"\n"
    assert len(marked) == st.st_size
    day.write_bytes(marked)
    os.utime(day, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert check_vault(v).problems == []
    # Its mtime moves: read again, the marker (and the line that is no JSON) reported with the file's name.
    _age(day, 5)
    assert any("2025-01-01.jsonl" in p and "git conflict marker" in p for p in check_vault(v).problems)
    day.write_text(line + "\n", encoding="utf-8")
    _age(day, 5)
    assert check_vault(v).problems == []
    # A card of the page changes (a hand edit of its title), the page file does not: its block is out of date.
    path = next((vault / "cards").rglob("c-20250101-aaaa.md"))
    path.write_text(path.read_text(encoding="utf-8").replace("10.0.0.5", "10.0.0.9"), encoding="utf-8")
    _age(path, 5)
    assert any(p.startswith("entities/nas.md") and "out of date" in p for p in check_vault(v).problems)


def _damaged(good: bytes, key: str, field: str) -> list[bytes]:
    """What a damaged cache file can hold: bytes that are no marshal, a cut file, marshal of another shape, the
    right key over a value of another shape."""
    import marshal

    return [b"\x00 not marshal", good[:-7], marshal.dumps([key]), marshal.dumps({"key": key, field: [1, 2]}),
            marshal.dumps({"key": key})]


def test_a_damaged_sound_files_cache_is_ignored_and_rewritten(vault):
    """.memvault/doctor-files.cache damaged: the files it would spare are read again (a same-stat conflict marker
    it would have hidden is reported), and the cache is written again, whole."""
    import marshal

    from memvault.model import Episode
    from memvault.vault import codec

    write(vault, card("c-20250101-aaaa", "备份每晚两点运行", "每天备份。", project="home"))
    day = vault / "episodes" / "2025" / "01" / "2025-01-01.jsonl"
    day.parent.mkdir(parents=True, exist_ok=True)
    line = codec.episode_to_line(Episode(id="ep-1", at="2025-01-01T10:00:00Z", project="home", session="s-1",
                                         turn=0, user="When does the backup run?", assistant="两点", hash="0" * 16))
    day.write_text(line + "\n" + line + "\n", encoding="utf-8")
    for path in [day, *(vault / "cards").rglob("*.md")]:
        _age(path)
    v = Vault.open(vault, {})
    assert check_vault(v).problems == []
    cache = vault / ".memvault" / "doctor-files.cache"
    good = marshal.loads(cache.read_bytes())
    assert "episodes/2025/01/2025-01-01.jsonl" in good["files"]
    st = os.stat(day)
    raw = line.encode()
    marked = raw + b"\n" + (b"<<<<<<< HEAD " + b"x" * len(raw))[:len(raw)] + b"\n"
    day.write_bytes(marked)
    os.utime(day, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert check_vault(v).problems == []  # the cache stands for the file: unread
    for bad in _damaged(cache.read_bytes(), good["key"], "files"):
        cache.write_bytes(bad)
        assert any("2025-01-01.jsonl" in p and "git conflict marker" in p for p in check_vault(v).problems)
        again = marshal.loads(cache.read_bytes())
        assert again["key"] == good["key"]
        assert set(again["files"]) == set(good["files"]) - {"episodes/2025/01/2025-01-01.jsonl"}


def test_a_damaged_conflicts_cache_is_ignored_and_rewritten(vault):
    """.memvault/doctor-conflicts.cache damaged: the conflicts are scanned again, the same lines come out, and the
    cache is written again. Cards changed in the last two seconds: scanned, and no cache is kept."""
    import marshal

    write(vault, card("c-20261101-aaa001", "Shop database engine: Postgres", kind="state", project="shop",
                      subject="shop database", field="engine", value="Postgres", source={"kind": "remember"}),
          card("c-20261102-aaa002", "Shop database engine: SQLite", kind="state", project="shop",
               subject="shop database", field="engine", value="SQLite", source={"kind": "remember"}))
    v = Vault.open(vault, {})
    cache = vault / ".memvault" / parsed.CONFLICTS_NAME
    first = check_vault(v).conflict_lines
    assert len(first) == 2 and not cache.exists()  # the card files are too new to trust
    for p in (vault / "cards").rglob("*.md"):
        _age(p)
    assert check_vault(v).conflict_lines == first
    good = marshal.loads(cache.read_bytes())
    assert good["found"] == {"lines": first, "more": False}
    for bad in _damaged(cache.read_bytes(), good["key"], "found") + [
            marshal.dumps({"key": good["key"], "found": {"lines": "c-1", "more": 1}})]:
        cache.write_bytes(bad)
        assert check_vault(v).conflict_lines == first
        assert marshal.loads(cache.read_bytes()) == good
