"""Issue 33, pure parts: the compact reply (`["e0", "kind", "statement", ...]`) through validation and decide:
a statement is held to the turn it cites by its content words, relative dates are resolved against the turn's
day, an old value the turn never names supersedes nothing; harmless excesses are cut, in English and Chinese."""

from __future__ import annotations

from memvault.distill.compact import content_words, dated, grounded_in
from memvault.distill.decide import decide
from memvault.distill.proposals import TITLE_MAX, validate_output
from memvault.model import Card, Episode

KINDS = ("decision", "fact", "preference", "question", "event", "state", "rule", "thread", "synopsis", "reflection")


def ep(user: str, assistant: str = "ok", i: int = 0, names: dict | None = None, kind: str = "jsonl") -> Episode:
    return Episode(id=f"ep-{i}", at="2023-05-25T18:00:00Z", project="p", session="s", turn=i + 1, user=user,
                   assistant=assistant, speakers=names or {}, source={"kind": kind})


def run(batch: list[Episode], *items: list, cards: list[Card] | None = None, repairs: dict | None = None):
    repairs = {} if repairs is None else repairs
    proposals = validate_output({"cards": list(items)}, n_episodes=len(batch), n_related=0, kinds=KINDS,
                                repairs=repairs)
    out, related = decide(proposals, [], cards or [], batch, repairs)
    return out, related, repairs


FRIENDS = {"user": ["Nate"], "assistant": ["Joanna"]}


def test_a_statement_about_either_person_of_a_two_person_chat_is_kept_with_its_sentence_as_body():
    batch = [ep("Hey Joanna! I won my first video game tournament last week!",
                "Congrats Nate! I just finished my first screenplay, it's about loss.", names=FRIENDS)]
    out, _, repairs = run(batch, ["e0", "event", "Nate won his first video game tournament last week"],
                          ["e0", "event", "Joanna finished her first screenplay"],
                          ["e0", "fact", "Joanna has a cat named Tofu"])  # invented: no word of it was said
    assert [p.title for p in out] == ["Nate won his first video game tournament last week (2023-05-15)",
                                      "Joanna finished her first screenplay"]
    assert out[0].valid_from == "2023-05-15" and out[1].valid_from is None  # the Monday of last week
    assert out[0].body == "Nate: I won my first video game tournament last week!"  # the sentence that says it
    assert out[1].body.startswith("Joanna: ") and repairs == {"ungrounded_dropped": 1}


def test_the_statement_of_another_turn_moves_to_the_turn_that_says_it():
    batch = [ep("ok thanks", i=0), ep("The staging box runs Debian 12.", i=1)]
    out, _, _ = run(batch, ["e0", "fact", "The staging box runs Debian 12"])
    assert out[0].episodes == (1,)


def test_a_question_or_a_statement_with_no_content_word_is_dropped():
    batch = [ep("Which database should we use, Postgres?")]
    out, _, repairs = run(batch, ["e0", "decision", "Should the user use Postgres?"], ["e0", "fact", "The user"])
    assert out == [] and repairs == {"ungrounded_dropped": 2}


def test_chinese_statements_are_grounded_by_their_words():
    batch = [ep("算了，不用 SQLite 了，改用 Postgres 16。表名必须用小写。")]
    out, _, _ = run(batch, ["e0", "state", "数据库改用 Postgres 16，不再用 SQLite", "数据库", "Postgres 16", "SQLite"],
                    ["e0", "rule", "表名必须用小写"], ["e0", "fact", "服务器在东京机房"])
    assert [(p.kind, p.title) for p in out] == [("state", "数据库改用 Postgres 16，不再用 SQLite"), ("rule", "表名必须用小写")]
    assert (out[0].subject, out[0].value, out[0].old) == ("数据库", "Postgres 16", "SQLite")


def test_an_old_value_the_turn_never_names_supersedes_nothing():
    nas = Card(id="c1", kind="fact", title="NAS OS: TrueNAS Scale", body="", project="p", created="2023-05-01",
               valid_from="2023-05-01")
    batch = [ep("Jellyfin moves to the mini PC.")]
    out, related, repairs = run(batch, ["e0", "state", "Jellyfin now runs on the mini PC", "Jellyfin", "mini PC",
                                        "TrueNAS Scale"], cards=[nas])
    assert [(p.action, p.kind, p.old) for p in out] == [("create", "fact", None)] and related == []
    assert repairs == {"old_dropped": 1}


def test_limits_are_cut_not_rejected():
    long = "The user keeps " + "very " * 60 + "long notes in Obsidian"
    batch = [ep(long)]
    repairs: dict = {}
    items = [["e0", "fact", long]] + [["e0", "preference", f"The user keeps notes {i}"] for i in range(6)]
    proposals = validate_output({"cards": items}, n_episodes=1, n_related=0, kinds=KINDS, repairs=repairs)
    assert len(proposals) == 4 and len(proposals[0].title) <= TITLE_MAX and proposals[0].title.endswith("…")
    assert repairs == {"cards_cut": 1, "cut_long": 1}
    assert batch  # the batch is kept whole: nothing rejected


def test_dates_and_content_words():
    assert dated("Maya adopted a beagle last Saturday", "2023-05-25T18:00:00Z") == (
        "Maya adopted a beagle last Saturday (2023-05-20)", "2023-05-20")
    assert dated("Maya adopted a beagle on 2023-05-07", "2023-05-25T18:00:00Z") == (
        "Maya adopted a beagle on 2023-05-07", "2023-05-07")  # absolute: nothing added
    assert dated("Maya likes beagles", "2023-05-25T18:00:00Z") == ("Maya likes beagles", None)
    assert content_words("Nate won his first tournament last week", ["Nate"]) == ["won", "first", "tournament"]
    assert grounded_in("Gina lost her job at DoorDash", ["I also lost my job at Door Dash this month"], ["Gina"])[0]


def test_the_talk_itself_is_no_card():
    batch = [ep("Hey Joanna! I watched a romantic drama last night. [shares a photo of a dvd on a table]",
                "Nate, that sounds fun! Thanks for telling me.", names=FRIENDS)]
    out, _, repairs = run(batch, ["e0", "event", "Joanna and Nate discuss the romantic drama"],
                          ["e0", "event", "Nate shares a photo of a dvd on a table"],
                          ["e0", "event", "Joanna thanks Nate for telling her"],
                          ["e0", "event", "Nate watched a romantic drama last night"])
    assert [p.title for p in out] == ["Nate watched a romantic drama last night (2023-05-24)"]
    assert repairs == {"meta_dropped": 3}


def test_a_question_or_hedge_in_the_turn_gives_no_card_and_a_change_without_values_is_a_fact():
    batch = [ep("Should I put Jellyfin on the NAS or on the mini PC?", i=0),
             ep("Backups will move to restic at some point, not sure yet.", i=1),
             ep("The mini PC runs Proxmox now.", i=2),
             ep("We moved the NAS from TrueNAS Scale to Unraid over the weekend.", i=3)]
    out, _, repairs = run(batch, ["e0", "preference", "The user wants Jellyfin on the NAS or on the mini PC"],
                          ["e1", "rule", "Backups will move to restic"],
                          ["e2", "state", "The mini PC runs Proxmox"],  # a change with no values: a fact
                          ["e3", "state", "The NAS moved from TrueNAS Scale to Unraid", "NAS", "TrueNAS Scale",
                           "Unraid"])  # new and old swapped
    assert [(p.kind, p.title) for p in out] == [("fact", "The mini PC runs Proxmox"),
                                                ("state", "The NAS moved from TrueNAS Scale to Unraid")]
    assert (out[1].value, out[1].old) == ("Unraid", "TrueNAS Scale")
    assert repairs == {"question_dropped": 2, "kind_fixed": 2}


def test_a_state_that_states_no_change_is_a_fact():
    batch = [ep("Jonah here, I'm a loan officer at Harbor Bank.", i=0)]
    out, related, repairs = run(batch, ["e0", "state", "Jonah is a loan officer at Harbor Bank", "loan officer",
                                        "Jonah", "Harbor Bank"])
    assert [(p.kind, p.old) for p in out] == [("fact", None)] and related == [] and repairs == {"kind_fixed": 1}


def test_the_other_speakers_name_on_what_a_speaker_says_of_themselves_is_put_right():
    batch = [ep("Guess what, my sister Lena flew in from Denver!",
                "Nice! Big news here too: I quit Harbor Bank and teach science now.", names={"user": ["Maya"],
                                                                                             "assistant": ["Jonah"]})]
    out, _, repairs = run(batch, ["e0", "event", "Maya quit Harbor Bank and teaches science now"],
                          ["e0", "fact", "Maya's sister Lena flew in from Denver"])
    assert [p.title for p in out] == ["Jonah quit Harbor Bank and teaches science now",
                                      "Maya's sister Lena flew in from Denver"]
    assert repairs == {"speaker_fixed": 1}


def test_a_mood_of_the_moment_a_wish_to_know_and_a_plan_not_made_yet_are_no_cards():
    batch = [ep("Ugh I'm so tired today. Tell me more about Biscuit! I won't install anything on the mini PC yet.")]
    out, _, repairs = run(batch, ["e0", "fact", "The user is so tired today"],
                          ["e0", "preference", "The user wants to know more about Biscuit"],
                          ["e0", "fact", "The mini PC will not get anything installed yet"])
    assert out == [] and repairs == {"meta_dropped": 2, "question_dropped": 1}
