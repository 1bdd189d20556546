"""The tantivy candidate list (search/index/lists.py): the same candidates as FTS5, cards written since its last
commit found through the overlay, batched commits, other processes, a process without tantivy, a damaged folder,
and the same search results as FTS5 on the own eval."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memvault.errors import NoMatch
from memvault.search import service, tokenize
from memvault.search.index import CARD_FIELDS, CardFilter, Index, fts_all, fts_match
from memvault.search.index import lists
from memvault.search.candidates import CARD_WEIGHTS
from memvault.vault.files import flock

from search_helpers import card, write

import tantivy  # noqa: E402,F401 - the `fast` extra (`make test` installs it): these tests must not skip

WEIGHTS = [CARD_WEIGHTS[f] for f in CARD_FIELDS]
EVAL = Path(__file__).resolve().parents[2] / "eval"
FILTERS = [CardFilter(), CardFilter(include_all=True), CardFilter(project="web"), CardFilter(kind="fact"),
           CardFilter(include_all=True, project="other")]


@pytest.fixture
def tantivy_on(monkeypatch):
    monkeypatch.setenv("MEMVAULT_SEARCH_ENGINE", "tantivy")


def mixed_cards(prefix: str = "a", n: int = 40) -> list:
    out = []
    for i in range(n):
        words = ["postgres backup", "backup of the disk", "postgres replica", "数据库 备份", "caddy certificate"][i % 5]
        out.append(card(f"c-2025010{1 + i % 9}-{prefix}{i:03d}", f"{words} {i}", f"notes {i} about {words}",
                        project=("web", "other", None)[i % 3], kind="fact" if i % 2 else "decision",
                        status="retracted" if i % 7 == 3 else "active", entities=("postgres",) if i % 4 else ()))
    return out


@pytest.fixture
def built(vault, tantivy_on):
    write(vault, *mixed_cards())
    with Index(vault) as idx:
        idx.refresh()
        assert idx.meta("lists") and idx.meta("lists_ready") == idx.meta("lists")
        yield idx


def in_tantivy(idx: Index) -> int:
    tv, index = lists.load(), None
    index = tv.Index.open(str(idx._lists_dir(idx.meta("lists"))))
    index.reload()
    return index.searcher().num_docs


def fts5(idx: Index, terms: list[str], every: bool, flt: CardFilter, limit: int = 1000) -> list[int]:
    return [r for (r,) in idx.rank_cards(fts_all(terms) if every else fts_match(terms), WEIGHTS, flt, limit)]


@pytest.mark.parametrize("flt", FILTERS)
@pytest.mark.parametrize("query", ["postgres backup", "disk", "数据库", "caddy postgres", "nothing-here"])
def test_tantivy_proposes_the_cards_fts5_would(built, flt, query):
    terms = tokenize.tokens(query)
    for every in (False, True):
        got = built.card_candidates(terms, every, WEIGHTS, flt, 1000)
        assert sorted(got) == sorted(fts5(built, terms, every, flt)), (query, every)
        assert len(got) == len(set(got))
    assert built.count_card_matches(terms) == built.count_matches(fts_match(terms))


def thresholds(idx: Index, terms: list[str]) -> set[int]:
    """Thresholds around everything the decision could hinge on: the count, each document frequency, their sum."""
    df = list(idx.doc_freq(terms).values())
    points = {idx.count_card_matches(terms), max(df, default=0), sum(df), *df}
    return {max(0, p + d) for p in points for d in (-1, 0, 1)}


@pytest.mark.parametrize("query", ["postgres backup", "disk", "数据库 备份", "caddy postgres backup", "nothing-here zz"])
def test_more_than_a_threshold_is_the_count_compared(built, vault, query):
    """card_matches_above settles most comparisons from document frequencies; it must answer as the count does,
    with tantivy in step, with cards pending for tantivy (its count is then what it last saw), and on FTS5."""
    terms = tokenize.tokens(query)
    for t in thresholds(built, terms):
        assert built.card_matches_above(terms, t) == (built.count_card_matches(terms) > t), (query, t)
        assert built.card_matches_above(terms, t, built.doc_freq(terms)) == (built.count_card_matches(terms) > t)
    write(vault, card("c-20250301-new002", "postgres backup disk 数据库 备份", "caddy notes", project="web"))
    (vault / "cards" / "2025-01").joinpath("c-20250101-a000.md").unlink()
    built.refresh()
    assert built.db.execute("SELECT count(*) FROM tq").fetchone()[0] > 0  # tantivy lags: the pending path
    for t in thresholds(built, terms):
        assert built.card_matches_above(terms, t) == (built.count_card_matches(terms) > t), (query, t)
        assert built.card_matches_above(terms, t, built.doc_freq(terms)) == (built.count_card_matches(terms) > t)


def test_fts5_alone_compares_as_its_count(vault, monkeypatch, query="postgres backup disk"):
    monkeypatch.setenv("MEMVAULT_SEARCH_ENGINE", "fts5")
    write(vault, *mixed_cards())
    with Index(vault) as idx:
        idx.refresh()
        assert idx._lists() is None
        terms = tokenize.tokens(query)
        for t in thresholds(idx, terms):
            assert idx.card_matches_above(terms, t) == (idx.count_matches(fts_match(terms)) > t), t


def test_one_snapshot_of_the_list_per_refresh(built, vault):
    """Every list read of one search uses the same searcher and pending set; the next refresh takes a new one,
    which sees what other writers did meanwhile."""
    first = built._lists()
    assert built._lists() is first
    write(vault, card("c-20250301-new003", "Quillon plan", "quillon notes", project="web"))
    assert built._lists() is first  # no refresh yet: the search that opened it still reads the same pair
    built.refresh()
    again = built._lists()
    assert again is not first
    found = built.card_candidates(["quillon"], False, WEIGHTS, CardFilter(), 10)
    assert [built.card_id(r) for r in found] == ["c-20250301-new003"]


def test_a_short_page_holds_the_best_cards(built):
    """With a limit below the number of matches, the page is the top of the list: every card on it scores at
    least as well (by FTS5's bm25 with the same weights) as the best card left off, up to near-ties."""
    terms = tokenize.tokens("postgres backup")
    page = built.card_candidates(terms, False, WEIGHTS, CardFilter(), 8)
    assert len(page) == 8
    ranked = fts5(built, terms, False, CardFilter())
    assert set(page) <= set(ranked[:12])


def test_new_changed_and_deleted_cards_are_seen_before_tantivy_commits(built, vault):
    before = in_tantivy(built)
    write(vault, card("c-20250301-new001", "Zanfo migration plan", "zanfo notes", project="web"))
    (vault / "cards" / "2025-01").joinpath("c-20250101-a000.md").unlink()  # a postgres backup card
    write(vault, card("c-20250102-a001", "backup of the disk 1", "now also zanfo", project="other",
                      kind="fact", status="retracted"))
    built.refresh()
    assert 0 < built.db.execute("SELECT count(*) FROM tq").fetchone()[0] < lists.FLUSH
    assert in_tantivy(built) == before  # nothing committed to tantivy yet
    found = built.card_candidates(["zanfo"], False, WEIGHTS, CardFilter(), 10)
    assert [built.card_id(r) for r in found] == ["c-20250301-new001"]  # the retracted edit is filtered out
    everything = built.card_candidates(["zanfo"], False, WEIGHTS, CardFilter(include_all=True), 10)
    assert sorted(built.card_id(r) for r in everything) == ["c-20250102-a001", "c-20250301-new001"]
    ids = [built.card_id(r) for r in built.card_candidates(tokenize.tokens("postgres backup"), False, WEIGHTS,
                                                            CardFilter(include_all=True), 1000)]
    assert "c-20250101-a000" not in ids
    for flt in FILTERS:
        for q in ("postgres backup", "zanfo", "disk"):
            t = tokenize.tokens(q)
            assert sorted(built.card_candidates(t, False, WEIGHTS, flt, 1000)) == sorted(fts5(built, t, False, flt))


def test_changes_are_committed_in_one_batch_once_enough_wait(built, vault):
    before = in_tantivy(built)
    write(vault, *[card(f"c-20250401-b{i:03d}", f"Batch card {i} quokka", "body") for i in range(lists.FLUSH - 1)])
    built.refresh()
    assert in_tantivy(built) == before  # FLUSH - 1 waiting: the overlay answers
    assert len(built.card_candidates(["quokka"], False, WEIGHTS, CardFilter(), 500)) == lists.FLUSH - 1
    write(vault, card("c-20250401-b999", "Batch card last quokka", "body"))
    built.refresh()
    assert built.db.execute("SELECT count(*) FROM tq").fetchone()[0] == 0
    assert in_tantivy(built) == before + lists.FLUSH
    assert len(built.card_candidates(["quokka"], False, WEIGHTS, CardFilter(), 500)) == lists.FLUSH


def test_applying_the_same_changes_twice_leaves_one_document_each(built, vault):
    """A crash between tantivy's commit and the deletion of the queue rows applies them again: harmless."""
    write(vault, card("c-20250301-twice1", "Twice applied wombat", "body"))
    built.refresh()
    rowid = built.card_candidates(["wombat"], False, WEIGHTS, CardFilter(), 5)[0]
    assert built.sync_lists(force=True) == "applied"
    built.db.execute("INSERT INTO tq(card) VALUES (?)", (rowid,))  # as if the deletion had not happened
    assert built.sync_lists(force=True) == "applied"
    tv = lists.load()
    index = tv.Index.open(str(built._lists_dir(built.meta("lists"))))
    index.reload()
    hits = index.searcher().search(tv.Query.term_query(index.schema, "text", "wombat", index_option="freq"), 10)
    assert hits.count == 1


def test_another_process_applying_the_queue_does_not_block_a_search(built, vault):
    lock = vault / ".memvault" / "lists.lock"
    write(vault, *[card(f"c-20250501-c{i:03d}", f"Locked out card {i} numbat", "body") for i in range(lists.FLUSH)])
    with flock(lock, blocking=False):  # another open file description: as another process would hold it
        report = built.refresh()
        assert report.cards_added == lists.FLUSH
        assert built.db.execute("SELECT count(*) FROM tq").fetchone()[0] == lists.FLUSH  # not applied: busy
        assert len(built.card_candidates(["numbat"], False, WEIGHTS, CardFilter(), 500)) == lists.FLUSH
    built.refresh()
    assert built.db.execute("SELECT count(*) FROM tq").fetchone()[0] == 0


def test_a_process_without_tantivy_gives_the_list_up_and_the_next_one_builds_it_again(built, vault, monkeypatch):
    old = built.meta("lists")
    built.close()
    monkeypatch.setenv("MEMVAULT_SEARCH_ENGINE", "fts5")
    write(vault, card("c-20250601-d001", "Written without tantivy: dugong", "body"))
    with Index(vault) as idx:
        idx.refresh()
        assert idx.meta("lists") == "" and idx.db.execute("SELECT count(*) FROM tq").fetchone()[0] == 0
    monkeypatch.setenv("MEMVAULT_SEARCH_ENGINE", "tantivy")
    with Index(vault) as idx:
        idx.refresh()
        new = idx.meta("lists")
        assert new and new != old and idx.meta("lists_ready") == new
        assert not Path(idx._lists_dir(old)).exists()  # the old folder was removed
        assert [idx.card_id(r) for r in idx.card_candidates(["dugong"], False, WEIGHTS, CardFilter(), 5)] == \
            ["c-20250601-d001"]
        assert idx.db.execute("SELECT count(*) FROM tq").fetchone()[0] == 0


def test_a_damaged_folder_falls_back_to_fts5_and_reindex_mends_it(built, vault):
    folder = Path(built._lists_dir(built.meta("lists")))
    for f in folder.iterdir():
        if f.name.endswith(".json"):
            f.write_text("{not json", encoding="utf-8")
    built.close()
    with Index(vault) as idx:
        terms = tokenize.tokens("postgres backup")
        assert sorted(idx.card_candidates(terms, False, WEIGHTS, CardFilter(), 1000)) == \
            sorted(fts5(idx, terms, False, CardFilter()))
        write(vault, *[card(f"c-20250701-e{i:03d}", f"After damage {i} bilby", "b") for i in range(lists.FLUSH)])
        idx.refresh()  # applying fails: the list is given up, FTS5 answers, no error reaches the command
        assert idx.meta("lists") == "" and idx.meta("lists_failed") == "1"
        assert len(idx.card_candidates(["bilby"], False, WEIGHTS, CardFilter(), 500)) == lists.FLUSH
        idx.refresh()
        assert idx.meta("lists") == ""  # not retried at every search
        idx.refresh(full=True)  # what `memvault reindex` runs
        assert idx.meta("lists") and idx.meta("lists_ready") == idx.meta("lists")
        assert len(idx.card_candidates(["bilby"], False, WEIGHTS, CardFilter(), 500)) == lists.FLUSH


def test_auto_uses_tantivy_only_from_lists_from_cards(vault, monkeypatch):
    monkeypatch.delenv("MEMVAULT_SEARCH_ENGINE", raising=False)
    write(vault, *mixed_cards())
    with Index(vault) as idx:
        idx.refresh()
        assert idx.meta("lists") in (None, "") and lists.LISTS_FROM > 40
        assert not list((vault / ".memvault").glob("cards-*.tantivy"))


def test_search_results_are_the_same_with_tantivy_and_fts5_on_the_own_eval(tmp_path, monkeypatch):
    """Every question of eval/questions.jsonl over the eval fixture: the same hits, in the same order."""
    questions = [json.loads(line) for line in (EVAL / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    results = {}
    for name in ("fts5", "tantivy"):
        root = tmp_path / name
        shutil.copytree(EVAL / "fixture", root)
        monkeypatch.setenv("MEMVAULT_SEARCH_ENGINE", name)
        opts = service.options_from({}, limit=10)
        out = []
        for q in questions:
            try:
                out.append([h.id for h in service.run_search(root, q["query"], opts).hits])
            except NoMatch as exc:  # no hit answers: what came closest must agree too (issue 37)
                result = getattr(exc, "result", None)
                out.append(["closest:" + h.id for h in (result.closest if result else ())])
        results[name] = out
        with Index(root) as idx:
            assert bool(idx.meta("lists")) == (name == "tantivy")
    assert results["tantivy"] == results["fts5"]
    assert sum(bool(r) for r in results["fts5"]) > len(questions) // 2


def test_a_reused_rowid_is_not_found_by_its_old_words(built, vault):
    """SQLite gives the next card the rowid of a deleted last card: tantivy's document for that rowid still holds
    the old words until the queue is applied, and must not make the new card a match for them."""
    write(vault, card("c-20250801-f001", "Platypus farewell", "old words"))
    built.refresh()
    built.sync_lists(force=True)
    (rowid,) = built.card_candidates(["platypus"], False, WEIGHTS, CardFilter(), 5)
    (vault / "cards" / "2025-08" / "c-20250801-f001.md").unlink()
    write(vault, card("c-20250801-f002", "Echidna hello", "new words"))
    built.refresh()
    assert built.card_candidates(["echidna"], False, WEIGHTS, CardFilter(), 5) == [rowid]  # the same rowid
    assert built.card_candidates(["platypus"], False, WEIGHTS, CardFilter(), 5) == []


def test_a_bulk_build_fills_the_folder_as_it_writes_and_it_matches_a_build_from_sqlite(vault, tantivy_on,
                                                                                        monkeypatch):
    from memvault.search.index import cards as index_cards
    from memvault.vault import codec

    for i in range(2600):  # past cards.BULK: worker processes, and the tantivy folder filled row by row
        month = f"2025-{i % 12 + 1:02d}"
        c = card(f"c-2025{i % 12 + 1:02d}01-{i:04x}", f"note {i} about kalomi{i % 50}", f"vexter{i % 97} 数据{i % 13}库",
                 created=f"{month}-01T10:00:00Z", entities=(f"ent-{i % 40}",), project=("a", "b")[i % 2],
                 status="retracted" if i % 11 == 0 else "active")
        (vault / "cards" / month).mkdir(parents=True, exist_ok=True)
        (vault / "cards" / month / f"{c.id}.md").write_text(codec.card_to_text(c), encoding="utf-8")
    queries = [tokenize.tokens(q) for q in ("kalomi7", "vexter3 kalomi9", "数据库", "note 12", "ent 5")]

    def candidates(idx):
        return [[sorted(idx.card_id(r) for r in idx.card_candidates(t, every, WEIGHTS, flt, 5000))
                 for t in queries for every in (False, True)] for flt in (CardFilter(), CardFilter(project="b"))]

    with Index(vault) as idx:
        idx.refresh()
        streamed = idx.meta("lists")
        assert streamed and idx.meta("lists_ready") == streamed
        assert idx.db.execute("SELECT count(*) FROM tq").fetchone()[0] == 0
        assert in_tantivy(idx) == 2600
        got = candidates(idx)
    shutil.rmtree(vault / ".memvault")
    monkeypatch.setattr(index_cards, "BULK", 10**9)  # one by one, then the folder built from SQLite afterwards
    with Index(vault) as idx:
        idx.refresh()
        assert idx.meta("lists") and idx.meta("lists") != streamed
        assert candidates(idx) == got
    monkeypatch.setenv("MEMVAULT_SEARCH_ENGINE", "fts5")
    with Index(vault) as idx:
        assert candidates(idx) == got
    assert len(list((vault / ".memvault").glob("cards-*.tantivy"))) == 1
    assert any(len(c) > 10 for flt in got for c in flt)


def test_card_heads_read_the_tokens_fts5_holds(built, vault):
    """card_heads reads the tokenised fields from FTS5's content table: the same texts the virtual table gives,
    for every card, after an edit and a removal too (and a card whose fields are empty)."""
    write(vault, card("c-20250301-new004", "Edited 数据库 title", "", project="web"))
    (vault / "cards" / "2025-01").joinpath("c-20250101-a000.md").unlink()
    built.refresh()
    rowids = [r for (r,) in built.db.execute("SELECT rowid FROM cards")]
    heads = built.card_heads(rowids)
    via_fts = {r: tuple(row) for r, *row in built.db.execute(
        "SELECT rowid, title, entities, body, tags FROM cfts WHERE rowid IN (%s)" % ",".join(map(str, rowids)))}
    assert len(heads) == len(rowids) == len(via_fts)
    assert {r: tuple(h["tok"]) for r, h in heads.items()} == via_fts
    assert all(h["tok"] is None for h in built.card_heads(rowids, tokens=False).values())


def test_card_heads_fall_back_to_the_virtual_table(built):
    """An SQLite laying FTS5's content out otherwise (no c0..c3): the virtual table answers, with the same texts.
    A temporary view shadows the content table's name for this connection only."""
    rowids = [r for (r,) in built.db.execute("SELECT rowid FROM cards")]
    before = built.card_heads(rowids)
    built.db.execute("CREATE TEMP VIEW cfts_content AS SELECT id FROM main.cfts_content")
    try:
        assert built.card_heads(rowids) == before
    finally:
        built.db.execute("DROP VIEW temp.cfts_content")


def test_the_feeding_thread_of_a_bulk_build_keeps_the_order_and_raises_what_failed_in_it(tmp_path):
    tv = pytest.importorskip("tantivy")
    from memvault.search.index import bulk

    writer = tv.Index(lists._schema(tv), path=str(tmp_path), reuse=False).writer(lists.HEAP, 1)
    feed = bulk._Feed(tv, writer)
    for start in range(0, 600, 100):
        feed.put([(r, f"w{r % 7} common", "active", "p", "fact") for r in range(start, start + 100)])
    feed.close()
    writer.commit()
    writer.wait_merging_threads()
    index = tv.Index.open(str(tmp_path))
    index.reload()
    searcher = index.searcher()
    hits = searcher.search(tv.Query.term_query(index.schema, "text", "common"), limit=1000).hits
    assert searcher.num_docs == 600
    # the order the rows were put in is the order of the documents (doc ids), so ties rank as before
    assert searcher.fast_field_values("rowid", sorted(a for _s, a in hits)) == list(range(600))
    (tmp_path / "b").mkdir()
    bad = bulk._Feed(tv, tv.Index(lists._schema(tv), path=str(tmp_path / "b"), reuse=False).writer(lists.HEAP, 1))
    bad.put([(1, "a", "active", "p", "fact"), (None, "b", "active", "p", "fact")])  # tantivy refuses a None rowid
    with pytest.raises(ValueError):
        bad.close()
    with pytest.raises(ValueError):
        bad.put([(2, "c", "active", "p", "fact")])
