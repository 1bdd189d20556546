"""The review protocol (issue 33, `distill.llm_protocol: review`, the default) against the real fake OpenAI
server: the model is shown the offline engine's drafts and keeps, corrects or completes them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_distill import add_episodes, run  # noqa: E402

from memvault.vault.store import Vault

TURNS = [
    ("Always answer in Markdown tables.", "ok"),
    ("Thanks, that helps a lot!", "You're welcome."),
    ("We use Postgres 16 for the shop database.", "ok"),
    ("My sister Lena moved to Denver last year.", "ok"),
]


def drafts(body: dict) -> dict[str, str]:
    """c-id -> statement of the drafts the prompt lists."""
    return dict(re.findall(r"^(c\d+) e\d+ \[\w+\] (.*)$", body["messages"][1]["content"], re.M))


def cards(root: Path):
    return sorted(Vault.open(root, {}).cards(), key=lambda c: c.title)


def journal(root: Path) -> list[dict]:
    return [json.loads(x) for p in sorted((root / "journal").glob("*.jsonl"))
            for x in p.read_text(encoding="utf-8").splitlines()]


def test_the_model_keeps_drafts_by_id_and_only_those_are_written(vault, fake_llm):
    add_episodes(vault, TURNS)
    seen: list[dict[str, str]] = []

    def keep_postgres_and_tables(body):
        d = drafts(body)
        seen.append(d)
        return json.dumps({"keep": [c for c, t in d.items() if "Postgres" in t or "Markdown" in t], "add": []})

    fake_llm.set_default(keep_postgres_and_tables)
    s = run(vault, fake_llm)
    assert not s.failed and s.pending_after == 0 and s.calls == 1
    shown = seen[0]
    assert len(shown) >= 3 and any("Lena" in t for t in shown.values())  # the offline engine's drafts, numbered
    titles = [c.title for c in cards(vault)]
    assert len(titles) == 2 and any("Postgres 16" in t for t in titles) and any("Markdown" in t for t in titles)
    assert s.repairs["drafts_dropped"] == len(shown) - 2
    [line] = [j for j in journal(vault) if j["type"] == "distill"]
    assert line["engine"] == "llm" and line["usage"]["completion_tokens"] == s.completion_tokens
    prompt = fake_llm.requests[0]["body"]["messages"]
    assert "Draft cards:" in prompt[1]["content"] and '{"keep": ["c0", "c2"], "add": []}' in prompt[0]["content"]


def test_a_correction_is_taken_when_it_rests_on_the_turn_and_an_addition_is_grounded(vault, fake_llm):
    add_episodes(vault, TURNS)

    def correct(body):
        d = drafts(body)
        lena = next(c for c, t in d.items() if "Lena" in t)
        pg = next(c for c, t in d.items() if "Postgres" in t)
        return json.dumps({"keep": [[lena, "fact", "The user's sister Lena lives in Denver now"],
                                    [pg, "fact", "The user owns a yacht named Postgres"]],
                           "add": [["e1", "fact", "The user thanks the assistant"],
                                   ["e0", "rule", "Answers always use Markdown tables"]]})

    fake_llm.set_default(correct)
    s = run(vault, fake_llm)
    titles = [c.title for c in cards(vault)]
    assert "The user's sister Lena lives in Denver now" in titles  # grounded: taken
    assert any("Postgres 16" in t for t in titles) and not any("yacht" in t for t in titles)  # not: the draft
    assert s.repairs["statement_fixed"] == 1 and s.repairs["fix_dropped"] == 1
    assert not any("thanks" in t for t in titles)  # an addition about the talk itself is dropped
    assert any("Markdown tables" in t for t in titles)
    assert {c.kind for c in cards(vault) if "Lena" in c.title} == {"fact"}


def test_a_review_that_keeps_nothing_is_split_then_falls_back_to_marked_offline_cards(vault, fake_llm):
    add_episodes(vault, TURNS)
    fake_llm.set_default(lambda body: '{"keep": [], "add": []}')  # what the 1.5B model answers under a grammar
    s = run(vault, fake_llm)
    assert s.calls == 3 and not s.failed and s.pending_after == 0  # the batch, then its two halves
    written = cards(vault)
    assert len(written) >= 3 and all("offline-fallback" in c.tags for c in written)  # never less than offline
    outcomes = [e["outcome"] for e in s.suspect]
    assert outcomes == ["split", "offline", "offline"]
    lines = [j for j in journal(vault) if j["type"] == "distill_suspect"]
    assert [j["outcome"] for j in lines] == outcomes and all(j["offline_cards"] > 0 for j in lines)
    assert {j["engine"] for j in journal(vault) if j["type"] == "distill"} == {"offline"}  # --upgrade resends


def test_a_review_of_one_turn_that_keeps_nothing_falls_back_too(vault, fake_llm):
    add_episodes(vault, TURNS[2:3])
    fake_llm.set_default(lambda body: '{"keep": [], "add": []}')
    s = run(vault, fake_llm)
    assert s.calls == 1 and [e["outcome"] for e in s.suspect] == ["offline"]
    assert [("offline-fallback" in c.tags, "Postgres 16" in c.title) for c in cards(vault)] == [(True, True)]


def test_a_review_that_keeps_one_half_lets_the_other_half_s_nothing_stand(vault, fake_llm):
    add_episodes(vault, TURNS)

    def only_in_halves(body):
        d = drafts(body)
        keep = [c for c, t in d.items() if "Postgres" in t] if len(d) < 3 else []
        return json.dumps({"keep": keep, "add": []})

    fake_llm.set_default(only_in_halves)
    s = run(vault, fake_llm)
    assert [e["outcome"] for e in s.suspect] == ["split", "empty"]
    assert [c.title for c in cards(vault) if "offline-fallback" not in c.tags] == \
        [c.title for c in cards(vault)] and any("Postgres 16" in c.title for c in cards(vault))


def test_a_reply_that_judges_no_draft_fails_the_batch_after_one_retry(vault, fake_llm):
    ids = add_episodes(vault, TURNS)
    fake_llm.set_default(lambda body: '{"verdict": "looks fine"}')
    s = run(vault, fake_llm)
    assert s.calls == 2 and s.failures["invalid_output"] == 1 and s.pending_after == len(ids)
    retry = fake_llm.requests[1]["body"]["messages"][-1]["content"]
    assert '{"keep": ["c0", ...]' in retry
    [failed] = [j for j in journal(vault) if j["type"] == "distill_failed"]
    assert failed["episodes"] == ids and failed["failure"] == "invalid_output"
    assert cards(vault) == []


def test_a_reply_cut_in_its_additions_keeps_its_keep_list(vault, fake_llm):
    add_episodes(vault, TURNS)
    fake_llm.set_default(lambda body: {"content": '{"keep": ["c0"], "add": [["e0", "fact", "The user lo',
                                       "finish_reason": "length"})
    s = run(vault, fake_llm)
    assert s.calls == 1 and not s.failed and s.repairs["add_cut"] == 1
    assert len(cards(vault)) == 1


def test_the_write_protocol_stays_an_option(vault, fake_llm):
    add_episodes(vault, TURNS[:1])
    cfg = vault / "memvault.yaml"
    text = cfg.read_text(encoding="utf-8")
    assert "  llm_protocol: review " in text  # the template says which protocol a new vault uses
    cfg.write_text(text.replace("  llm_protocol: review ", "  llm_protocol: write  "), encoding="utf-8")
    fake_llm.set_default(lambda body: '{"cards": [["e0", "preference", "The user wants answers in Markdown tables"]]}')
    s = run(vault, fake_llm)
    assert "Draft cards:" not in fake_llm.requests[0]["body"]["messages"][1]["content"]
    assert [c.title for c in cards(vault)] == ["The user wants answers in Markdown tables"] and not s.failed


def test_labels_drop_the_drafts_called_chat_and_set_the_kind_of_the_others(vault, fake_llm):
    add_episodes(vault, TURNS)

    def label(body):
        return json.dumps({c: ("chat" if "Lena" in t else "fact" if "Postgres" in t else "rule")
                           for c, t in drafts(body).items()} | {"add": []})

    fake_llm.set_default(label)
    s = run(vault, fake_llm)
    got = {c.title: c.kind for c in cards(vault)}
    assert not any("Lena" in t for t in got) and s.repairs["drafts_dropped"] >= 1
    assert [k for t, k in got.items() if "Postgres 16" in t] == ["fact"]
    assert [k for t, k in got.items() if "Markdown" in t] == ["rule"]


def test_upgrade_reviews_extracted_cards_without_writing_them_again(vault, fake_llm):
    add_episodes(vault, TURNS)
    offline = run(vault, fake_llm, engine="offline")
    before = {c.id: c.title for c in cards(vault)}
    assert offline.created == len(before) >= 3 and offline.calls == 0

    def keep_all_fix_lena(body):
        d = drafts(body)
        return json.dumps({"keep": [[c, "fact", "The user's sister Lena lives in Denver now"] if "Lena" in t else c
                                    for c, t in d.items()], "add": []})

    fake_llm.set_default(keep_all_fix_lena)
    s = run(vault, fake_llm, upgrade=True)
    assert s.calls == 1 and s.episodes_distilled == len(TURNS) and not s.failed
    assert (s.created, s.superseded) == (1, 1)  # only the corrected draft replaces its extracted card
    after = {c.id: (c.title, c.status) for c in cards(vault)}
    assert [t for t, st in after.values() if st == "superseded"] == [t for t in before.values() if "Lena" in t]
    assert run(vault, fake_llm, upgrade=True).pending_before == 0  # the journal says the model read them


def test_a_review_that_only_adds_where_it_kept_no_draft_is_checked_as_keeping_nothing(vault, fake_llm):
    add_episodes(vault, TURNS)
    fake_llm.set_default(lambda body: '{"keep": [], "add": [["e0", "fact", "The user likes Markdown tables"]]}')
    s = run(vault, fake_llm)
    assert s.suspect and s.repairs["add_dropped"] >= 1
    assert any("Postgres 16" in c.title for c in cards(vault))  # the drafts come back, marked


FRIENDS = [  # (Maya's message, Jonah's answer): more turns than a review reads at once (distill.review_episodes)
    ("Hey Jonah! I adopted a rescue dog on Saturday, his name is Biscuit.", "No way! What breed is he?"),
    ("He's a terrier mix, about two years old.", "Cute. How is work going?"),
    ("I started a new job at a bakery downtown last month.", "Nice! Do you still paint?"),
    ("I still paint landscapes on Sundays, mostly watercolors.", "Lovely. Did you do anything else this week?"),
    ("We went to the lake with my sister and played Catan all night.", "Fun! Anything planned for the summer?"),
    ("I adopted Biscuit, a rescue terrier, on Saturday and he already knows his name.", "Haha, smart dog."),
]


def _friends(root: Path) -> None:
    from memvault.model import Episode
    from memvault.vault import codec
    from memvault.vault.files import append_lines

    vault = Vault.open(root, {})
    eps = [Episode(id=f"ep-20260310T18{i:02d}00Z-{i:06x}", at=f"2026-03-10T18:{i:02d}:00Z", project="friends",
                   session="s1", turn=i + 1, user=user, assistant=reply, hash=f"sha256:{i}",
                   source={"kind": "jsonl"}, speakers={"user": ["Maya"], "assistant": ["Jonah"]})
           for i, (user, reply) in enumerate(FRIENDS)]
    append_lines(vault.day_file("2026-03-10T00:00:00Z"), [codec.episode_to_line(e) for e in eps])


def test_a_review_that_keeps_every_draft_writes_what_the_offline_engine_writes(vault, fake_llm, tmp_path):
    """Batches of a few turns lose nothing the offline engine's one pass keeps: a batch's first turn still has the
    question the turn before it asked (in the card's body), and a fact told again in a later batch joins its card."""
    import shutil

    _friends(vault)
    other = tmp_path / "offline"
    shutil.copytree(vault, other)
    fake_llm.set_default(lambda body: json.dumps({"keep": list(drafts(body)), "add": []}))
    s = run(vault, fake_llm)
    assert s.calls >= 2 and not s.failed and not s.suspect  # the turns took more than one review
    assert run(other, fake_llm, engine="offline").calls == 0

    def written(root):
        return sorted((c.title, c.body, c.episodes) for c in cards(root) if c.status == "active")

    assert written(vault) == written(other)
    bodies = " ".join(c.body for c in cards(vault))
    assert "(Jonah asked: Did you do anything else this week?)" in bodies  # asked at the end of the first review
    [dog] = [c for c in cards(vault) if "Biscuit" in c.title]
    assert len(dog.episodes) == 2  # told in the first review and again in the second: one card
