"""The dense ("meaning") layer against a real HTTP embeddings server on 127.0.0.1 (tests/fake_embed.py):
hybrid search, filters, fallbacks, dimensions, models, keys, prefixes. CLI-level runs go through the real app."""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import sqlite3
import string
from pathlib import Path

import pytest

from fake_embed import FakeEmbed
from memvault.errors import EmbedError, NoMatch
from memvault.search import service as svc
from services.search_helpers import card, write

SYN = {"vehicle": "automobile", "站会": "晨会"}


def configure(root: Path, **values) -> None:
    """Set keys of the `embeddings:` section of the vault's memvault.yaml."""
    path = root / "memvault.yaml"
    text = path.read_text(encoding="utf-8")
    head, sec = text.split("\nembeddings:\n", 1)
    for key, value in values.items():
        sec, n = re.subn(rf"(?m)^  {key}: .*$", f"  {key}: {json.dumps(value)}", sec)
        assert n == 1, key
    path.write_text(head + "\nembeddings:\n" + sec, encoding="utf-8")


def fill(root: Path) -> None:
    write(root,
          card("c-261101-aaaa", "Lin bought an automobile in March", "paid in cash, blue hatchback"),
          card("c-261102-bbbb", "团队决定采用晨会制度", "每天九点十五分开始，十分钟以内"),
          card("c-261103-cccc", "Postgres for the orders service", "sqlite serialises writers", project="shop"),
          card("c-261104-dddd", "Deploys only on weekdays", "never on Friday evening", kind="rule"),
          card("c-261105-eeee", "Invoices are sent on the first of the month", "by the billing job"))


def search(root: Path, query: str, env=None, **kw):
    cfg = svc.settings(root, os.environ)
    opts = svc.options_from(cfg["search"], cfg["kinds"], embeddings=cfg["embeddings"], **kw)
    return svc.run_search(root, query, opts, deny=cfg["deny"], env=env or {})


def stored(root: Path, space: str = "card") -> int:
    path = root / ".memvault" / "vectors.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM vectors WHERE space = ?", (space,)).fetchone()[0]


@pytest.fixture
def fake():
    with FakeEmbed(dim=256, model="fake-e5", synonyms=SYN) as server:
        yield server


@pytest.fixture
def hybrid(vault, fake):
    fill(vault)
    configure(vault, base_url=fake.base_url, model="fake-e5", admit=0.15)
    return vault


@pytest.mark.parametrize("query, expect", [("which vehicle", "c-261101-aaaa"),
                                           ("每日站会", "c-261102-bbbb")])
def test_hybrid_finds_a_card_that_shares_no_word_with_the_question(hybrid, run, query, expect):
    run("embed")
    hits = search(hybrid, query).hits
    assert hits[0].id == expect
    assert re.fullmatch(r"meaning 0\.\d\d", hits[0].why[0]), hits[0].why
    assert hits[0].path and hits[0].title and hits[0].snippet  # a full hit, not a bare key
    out = run("search", query).stdout
    assert expect in out and re.search(r"why: meaning 0\.\d\d", out)
    assert run.json("search", query)["hits"][0]["why"][0].startswith("meaning ")
    configure(hybrid, base_url="")  # the same question with embeddings off: no word in common, no hit
    with pytest.raises(NoMatch):
        search(hybrid, query)


def test_a_hit_found_both_ways_keeps_its_words_and_adds_its_meaning(hybrid, run):
    run("embed")
    hit = search(hybrid, "automobile Lin").hits[0]
    assert hit.id == "c-261101-aaaa" and hit.why[0].startswith("matched: ") and hit.why[-1].startswith("meaning ")


def test_dense_hits_respect_project_kind_and_retracted(hybrid, run):
    run("embed")
    assert search(hybrid, "which vehicle", limit=3).hits[0].id == "c-261101-aaaa"
    with pytest.raises(NoMatch):
        search(hybrid, "which vehicle", project="shop")
    with pytest.raises(NoMatch):
        search(hybrid, "which vehicle", kind="rule")
    run("forget", "c-261101-aaaa", "--retract")
    with pytest.raises(NoMatch):
        search(hybrid, "which vehicle")
    assert search(hybrid, "which vehicle", include_all=True).hits[0].id == "c-261101-aaaa"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("how", ["refused", "503", "timeout"])
def test_a_dead_endpoint_never_blocks_a_search(hybrid, run, fake, how):
    run("embed")
    if how == "refused":
        configure(hybrid, base_url=f"http://127.0.0.1:{_closed_port()}/v1")
    elif how == "503":
        fake.status = 503
    else:
        fake.delay = 30.0  # 60 times the client's timeout: "timed out" whatever the load
        configure(hybrid, timeout=0.5)
    before = len(fake.requests)
    result = search(hybrid, "Postgres orders")
    assert [h.id for h in result.hits] == ["c-261103-cccc"]
    assert len(result.warnings) == 1 and "showing word matches only" in result.warnings[0]
    assert "embeddings endpoint http://127.0.0.1:" in result.warnings[0]
    if how == "503":
        assert len(fake.requests) - before == 2  # retried once
    res = run("search", "Postgres", "orders")  # the CLI: hits on stdout, one warning line on stderr, exit 0
    assert "c-261103-cccc" in res.stdout
    assert res.stderr.count("warning:") == 1
    res = run("search", "nothing like this here", code=1)  # exit code as without embeddings
    assert res.stderr.count("warning:") == 1


def test_the_fast_path_falls_back_the_same_way(hybrid, run):
    import subprocess
    import sys

    run("embed")
    configure(hybrid, base_url=f"http://127.0.0.1:{_closed_port()}/v1")
    out = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(hybrid), "search", "Postgres", "orders"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "c-261103-cccc" in out.stdout
    assert out.stderr.count("memvault: warning:") == 1 and "cannot connect" in out.stderr


def test_a_wrong_dimension_is_a_clear_error_and_nothing_is_stored(hybrid, run, fake):
    configure(hybrid, dimensions=32)
    res = run("embed", code=5)
    assert f"embeddings endpoint {fake.base_url}/embeddings" in res.stderr
    assert "256-dimensional" in res.stderr and "embeddings.dimensions is 32" in res.stderr
    assert stored(hybrid) == 0
    configure(hybrid, dimensions=0)
    run("embed")
    assert stored(hybrid) == 5
    fake.dim = 48  # the server changed under the same model name
    write(hybrid, card("c-261106-ffff", "A sixth card", "about nothing much"))
    res = run("embed", code=5)
    assert "48-dimensional" in res.stderr and "have 256" in res.stderr
    assert stored(hybrid) == 5
    result = search(hybrid, "Postgres orders")  # a search still answers by words, and says why
    assert result.hits[0].id == "c-261103-cccc" and result.warnings


def test_a_changed_model_forces_a_re_embed_and_says_so(hybrid, run, fake):
    fake.models = None
    assert run.json("embed")["embedded"] == {"card": 5}
    assert run.json("embed")["embedded"] == {"card": 0}  # incremental: nothing new
    configure(hybrid, model="fake-e5-v2")
    warned = search(hybrid, "Postgres orders").warnings
    assert any("vectors are for model fake-e5, not fake-e5-v2" in w for w in warned)
    res = run("embed")
    assert "model changed from fake-e5 to fake-e5-v2" in res.stderr
    assert "embedded 5 cards" in res.stdout
    assert [r["body"]["model"] for r in fake.requests][-1] == "fake-e5-v2"
    assert not search(hybrid, "Postgres orders").warnings


def test_the_key_comes_from_the_variable_key_env_names_and_is_never_shown(hybrid, run, fake):
    key = "sk-" + "proj-" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    fake.key = key
    configure(hybrid, api_key_env="MY_EMBED_KEY")
    res = run("embed", code=5)  # the variable is not set
    assert "MY_EMBED_KEY" in res.stderr and key not in res.stdout + res.stderr
    res = run("embed", code=5, env={"MY_EMBED_KEY": key + "x"})  # a wrong key: 401
    assert "HTTP 401" in res.stderr and key not in res.stdout + res.stderr
    res = run("embed", env={"MY_EMBED_KEY": key})
    assert fake.requests[-1]["headers"]["authorization"] == f"Bearer {key}"
    assert key not in res.stdout + res.stderr
    assert key not in (hybrid / "memvault.yaml").read_text() + "".join(
        p.read_bytes().decode("latin-1") for p in (hybrid / ".memvault").iterdir() if p.is_file())
    result = search(hybrid, "which vehicle", env={"MY_EMBED_KEY": key})
    assert result.hits[0].id == "c-261101-aaaa" and not result.warnings
    configure(hybrid, api_key_env=key)  # the key itself pasted into api_key_env by mistake: never echoed
    res = run("embed", code=5)
    assert "embeddings.api_key_env" in res.stderr and key not in res.stdout + res.stderr
    result = search(hybrid, "Postgres orders")
    assert result.warnings and key not in " ".join(result.warnings)


def test_prefixes_and_input_type_are_sent(hybrid, run, fake):
    configure(hybrid, query_prefix="query: ", passage_prefix="passage: ", input_type=True)
    run("embed")
    first = fake.requests[0]["body"]
    assert first["input_type"] == "passage" and all(t.startswith("passage: ") for t in first["input"])
    search(hybrid, "每日站会")
    last = fake.requests[-1]["body"]
    assert last["input"] == ["query: 每日站会"] and last["input_type"] == "query"
    configure(hybrid, input_type=False)
    search(hybrid, "vehicle")
    assert "input_type" not in fake.requests[-1]["body"]


def test_a_few_new_cards_are_embedded_by_the_search_many_only_warned(hybrid, run, fake):
    run("embed")
    write(hybrid, card("c-261107-gggg", "Lin sold the old automobile", "to a neighbour"))
    result = search(hybrid, "vehicle sale")
    assert "c-261107-gggg" in [h.id for h in result.hits] and not result.warnings
    assert stored(hybrid) == 6
    write(hybrid, *[card(f"c-2612{i:02d}-h{i:03d}", f"Note number {i}", "filler text") for i in range(1, 11)])
    result = search(hybrid, "vehicle sale")
    assert "10 cards have no vector yet: run memvault embed" in result.warnings
    assert stored(hybrid) == 6 and result.hits
    assert "10 cards have no vector yet: run memvault embed" in search(hybrid, "vehicle sale").warnings  # cached
    run("embed")
    assert not search(hybrid, "vehicle sale").warnings and stored(hybrid) == 16
    write(hybrid, card("c-261230-zzzz", "Lin parked the automobile downtown", "near the river"))
    result = search(hybrid, "vehicle parked")  # the cached count (0 missing) is stale: the index changed
    assert not result.warnings and stored(hybrid) == 17 and result.hits[0].id == "c-261230-zzzz"


def test_remember_embeds_its_card_and_a_dead_endpoint_only_warns(hybrid, run, fake):
    run("embed")
    run("remember", "Our family vehicle is a tram pass", "--kind", "fact")
    assert any("family automobile" in t or "family vehicle" in t for t in fake.texts)
    assert stored(hybrid) == 6
    configure(hybrid, base_url=f"http://127.0.0.1:{_closed_port()}/v1")
    res = run("remember", "Second card while the server is down", "--kind", "fact")
    assert "warning: new cards not embedded" in res.stderr and "run memvault embed" in res.stderr


def test_episodes_are_found_by_meaning_with_episodes(hybrid, run, fake):
    run("capture", input='{"role":"user","content":"my brother wants to buy a vehicle soon","session":"s"}\n'
                         '{"role":"assistant","content":"good luck with that","session":"s"}\n')
    res = run("embed", "--episodes", "--json")
    assert json.loads(res.stdout)["embedded"] == {"card": 5, "episode": 1}
    hits = search(hybrid, "automobile shopping", episodes=True).hits
    ep = [h for h in hits if h.kind == "episode"]
    assert ep and ep[0].refs is not None and any(w.startswith("meaning ") or w.startswith("matched") for w in ep[0].why)
    hits = search(hybrid, "brother automobile", episodes=True).hits
    assert any(h.kind == "episode" for h in hits)


def test_client_checks_one_vector_per_text(fake):
    from memvault.search.dense.client import EmbedClient
    from memvault.search.dense.settings import from_section

    s = from_section({"base_url": fake.base_url, "model": "fake-e5", "batch": 2})
    with EmbedClient(s, {}) as client:
        vecs = client.embed(["a b", "c", "a b"])
    assert len(vecs) == 3 and vecs[0] == vecs[2] and len(vecs[0]) == 256
    assert [len(r["body"]["input"]) for r in fake.requests] == [2, 1]
    fake.status = 500
    with pytest.raises(EmbedError, match="HTTP 500"), EmbedClient(s, {}) as client:
        client.embed(["x"])


def test_distill_embeds_its_new_cards(hybrid, run, fake):
    run("embed")
    run("capture", input='{"role":"user","content":"小账本的后端我们决定用 FastAPI，Django 太重了。","session":"d"}\n'
                         '{"role":"assistant","content":"好的。","session":"d"}\n'
                         '{"role":"user","content":"Let us go with the mini PC for Jellyfin.","session":"d"}\n'
                         '{"role":"assistant","content":"Done.","session":"d"}\n')
    res = run("distill", "--json")  # the offline engine: no llm.base_url
    created = json.loads(res.stdout)["cards"]["created"]
    assert created >= 1
    assert stored(hybrid) == 5 + created and "warning" not in res.stderr


def test_mcp_search_fuses_and_returns_the_warnings(hybrid, run, fake):
    from memvault.mcp import tools

    run("embed")
    ctx = tools.Ctx(hybrid, {})
    reply = tools.search(ctx, "which vehicle")
    # Memory text is marked as quoted data (memvault.mcp.guard.mark): the mark the notice names wraps it.
    mark = next(w for w in reply.data["_notice"].split() if w.startswith("<<<MEMVAULT-MEMORY-"))
    assert reply.data["hits"][0]["id"] == "c-261101-aaaa"
    assert reply.data["hits"][0]["why"][0].startswith(mark + "meaning ")
    fake.status = 503
    reply = tools.search(ctx, "Postgres orders")
    assert reply.data["hits"][0]["id"] == "c-261103-cccc"
    assert len(reply.data["warnings"]) == 1 and "HTTP 503" in reply.data["warnings"][0]


def test_a_deleted_vector_file_is_noticed_and_embedded_again(hybrid, run, fake):
    run("embed")
    (hybrid / ".memvault" / "vectors-card.f32").unlink()
    result = search(hybrid, "Postgres orders")
    assert result.hits[0].id == "c-261103-cccc"
    assert any("vectors-card.f32 is shorter than its key list" in w for w in result.warnings)
    res = run("embed")
    assert "re-embedding every card" in res.stderr and "embedded 5 cards" in res.stdout
    assert search(hybrid, "which vehicle").hits[0].id == "c-261101-aaaa"


def test_stats_says_how_many_cards_have_a_vector_and_never_the_key(hybrid, run, fake):
    key = "sk-" + "proj-" + secrets.token_hex(16)
    configure(hybrid, api_key_env="MY_EMBED_KEY")
    data = run.json("stats", env={"MY_EMBED_KEY": key})["embeddings"]
    assert data["cards_embedded"] == 0 and data["cards_missing"] == 5 and data["api_key"] == "env MY_EMBED_KEY (set)"
    run("embed", env={"MY_EMBED_KEY": key})
    out = run("stats", env={"MY_EMBED_KEY": key}).stdout
    assert "5 card vectors, 0 cards without one" in out and key not in out
    configure(hybrid, base_url="")
    assert "off (search by words only)" in run("stats").stdout


def test_episode_vectors_respect_the_project(hybrid, run, fake):
    run("capture", "--project", "home", input='{"role":"user","content":"my brother wants a vehicle","session":"s"}\n'
                                              '{"role":"assistant","content":"ok","session":"s"}\n')
    run("embed", "--episodes")
    assert any(h.kind == "episode" for h in search(hybrid, "automobile plans", episodes=True).hits)
    hits = []
    try:
        hits = search(hybrid, "automobile plans", episodes=True, project="work").hits
    except NoMatch:
        pass
    assert not any(h.kind == "episode" for h in hits)


def test_embed_compacts_the_rows_edited_cards_left_behind(hybrid, run, fake):
    from memvault.search.dense.embed import embed_missing
    from memvault.search.dense.settings import from_section
    from memvault.search.index import Index

    run("embed")
    write(hybrid,  # every card's text changes: five new rows, five old ones unused
          card("c-261101-aaaa", "Lin bought an automobile in March", "paid in cash, blue hatchback, edited"),
          card("c-261102-bbbb", "团队决定采用晨会制度", "每天九点开始"),
          card("c-261103-cccc", "Postgres for the orders service", "edited", project="shop"),
          card("c-261104-dddd", "Deploys only on weekdays", "edited", kind="rule"),
          card("c-261105-eeee", "Invoices are sent on the first of the month", "edited"))
    stray = hybrid / ".memvault" / "vectors-card-deadbeef.f32"  # left by a compaction killed midway
    stray.write_bytes(b"\0" * 64)
    settings = from_section({"base_url": fake.base_url, "model": "fake-e5"})
    with Index(hybrid) as idx:
        idx.refresh()
        report = embed_missing(idx, settings, {}, compact_at=6)
        assert report.embedded == {"card": 5} and not any("compacted" in n for n in report.notes)
        assert idx.vec_next_slot("card") == 10
        write(hybrid, card("c-261103-cccc", "Postgres for the orders service", "edited twice", project="shop"))
        idx.refresh()
        report = embed_missing(idx, settings, {}, compact_at=6)
        assert "compacted the card vectors: 6 unused rows dropped" in report.notes
        assert idx.vec_next_slot("card") == 5 and idx.vec_count("card") == 5
    files = sorted(p.name for p in (hybrid / ".memvault").glob("vectors-card*.f32"))
    assert len(files) == 1 and files[0] != "vectors-card.f32" and not stray.exists()
    assert (hybrid / ".memvault" / files[0]).stat().st_size == 5 * 256 * 4
    hit = search(hybrid, "which vehicle").hits[0]
    assert hit.id == "c-261101-aaaa" and hit.why[0].startswith("meaning ")
    assert search(hybrid, "每日站会").hits[0].id == "c-261102-bbbb"
    assert run.json("embed")["embedded"] == {"card": 0}


def test_a_card_that_stands_out_by_meaning_is_shown_below_the_measured_admit(vault, run):
    # The server answers as the model whose gates were measured (fusion.MEASURED_ADMIT 0.86 and MEASURED_STAND:
    # the nearest card, at 0.80 or more and 0.015 ahead of the second). "vehicle buying" shares no word with any
    # card; its meaning lands on {automobile, purchase}: the new card holds both and one word more (cosine 2/√6 ≈
    # 0.816, below 0.86), every other card at most one of them.
    from fake_embed import vector

    fill(vault)
    write(vault, card("c-261106-ffff", "Automobile purchase", "cash"))
    syn = {"vehicle": "automobile", "buying": "purchase"}
    q, c = vector("vehicle buying", 256, syn), vector("Automobile purchase\ncash", 256, syn)
    cos = sum(a * b for a, b in zip(q, c)) / (sum(a * a for a in q) * sum(b * b for b in c)) ** 0.5
    assert 0.80 <= cos < 0.86  # the case this test is about (no hash collision moved it)
    with FakeEmbed(dim=256, model="multilingual-e5-small", synonyms=syn) as server:
        configure(vault, base_url=server.base_url, model="multilingual-e5-small")
        run("embed")
        hits = search(vault, "vehicle buying").hits
        assert [h.id for h in hits] == ["c-261106-ffff"]
        assert hits[0].why == (f"meaning {cos:.2f}",)
        # a vault that sets its own admit cosine gets that gate alone: the card is not admitted
        configure(vault, admit=0.86)
        with pytest.raises(NoMatch):
            search(vault, "vehicle buying")
