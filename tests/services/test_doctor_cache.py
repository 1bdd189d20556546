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
