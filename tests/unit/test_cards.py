"""Pure card logic: schema validation, ids, near-duplicate merge (threshold measured here), supersede."""

from __future__ import annotations

import json

import pytest

from memvault.distill import cards as cl
from memvault.vault.codec import card_to_text, parse_card
from memvault.vault.config import DEFAULTS
from memvault.model import Card

KINDS = tuple(DEFAULTS["kinds"])
THRESHOLD = DEFAULTS["distill"]["merge_threshold"]

# The measurement behind distill.merge_threshold (FORMAT.md): real paraphrases that should merge, and unrelated
# or contradicting titles that must not. Scores (max of rapidfuzz ratio and token_sort_ratio on normalised
# titles): duplicates 89.7-100, unrelated 58-87.5; the substitution guard blocks every unrelated pair.
DUPLICATES = [
    ("Store memory as plain text files, not SQLite", "Store memory as plain-text files instead of SQLite"),
    ("Use Postgres for the search index", "Use PostgreSQL for the search index"),
    ("Export weekly reports as Markdown only", "Export weekly reports only as Markdown"),
    ("Deploy on Fridays is forbidden", "Deploying on Fridays is forbidden"),
    ("The API rate limit is 60 requests per minute", "API rate limit is 60 requests/minute"),
    ("Use pytest for all tests", "Use pytest for all the tests"),
    ("Vault files are UTF-8 encoded", "Vault files are encoded in UTF-8"),
    ("周报只导出 Markdown", "周报只导出Markdown格式"),
    ("导出命令定为 weekly export --md", "导出命令定为 `weekly export --md`"),
    ("用户喜欢简洁的回答", "用户喜欢简洁回答"),
    ("数据库改用 PostgreSQL", "数据库改用PostgreSQL。"),
    ("每周五不部署", "每周五不做部署"),
    ("项目使用 Python 3.11", "项目使用Python 3.11版本"),
]
UNRELATED = [
    ("Use Postgres for the search index", "Use SQLite for the search index"),
    ("Alice prefers dark mode", "Bob prefers dark mode"),
    ("Export weekly reports as Markdown only", "Export weekly reports as PDF only"),
    ("Store memory as plain text files, not SQLite", "Store cache in SQLite, not plain files"),
    ("Deploy on Fridays is forbidden", "Deploy on Mondays is allowed"),
    ("The API rate limit is 60 requests per minute", "The API timeout is 60 seconds"),
    ("Use pytest for all tests", "Use ruff for all linting"),
    ("周报只导出 Markdown", "周报只导出 PDF"),
    ("用户喜欢简洁的回答", "用户喜欢详细的回答"),
    ("数据库改用 PostgreSQL", "数据库改用 SQLite"),
    ("每周五不部署", "每周一部署"),
    ("项目使用 Python 3.11", "项目使用 Go 1.22"),
    ("Alice lives in Berlin", "Alice lives in Paris"),
    ("爱丽丝住在柏林", "爱丽丝住在巴黎"),
    ("Open question: which embedding model", "Open question: which vector database"),
]


@pytest.mark.parametrize("a,b", DUPLICATES)
def test_paraphrases_merge(a, b):
    assert cl.is_near_duplicate(a, b, THRESHOLD), (a, b, cl.title_score(a, b))


@pytest.mark.parametrize("a,b", UNRELATED)
def test_unrelated_or_contradicting_titles_never_merge(a, b):
    assert not cl.is_near_duplicate(a, b, THRESHOLD), (a, b, cl.title_score(a, b))


def test_score_alone_would_not_separate_them():
    # Why the guard exists: measured, duplicates score 89.7-100 and unrelated titles up to 87.5 ("Use Postgres
    # …" vs "Use SQLite …"): a 2-point margin. Some unrelated pairs pass the threshold on score alone.
    assert min(cl.title_score(a, b) for a, b in DUPLICATES) >= THRESHOLD
    assert any(cl.title_score(a, b) >= THRESHOLD for a, b in UNRELATED)
    assert all(cl.is_substitution(a, b) for a, b in UNRELATED)


def card(cid="c-20261102-aaaaaa", **kw) -> Card:
    base = dict(id=cid, kind="decision", title="Use Postgres", body="short", project="p", created="2026-11-02T08:00:00Z",
                valid_from="2026-11-02", source={"kind": "distill", "run": "r", "episodes": ["ep-1"]})
    base.update(kw)
    return Card(**base)


def test_merge_keeps_fuller_body_and_unions_sources():
    old = card(body="short", entities=("postgres",))
    new = card("c-20261103-bbbbbb", title="Use PostgreSQL", body="a much fuller body with the reason",
               entities=("db",), source={"kind": "distill", "run": "r2", "episodes": ["ep-2", "ep-1"]})
    merged = cl.merge_into(old, new)
    assert merged.id == old.id and merged.body == new.body and merged.title == "Use PostgreSQL"
    assert merged.episodes == ("ep-1", "ep-2") and merged.entities == ("postgres", "db")


def test_find_duplicate_never_across_projects_nor_when_superseding():
    old = card(title="Store memory as plain text files")
    same = card("c-2", title="Store memory as plain-text files")
    assert cl.find_duplicate(same, [old], THRESHOLD) == old
    assert cl.find_duplicate(card("c-3", title=same.title, project="other"), [old], THRESHOLD) is None
    assert cl.find_duplicate(card("c-4", title=same.title, supersedes=("c-x",)), [old], THRESHOLD) is None
    assert cl.find_duplicate(card("c-5", title=same.title, kind="fact"), [old], THRESHOLD) is None


def test_state_conflicts_only_for_the_same_subject_and_field():
    berlin = card("c-1", kind="state", subject="alice", field="city", value="Berlin", title="Alice in Berlin")
    paris = card("c-2", kind="state", subject="Alice", field="City", value="Paris", title="Alice in Paris")
    bob = card("c-3", kind="state", subject="bob", field="city", value="Paris", title="Bob in Paris")
    job = card("c-4", kind="state", subject="alice", field="job", value="pilot", title="Alice is a pilot")
    assert cl.state_conflicts(paris, [berlin, bob, job]) == [berlin]
    assert cl.state_conflicts(bob, [berlin, job]) == []


def test_supersede_links_both_ways_and_sets_valid_to():
    old, new = card("c-1", valid_from="2026-10-01"), card("c-2", valid_from="2026-11-02")
    old2, new2 = cl.supersede(old, new)
    assert old2.status == "superseded" and old2.valid_to == "2026-11-02" and old2.superseded_by == ("c-2",)
    assert new2.status == "active" and new2.supersedes == ("c-1",)


def test_card_learned_late_but_true_earlier_is_born_superseded():
    active, late = card("c-1", valid_from="2026-11-02"), card("c-2", valid_from="2026-09-01")
    active2, born = cl.supersede(active, late)
    assert born.status == "superseded" and born.valid_to == "2026-11-02" and born.superseded_by == ("c-1",)
    assert active2.status == "active" and active2.supersedes == ("c-2",)


def test_card_ids_are_deterministic_and_avoid_taken_ones():
    a = cl.card_id("2026-11-02T08:00:00Z", "b-1:0")
    assert a == cl.card_id("2026-11-02T08:00:00Z", "b-1:0") and a.startswith("c-20261102-")
    assert cl.card_id("2026-11-02T08:00:00Z", "b-1:0", {a}) not in {a}


def good(**kw):
    item = {"action": "create", "kind": "decision", "title": "Use Postgres", "body": "why", "entities": ["pg"],
            "project": "p", "valid_from": "2026-11-02", "confidence": "user_stated", "episodes": ["e0"]}
    item.update(kw)
    return {"cards": [item]}


@pytest.mark.parametrize("data,needle", [
    ([], "JSON object"),
    ({"memories": []}, "top-level"),
    ({"cards": "none"}, "list"),
    ({"cards": ["a title"]}, "object"),
    (good(kind="gossip"), "kind"),
    (good(title=""), "title"),
    (good(title="x" * 500), "longer"),
    (good(body="y" * 5000), "longer"),
    (good(entities="pg"), "entities"),
    (good(entities=["e"] * 50), "more than"),
    (good(valid_from="yesterday"), "valid_from"),
    (good(confidence="sure"), "confidence"),
    (good(episodes=["e9"]), "episodes"),
    (good(action="update", target=7), "target"),
    (good(action="delete"), "action"),
    (good(kind="state"), "subject"),
    (good(extra_key=1), "unknown"),
    ({"cards": [good()["cards"][0]] * 50}, "per episode"),
])
def test_invalid_output_is_named(data, needle):
    with pytest.raises(cl.InvalidOutput) as exc:
        cl.validate_output(data, n_episodes=2, n_related=1, kinds=KINDS)
    assert needle in str(exc.value)


def test_valid_output_is_cleaned_to_one_line_and_safe_yaml():
    [p] = cl.validate_output(good(title="evil\nstatus: retracted\x00", body="<script>x</script>\n\nok"),
                             n_episodes=1, n_related=0, kinds=KINDS)
    assert p.title == "evil status: retracted" and "\x00" not in p.title
    c = card(title=p.title, body=p.body)
    back = parse_card(card_to_text(c), "x.md")
    assert back.status == "active" and back.title == p.title and back.body == p.body


def test_schema_for_json_schema_mode_is_the_compact_reply():
    schema = json.loads(json.dumps(cl.output_schema(KINDS)))
    card = schema["properties"]["cards"]["items"]
    assert card["type"] == "array" and card["items"] == {"type": "string"}
    assert (card["minItems"], card["maxItems"]) == (3, 6)  # episode, kind, statement (+ subject, new, old)


def test_distilled_ids_follow_rollbacks():
    journal = [{"type": "distill", "batch": "b1", "episodes": ["a", "b"]},
               {"type": "distill", "batch": "b2", "episodes": ["c"]},
               {"type": "rollback", "batches": ["b1"]}]
    assert cl.distilled_ids(journal) == {"c"}
