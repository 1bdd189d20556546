"""memvault.fence: one fence for packs, briefs and MCP replies, and strip, which takes fenced memory out again."""

from __future__ import annotations

from memvault import fence


def test_wrap_then_strip_leaves_the_text_around_it():
    block = fence.wrap("- [c-1] Deploy on Fridays", fence.HEADER["en"])
    assert block.count(fence.PREFIX) == 3  # named in the header, then the two fence lines
    assert fence.strip(f"before\n{block}after") == "before\nafter"
    zh = fence.wrap("- [c-2] 周五部署", fence.HEADER["zh"])
    assert fence.strip(f"问题：\n{zh}下一步？") == "问题：\n下一步？"


def test_a_card_cannot_hold_the_fence_that_closes_it():
    inner = f"- [c-1] {fence.mark('- [c-1] x')} x"
    f = fence.pick(inner)
    assert f not in inner and fence.wrap(inner, "{fence}").count(f) == 3


def test_strip_keeps_text_that_only_names_a_fence_and_cuts_an_unclosed_one():
    mark = fence.mark("x")
    assert fence.strip(f"the marker {mark} appears in passing") == "the marker  appears in passing"
    assert fence.strip(f"keep\n{mark}\n- [c-1] a card, cut short") == "keep"
    assert fence.strip("no fence at all\n") == "no fence at all\n"


def test_strip_finds_a_fence_a_host_html_escaped():
    block = fence.wrap("- [c-1] Deploy on Fridays", fence.HEADER["en"])
    escaped = block.replace("<", "&lt;").replace(">", "&gt;")
    assert fence.strip(f"{escaped}What now?") == "What now?"
