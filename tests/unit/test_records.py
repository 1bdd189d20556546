"""memvault.records: named tuples whose __new__ is written out (no eval at import) behave as namedtuple's do."""

import pickle
from collections import namedtuple

import pytest

from memvault.records import _tuple_new, record
from memvault.search.results import _OPTIONS, Hit, SearchOptions, SearchResult


def _point(_cls, x, y, label="", weight=1.0):
    return _tuple_new(_cls, (x, y, label, weight))


Point = record("Point", _point)
Twin = namedtuple("Point", "x y label weight", defaults=("", 1.0))


def test_a_record_behaves_as_the_namedtuple_of_the_same_fields():
    for args, kw in [((1, 2), {}), ((1, 2, "a"), {}), ((1,), {"y": 5, "weight": 2.0}), ((), {"x": 0, "y": 0})]:
        p, t = Point(*args, **kw), Twin(*args, **kw)
        assert tuple(p) == tuple(t) and p == t and hash(p) == hash(t)
        assert (p.x, p.y, p.label, p.weight) == (t.x, t.y, t.label, t.weight)
        assert p._asdict() == t._asdict() and repr(p) == repr(t)
        assert p._replace(label="b", x=9) == t._replace(label="b", x=9)
        assert type(p._replace(x=3)) is Point
    assert Point._fields == Twin._fields and Point._field_defaults == Twin._field_defaults
    assert Point._make([1, 2, "c", 3.0]) == Twin._make([1, 2, "c", 3.0])
    with pytest.raises(TypeError):
        Point(1)  # y missing
    with pytest.raises(TypeError):
        Point(1, 2, z=3)
    with pytest.raises(TypeError):
        Point._make([1, 2])
    with pytest.raises(ValueError):
        Point(1, 2)._replace(z=1)
    with pytest.raises(AttributeError):
        Point(1, 2).x = 5  # read-only fields
    with pytest.raises(AttributeError):
        Point(1, 2).other = 5  # no __dict__


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
