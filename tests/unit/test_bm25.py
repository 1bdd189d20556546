import math

from memvault.search import bm25

W = {"title": 3.0, "body": 1.0}


def test_idf_falls_with_document_frequency_and_unknown_is_max():
    assert bm25.idf(1, 100) > bm25.idf(10, 100) > bm25.idf(90, 100) > 0
    assert math.isclose(bm25.max_idf(100), bm25.idf(0, 100))


def test_title_weight_ranks_title_match_first():
    docs = {
        "a": {"title": ["postgr"], "body": ["notes", "about", "thing"]},
        "b": {"title": ["other"], "body": ["postgr", "notes", "thing"]},
        "c": {"title": ["none"], "body": ["unrelated"]},
    }
    ranked = bm25.rank(["postgr"], docs, W)
    assert [d for d, _ in ranked] == ["a", "b"]


def test_chinese_bigram_documents_rank_by_matches():
    docs = {
        "zh1": {"title": ["数据", "据库"], "body": ["迁移"]},
        "zh2": {"title": ["照片"], "body": ["数据"]},
    }
    ranked = bm25.rank(["数据", "据库"], docs, W)
    assert ranked[0][0] == "zh1"
    assert ranked[0][1].matched == ("数据", "据库")
    assert ranked[1][1].matched == ("数据",)


def test_coverage_counts_unknown_terms_and_extra_mass():
    stats = bm25.Stats(n_docs=10, avg_len={"title": 2, "body": 5}, df={"cache": 2})
    doc = {"title": ["cache"], "body": []}
    full = bm25.score(["cache"], doc, stats, W)
    assert full.coverage == 1.0
    half = bm25.score(["cache", "kubernet"], doc, stats, W)
    assert 0 < half.coverage < 0.5  # the unknown word weighs more than the known one
    extra = bm25.score(["cache"], doc, stats, W, extra_mass=bm25.max_idf(10))
    assert extra.coverage < 0.5
    assert full.score == extra.score


def test_term_frequency_saturates():
    stats = bm25.Stats(n_docs=10, avg_len={"body": 4}, df={"x": 1})
    one = bm25.score(["x"], {"body": ["x", "a", "b", "c"]}, stats, {"body": 1.0}).score
    many = bm25.score(["x"], {"body": ["x"] * 4}, stats, {"body": 1.0}).score
    assert one < many < bm25.idf(1, 10) * 1.0001


def reference(idfs, doc, stats, weights, k1=bm25.K1, b=bm25.B):
    """BM25F by its definition: count every token of every field."""
    from collections import Counter

    counts = {f: Counter(t) for f, t in doc.items()}
    total, matched = 0.0, []
    for term, w_idf in idfs.items():
        tf = 0.0
        for field, counter in counts.items():
            c = counter.get(term)
            if c:
                tf += weights.get(field, 1.0) * c / (1.0 - b + b * (len(doc[field]) / (stats.avg_len.get(field) or 1.0)))
        if tf > 0:
            total += w_idf * tf / (k1 + tf)
            matched.append(term)
    return total, tuple(matched)


def test_score_equals_the_counting_definition_to_the_last_bit():
    """bm25.score counts only the query terms a field holds; the sums must be those of counting every token."""
    import math
    import random

    rng = random.Random(3)
    vocab = ["pg", "backup", "数据", "据库", "x", "y", "z", "ent", "42"]
    weights = {"title": 4.0, "entities": 3.0, "body": 1.0, "tags": 1.5}
    stats = bm25.Stats(n_docs=100, avg_len={"title": 5.0, "entities": 2.5, "body": 40.0, "tags": 0.0}, df={})
    for _ in range(2000):
        doc = {f: [rng.choice(vocab) for _ in range(rng.randrange(0, 30))] for f in weights}
        idfs = {t: rng.uniform(0.01, 5.0) for t in rng.sample(vocab, rng.randrange(1, 6))}
        got = bm25.score(list(idfs), doc, stats, weights, idfs=idfs)
        want = reference(idfs, doc, stats, weights)
        assert (got.score, got.matched) == want and not math.isnan(got.score)


def test_score_text_gives_the_floats_of_score_on_the_joined_tokens():
    """score_text reads a field as the index keeps it (tokens joined by one space) without splitting it: the
    counts of the counting definition (a token repeated side by side, a term inside a longer token) and its
    sums, bit for bit."""
    import random

    rng = random.Random(11)
    vocab = ["pg", "pgs", "backup", "数据", "据库", "数据库", "a", "x", "ent-42", "42"]
    weights = {"title": 4.0, "entities": 3.0, "body": 1.0, "tags": 1.5}
    stats = bm25.Stats(n_docs=100, avg_len={"title": 5.0, "entities": 2.5, "body": 40.0, "tags": 0.0}, df={})
    for _ in range(3000):
        doc = {f: [rng.choice(vocab) for _ in range(rng.randrange(0, 30))] for f in weights}
        idfs = {t: rng.uniform(0.01, 5.0) for t in rng.sample(vocab, rng.randrange(1, 6))}
        got = bm25.score_text(list(idfs), {f: " ".join(t) for f, t in doc.items()}, stats, weights, idfs=idfs,
                              extra_mass=0.5)
        assert (got.score, got.matched) == reference(idfs, doc, stats, weights)
        assert got == bm25.score(list(idfs), doc, stats, weights, idfs=idfs, extra_mass=0.5)
    repeated = bm25.score_text(["a"], {"body": "a a a b"}, stats, {"body": 1.0})
    assert repeated == bm25.score(["a"], {"body": ["a", "a", "a", "b"]}, stats, {"body": 1.0})
    assert bm25.score_text(["pg"], {"body": "pgs pg-x"}, stats, {"body": 1.0}).score == 0.0
