"""Slugs from hostile entity names stay inside entities/, readable for Chinese, distinct on collisions."""

from __future__ import annotations

import unicodedata

import pytest

from memvault.vault.slug import MAX_CHARS, clean_name, name_key, slugify, unique_slug

HOSTILE = [
    "../../x", "/etc/passwd", "..", ".", "a\x00b", "line1\nline2", "key: value\nstatus: retracted",
    "x" * 300, "CON", "con.txt", "Nul", "COM1", "lpt9", "．．／．．／etc", "C:\\Windows\\system32", "-",
    "", "   ", "!!!", "<script>alert(1)</script>", "~/.ssh/id_rsa", "a/../../b", "\u202eevil", "名字/../逃逸",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_give_a_plain_file_name(name, tmp_path):
    slug = slugify(name)
    assert slug and len(slug) <= MAX_CHARS + 7
    assert not set(slug) & set("/\\.\x00\n\r:~ ")
    assert slug not in {"con", "nul", "com1", "lpt9", "prn", "aux", "con-txt"}  # Windows device names
    target = (tmp_path / "entities" / f"{slug}.md").resolve()
    assert target.parent == (tmp_path / "entities").resolve()
    assert len(f"{slug}.md".encode()) < 255


def test_chinese_names_stay_readable():
    assert slugify("张三") == "张三"
    assert slugify("周报 工具") == "周报-工具"
    assert slugify("雾港（Wugang）") == "雾港-wugang"


def test_case_and_nfkc_variants_are_one_entity():
    assert slugify("Postgres") == slugify("POSTGRES") == slugify("ｐｏｓｔｇｒｅｓ")
    assert name_key("Ｐｏｓｔｇｒｅｓ ") == name_key("postgres")
    assert slugify("ﬁle") == slugify("file")  # ligature folds under NFKC


def test_different_names_on_one_slug_get_distinct_files():
    taken = {"c": name_key("C++")}
    other = unique_slug("C#", taken)
    assert other != "c" and other.startswith("c-")
    assert unique_slug("c++", taken) == "c"  # the owner keeps its page
    assert unique_slug("C#", taken) == other  # deterministic


def test_long_names_are_cut_with_a_hash_so_they_stay_distinct():
    a, b = slugify("a" * 300), slugify("a" * 299 + "b")
    assert a != b and len(a) <= MAX_CHARS


def test_clean_name_is_one_line_without_controls():
    name = clean_name("evil\nstatus: retracted\x00\u200b" + "y" * 200)
    assert "\n" not in name and "\x00" not in name and len(name) <= 80
    assert all(unicodedata.category(ch)[0] != "C" for ch in name)
