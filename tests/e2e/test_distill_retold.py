"""One card per fact (issue 32), through the real CLI: a fact a person tells again in a later session, in other
words, joins the card that already holds it (citing both turns), whether the two sessions are distilled in two
runs or in one; two different facts that share most of their words stay two cards. English and Chinese."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.test_distill_people import ROOT, cards, memvault


def refs(vault: Path) -> dict[str, list[str]]:
    """episode id -> the log's turn ids it holds (source.refs)."""
    out = {}
    for path in (vault / "episodes").rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            ep = json.loads(line)
            if "id" in ep:
                out[ep["id"]] = ep.get("source", {}).get("refs") or [ep.get("source", {}).get("ref")]
    return out


def session(n: int, day: str, said: str) -> str:
    """One session of Mel and Caroline: Mel tells `said`, Caroline answers."""
    rows = [{"role": "user", "speaker": "Mel", "content": said, "ts": f"{day}T13:00:00Z", "session": str(n),
             "id": f"D{n}:1"},
            {"role": "assistant", "speaker": "Caroline", "content": "Oh nice, thanks for telling me!",
             "ts": f"{day}T13:00:30Z", "session": str(n), "id": f"D{n}:2"}]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


SAME = {
    "en": ("I volunteer at the animal shelter every weekend, walking the dogs.",
           "Guess what, I'm still volunteering at the animal shelter on weekends, walking the dogs with my daughter."),
    "zh": ("我每个周末都去社区中心上陶艺课，很放松。", "我最近还是每个周末在社区中心上陶艺课，在学拉坯。"),
}
DIFFERENT = {
    "en": ("I signed up the kids for a pottery class at the community center.",
           "I signed up the kids for a painting class at the community center."),
    "zh": ("我每个周末都在3号楼的健身房锻炼，很累。", "我每个周末都在5号楼的健身房锻炼，很累。"),
}


def fresh(tmp_path: Path) -> Path:
    vault = tmp_path / "v"
    shutil.copytree(ROOT / "vault-template", vault)
    return vault


def capture(vault: Path, n: int, day: str, said: str) -> None:
    done = memvault(vault, "capture", "--format", "jsonl", "--project", "friends", stdin=session(n, day, said))
    assert done.returncode == 0, done.stderr


def distill(vault: Path) -> dict:
    done = memvault(vault, "distill", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("runs", [1, 2])
def test_a_fact_told_again_is_one_card_citing_both_turns(tmp_path, lang, runs):
    vault = fresh(tmp_path)
    first, again = SAME[lang]
    capture(vault, 1, "2023-05-25", first)
    if runs == 2:
        assert distill(vault)["cards"]["created"] == 1
    capture(vault, 2, "2023-06-20", again)
    summary = distill(vault)
    got = cards(vault)
    assert len(got) == 1, [c.title for c in got]
    assert summary["cards"]["merged"] == 1
    card = got[0]
    assert card.status == "active" and len(card.episodes) == 2
    turns = {r for e in card.episodes for r in refs(vault)[e]}
    assert {"D1:1", "D2:1"} <= turns, turns
    # the card still reads as the first telling, and keeps what the second one adds
    assert card.body.splitlines()[0].startswith("Mel")
    assert ("with Mel's daughter" if lang == "en" else "拉坯") in card.body
    # search finds the one card for words of either telling
    hit = json.loads(memvault(vault, "search", "拉坯" if lang == "zh" else "volunteering shelter", "--json").stdout)
    assert [h["id"] for h in hit["hits"] if h["kind"] != "episode"][:1] == [card.id]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_different_facts_that_share_words_stay_two_cards(tmp_path, lang):
    vault = fresh(tmp_path)
    one, other = DIFFERENT[lang]
    capture(vault, 1, "2023-05-25", one)
    distill(vault)
    capture(vault, 2, "2023-06-20", other)
    assert distill(vault)["cards"]["merged"] == 0
    got = cards(vault)
    assert len(got) == 2 and all(len(c.episodes) == 1 for c in got), [c.title for c in got]


def test_a_near_duplicate_title_keeps_the_words_of_each_telling(tmp_path):
    """The same title told again (the near-duplicate rule of FORMAT.md) keeps what the shorter telling adds:
    an extracted card's body is what was said, so neither telling's words are dropped."""
    vault = fresh(tmp_path)
    capture(vault, 1, "2023-05-25", "I'm determined to make the bakery work. Losing my job pushed me to bake "
                                    "full time, and I love every early morning of it.")
    distill(vault)
    capture(vault, 2, "2023-06-20", "I'm determined to make the bakery work. My sister helps on weekends.")
    assert distill(vault)["cards"]["merged"] == 1
    (card,) = cards(vault)
    assert "bake full time" in card.body and "sister helps on weekends" in card.body, card.body
    assert len(card.episodes) == 2
