"""The search's records (collections.namedtuple): fields, defaults, pickling, and what --json shows of a hit."""

import pickle

from memvault.search.results import _OPTIONS, Hit, SearchOptions, SearchResult


def test_search_records_keep_their_fields_defaults_and_pickle():
    assert SearchOptions._fields == tuple(_OPTIONS) and SearchOptions() == tuple(_OPTIONS.values())
    assert SearchOptions(limit=3)._replace(hops=0)[:5] == (3, None, None, False, 0)
    hit = Hit(id="c-1", kind="fact", title="t", project=None, status="active", score=1.5, snippet="s", why=("w",))
    assert (hit.sources, hit.refs, hit.created, hit.session, hit.path, hit.rowid, hit.world, hit.weak) == \
        ((), (), "", None, None, None, "", False)
    assert pickle.loads(pickle.dumps(hit)) == hit and type(pickle.loads(pickle.dumps(hit))) is Hit
    assert hit.to_json()["id"] == "c-1" and "rowid" not in hit.to_json()
    res = SearchResult(query="q", intent="current", terms=("q",), hits=(hit,))
    assert res.warnings == () and res.to_json()["count"] == 1
