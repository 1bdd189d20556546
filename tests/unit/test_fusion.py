"""fusion.fuse: the contract the dense layer and the eval rely on."""

from memvault.search.fusion import fuse


def test_both_sides_agreeing_beats_one_side():
    lexical = [("a", 9.0), ("b", 5.0)]
    meaning = {"b": 0.9, "c": 0.95}
    keys = [f.key for f in fuse(lexical, meaning, admit=0.5, rule="rrf")]
    assert keys[0] == "b"
    assert set(keys) == {"a", "b", "c"}


def test_dense_only_needs_admit_and_lexical_below_reject_is_dropped():
    lexical = [("a", 9.0), ("b", 5.0)]
    meaning = {"a": 0.2, "b": 0.8, "c": 0.7}
    out = fuse(lexical, meaning, admit=0.75, reject=0.3)
    assert [f.key for f in out] == ["b"]
    assert out[0].meaning == 0.8 and out[0].lexical


def test_the_chosen_defaults_keep_lexical_order_on_words_and_add_paraphrases_after():
    # e5-like cosines: everything sits in 0.75-0.90. With the defaults (z, lexical weight 0.7, 20 nearest as
    # candidates) and e5's measured admit 0.86, a clearly better lexical hit stays first, meaning breaks a
    # lexical near-tie, a dense-only item at or above 0.86 is shown after the lexical hits, one below is not,
    # and no lexical hit is dropped for its cosine.
    from memvault.search.fusion import admit_for

    lexical = [("a", 10.0), ("b", 5.0), ("c", 4.9)]
    meaning = {"a": 0.80, "b": 0.78, "c": 0.88, "p": 0.87, "q": 0.85}
    out = fuse(lexical, meaning, admit=admit_for("multilingual-e5-small-q4"))
    assert [f.key for f in out] == ["a", "c", "b", "p"]
    assert [f.lexical for f in out] == [True, True, True, False]
    assert out[3].meaning == 0.87


def test_a_model_nobody_measured_gets_the_z_gate():
    from memvault.search.fusion import ADMIT_Z, admit_for

    assert admit_for("intfloat/multilingual-e5-small") == 0.86 and admit_for("text-embedding-3-small") is None
    # without a measured admit, a dense-only item must stand ADMIT_Z deviations above the question's cosines
    near = {f"n{i:02d}": 0.50 + 0.002 * i for i in range(40)}
    assert [f.key for f in fuse([("a", 1.0)], {**near, "p": 0.53})] == ["a"]
    assert [f.key for f in fuse([("a", 1.0)], {**near, "p": 0.70})][-1] == "p"
    assert ADMIT_Z >= 2.0


def test_no_vectors_keeps_the_lexical_order():
    lexical = [("x", 3.0), ("y", 2.0), ("z", 1.0)]
    assert [f.key for f in fuse(lexical, {})] == ["x", "y", "z"]


def test_every_rule_ranks_agreement_first_and_keeps_the_gates():
    from memvault.search.fusion import RULES

    lexical = [("a", 9.0), ("b", 8.0), ("n", 7.0)]
    meaning = {"b": 0.88, "c": 0.87, "a": 0.80, "n": 0.70, "z": 0.75}
    for rule in RULES:
        out = fuse(lexical, meaning, rule=rule, admit=0.85, reject=0.72, window=0.1, weight=0.5, k=10, admit_z=0.0)
        keys = [f.key for f in out]
        assert keys[0] == "b", rule  # strong on both sides
        assert "n" not in keys, rule  # lexical hit whose meaning is too far: rejected
        assert "z" not in keys and "c" in keys, rule  # dense-only hits need `admit`
        assert {f.key: f.lexical for f in out} == {"a": True, "b": True, "c": False}, rule


def test_normalised_rules_read_cosines_relative_to_the_best_over_a_window():
    # Same lexical side, two meaning maps that differ only by a constant shift of every cosine (another model,
    # another query length): maxmin and wsum rank the same, since cosines are read against the query's best.
    lexical = [("a", 2.0), ("b", 1.0)]
    low = {"a": 0.70, "b": 0.78, "c": 0.76}
    high = {k: v + 0.12 for k, v in low.items()}
    for rule in ("maxmin", "wsum"):
        ranks = [[f.key for f in fuse(lexical, m, rule=rule, admit=0.0, window=0.1)] for m in (low, high)]
        assert ranks[0] == ranks[1], rule
    # outside the window a cosine adds nothing: "a" is 0.08 below the best with window 0.05
    out = {f.key: f.score for f in fuse(lexical, low, rule="wsum", weight=0.5, window=0.05, admit=0.0)}
    assert out["a"] == 0.5 and out["b"] == 0.5 * 0.5 + 0.5


def test_maxmin_is_max_plus_weight_times_min():
    out = fuse([("a", 4.0), ("b", 2.0)], {"a": 0.80, "b": 0.90}, rule="maxmin", weight=0.3, window=0.2)
    got = {f.key: round(f.score, 6) for f in out}
    assert got == {"a": round(1.0 + 0.3 * 0.5, 6), "b": round(1.0 + 0.3 * 0.5, 6)}
    assert [f.key for f in out] == ["a", "b"]  # a tie is broken by key


def test_an_unknown_rule_is_refused():
    import pytest

    with pytest.raises(ValueError):
        fuse([("a", 1.0)], {}, rule="borda")


def test_z_combines_standardised_scores_of_both_sides():
    # a: lexical best, meaning average; b: lexical second, meaning best; weight 0.6 on the words
    lexical = [("a", 10.0), ("b", 6.0), ("c", 1.0)]
    meaning = {"a": 0.80, "b": 0.90, "c": 0.70}
    out = fuse(lexical, meaning, rule="z", weight=0.6, admit_z=99.0)
    mean_l, sd_l = 17 / 3, ((10 - 17 / 3) ** 2 + (6 - 17 / 3) ** 2 + (1 - 17 / 3) ** 2) ** 0.5 / 3 ** 0.5
    sd_d = (2 * 0.1 ** 2 / 3) ** 0.5
    want = {"a": 0.6 * (10 - mean_l) / sd_l + 0.4 * 0.0, "b": 0.6 * (6 - mean_l) / sd_l + 0.4 * 0.1 / sd_d,
            "c": 0.6 * (1 - mean_l) / sd_l - 0.4 * 0.1 / sd_d}
    got = {f.key: f.score for f in out}
    assert got.keys() == want.keys() and all(abs(got[k] - want[k]) < 1e-9 for k in want)
    assert [f.key for f in out] == sorted(want, key=lambda k: -want[k])
    # with all weight on the words, the lexical order comes back
    assert [f.key for f in fuse(lexical, meaning, rule="z", weight=1.0, admit_z=99.0)] == ["a", "b", "c"]


def test_z_admits_a_dense_only_item_from_the_nearest_top_that_stands_out_of_the_query_cosines():
    lexical = [("a", 5.0)]
    # 30 nearest items: one far above the rest (p), the others bunched
    meaning = {"a": 0.80, "p": 0.93, **{f"n{i:02d}": 0.80 + 0.001 * i for i in range(28)}}
    keys = [f.key for f in fuse(lexical, meaning, rule="z", weight=0.6, top=20, admit_z=2.0)]
    assert "p" in keys and "a" in keys and not any(k.startswith("n") for k in keys)
    # the same cosines shifted down by 0.1 (another model's scale): the same decision, no constant to re-measure
    low = {k: v - 0.1 for k, v in meaning.items()}
    assert [f.key for f in fuse(lexical, low, rule="z", weight=0.6, top=20, admit_z=2.0)] == keys
    # outside the nearest `top`, never: p is first by cosine, so top=0 keeps it out
    assert "p" not in [f.key for f in fuse(lexical, meaning, rule="z", top=0, admit_z=2.0)]
    # an absolute admit cosine (embeddings.admit) applies on top
    assert "p" not in [f.key for f in fuse(lexical, meaning, rule="z", top=20, admit_z=2.0, admit=0.95)]


def test_z_with_no_lexical_hit_orders_by_meaning_and_without_vectors_keeps_the_words():
    meaning = {"p": 0.95, "q": 0.94, **{f"n{i:02d}": 0.70 + 0.001 * i for i in range(40)}}
    assert [f.key for f in fuse([], meaning, rule="z", admit_z=2.0)] == ["p", "q"]
    assert [f.key for f in fuse([("x", 3.0), ("y", 1.0)], {}, rule="z")] == ["x", "y"]
    assert fuse([], {}, rule="z") == []


def test_the_nearest_item_that_stands_out_is_admitted_below_the_admit_cosine():
    # e5-like cosines; "p" is found by meaning only, below admit 0.86
    lexical = [("a", 5.0), ("b", 4.0)]
    bunch = {f"n{i}": 0.790 + 0.001 * i for i in range(10)}  # 0.790-0.799
    ahead = {**bunch, "a": 0.78, "b": 0.77, "p": 0.83}
    gate = dict(admit=0.86, weak=None)
    assert [f.key for f in fuse(lexical, ahead, **gate, stand=(0.015, 0.80))][-1] == "p"
    assert "p" not in [f.key for f in fuse(lexical, ahead, **gate)]  # no stand gate: 0.83 < 0.86
    # bunched: the second nearest within the margin
    assert "p" not in [f.key for f in fuse(lexical, {**ahead, "n9": 0.82}, **gate, stand=(0.015, 0.80))]
    # far ahead but below the floor
    low = {**{k: c - 0.1 for k, c in bunch.items()}, "a": 0.68, "b": 0.67, "p": 0.79}
    assert "p" not in [f.key for f in fuse(lexical, low, **gate, stand=(0.015, 0.80))]
    # only the nearest item: "p" second behind "q", which stands out itself
    keys = [f.key for f in fuse(lexical, {**ahead, "q": 0.85}, **gate, stand=(0.015, 0.80))]
    assert "q" in keys and "p" not in keys
    # the nearest item found by the words too is no dense-only item: nothing is added
    assert [f.key for f in fuse([("p", 5.0)], ahead, **gate, stand=(0.015, 0.80))] == ["p"]


def test_the_stand_gate_is_measured_per_model():
    from memvault.search.fusion import stand_for

    assert stand_for("multilingual-e5-small-q4") == stand_for("intfloat/multilingual-e5-small") == (0.015, 0.80)
    assert stand_for("text-embedding-3-small") is None


def test_weak_words_give_meaning_more_say():
    # two lexical hits of nearly equal score; meaning prefers the second
    meaning = {"a": 0.80, "b": 0.84}
    low, high = [("a", 3.0), ("b", 2.9)], [("a", 30.0), ("b", 29.0)]
    # words weigh 0.7: the lexical order stays, whatever the score
    assert [f.key for f in fuse(low, meaning, weak=None)] == ["a", "b"]
    # the best lexical score below the cut: words weigh 0.4 and meaning decides
    assert [f.key for f in fuse(low, meaning, weak=(3.5, 0.4))] == ["b", "a"]
    assert [f.key for f in fuse(high, meaning, weak=(3.5, 0.4))] == ["a", "b"]
    # the default is the measured setting (fusion.WEAK)
    assert [f.key for f in fuse(low, meaning)] == ["b", "a"] and [f.key for f in fuse(high, meaning)] == ["a", "b"]
