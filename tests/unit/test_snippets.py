"""A hit's snippet is cut around its best-matching passage (issue 37: the first 160 characters, or the first
place one word occurs, stopped before the part that answers)."""

from memvault.search.snippets import snippet


def test_snippet_shows_the_passage_holding_most_matched_terms():
    text = ("We talked about the app for a long time and the home page felt slow. " * 3
            + "In the end the RestaurantHomeScreen should cache the menu, so the screen opens at once.")
    got = snippet(text, ["screen", "cach", "menu"], 160)
    assert "cache the menu" in got and got.startswith("…") and len(got) <= 162
    # The first occurrence alone ("home" near the start) would have shown the start of the text.
    assert "RestaurantHomeScreen" in got


def test_snippet_in_chinese_and_without_a_match():
    text = "数据库的事情以后再说。" * 20 + "最后决定每天凌晨用 restic 备份数据库到 B2。"
    got = snippet(text, ["restic", "备份"], 40)
    assert "restic 备份" in got and len(got) <= 42
    assert snippet("short text", ["x"], 160) == "short text"
    assert snippet("a" * 300, ["zzz"], 50) == "a" * 49 + "…"
