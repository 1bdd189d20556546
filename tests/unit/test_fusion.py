"""fusion.fuse: the contract the dense layer and the eval rely on."""

from memvault.search.fusion import fuse


def test_both_sides_agreeing_beats_one_side():
    lexical = [("a", 9.0), ("b", 5.0)]
    meaning = {"b": 0.9, "c": 0.95}
    keys = [f.key for f in fuse(lexical, meaning, admit=0.5)]
    assert keys[0] == "b"
    assert set(keys) == {"a", "b", "c"}


def test_dense_only_needs_admit_and_lexical_below_reject_is_dropped():
    lexical = [("a", 9.0), ("b", 5.0)]
    meaning = {"a": 0.2, "b": 0.8, "c": 0.7}
    out = fuse(lexical, meaning, admit=0.75, reject=0.3)
    assert [f.key for f in out] == ["b"]
    assert out[0].meaning == 0.8 and out[0].lexical


def test_no_vectors_keeps_the_lexical_order():
    lexical = [("x", 3.0), ("y", 2.0), ("z", 1.0)]
    assert [f.key for f in fuse(lexical, {})] == ["x", "y", "z"]
