import subprocess
import sys

from memvault.search import tokenize


def test_nfkc_and_casefold_meet_plain_forms():
    assert tokenize.tokens("ＰｏｓｔｇｒｅＳＱＬ") == tokenize.tokens("postgresql")
    assert tokenize.tokens("STRASSE") == tokenize.tokens("straße")


def test_light_english_normalisation_folds_inflections():
    assert tokenize.stem("decided") == tokenize.stem("decide") == tokenize.stem("deciding")
    assert tokenize.stem("backups") == tokenize.stem("backup")
    assert tokenize.stem("policies") == "policy"
    assert tokenize.stem("class") == "class"  # -ss is not a plural


def test_ing_and_ed_meet_short_e_words_and_ied_meets_y():
    # Porter step 1b: a one-syllable stem that -ing/-ed left ending consonant-vowel-consonant gets its -e back.
    assert tokenize.stem("hiking") == tokenize.stem("hiked") == tokenize.stem("hike") == tokenize.stem("hikes")
    assert tokenize.stem("loving") == tokenize.stem("love") and tokenize.stem("coding") == tokenize.stem("code")
    assert tokenize.stem("studied") == tokenize.stem("studies") == tokenize.stem("studying") == "study"
    assert tokenize.stem("planned") == tokenize.stem("plan") == "plan"  # a doubled consonant gets no -e
    assert tokenize.stem("visiting") == "visit" and tokenize.stem("snowing") == "snow"
    assert tokenize.stem("caring") == "care" != tokenize.stem("cars")


def test_stopwords_dropped_unless_asked():
    assert tokenize.tokens("what did we decide about the cache") == ["decid", "cach"]
    assert "the" in tokenize.tokens("the cache", stop=False)


def test_cjk_runs_become_bigrams_and_mixed_text_splits():
    assert tokenize.tokens("数据库") == ["数据", "据库"]
    assert tokenize.tokens("停电以后ZFS pool") == ["停电", "电以", "以后", "zfs", "pool"]
    assert tokenize.tokens("猫") == ["猫"]
    assert tokenize.tokens("数据库", mode="unibigram") == ["数", "据", "库", "数据", "据库"]


def test_function_bigrams_are_recognised():
    assert tokenize.is_function_bigram("的了")
    assert not tokenize.is_function_bigram("数据")


def test_bigram_mode_never_imports_jieba():
    code = ("import sys; from memvault.search import tokenize; tokenize.tokens('我们决定用数据库'); "
            "print('jieba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_jieba_mode_segments_words():
    toks = tokenize.tokens("我们决定使用数据库", mode="jieba")
    assert "数据库" in toks and "决定" in toks


def test_joined_is_the_join_and_count_of_tokens():
    samples = ["数据库迁移 postgres_backup ＰｏｓｔｇｒｅＳＱＬ", "猫", "停电以后ZFS pool, the caches", "", "Decided: 3 policies",
               "한국어 カタカナ 数据 x_y-z", "STRASSE straße ﬁle", "a 的了 数据库库"]
    for text in samples:
        toks = tokenize.tokens(text)
        assert tokenize.joined(text) == (" ".join(toks), len(toks)), text
    assert tokenize.joined("数据库") == ("数据 据库", 2)


def test_episodes_use_porter2_cards_keep_light_stemming():
    from memvault.search import tokenize

    assert tokenize.tokens("migrations migrating migrated", stemmer="porter2") == ["migrat"] * 3
    assert tokenize.tokens("activities activity", stemmer="porter2") == ["activ", "activ"]
    assert tokenize.tokens("migrations migrating", stemmer="light") == ["migration", "migrat"]
    assert tokenize.tokens("我们 migrating 数据库", stemmer="porter2") == ["我们", "migrat", "数据", "据库"]
    assert tokenize.tokens("the running", stop=False, stemmer="porter2") == ["the", "run"]


def test_short_texts_find_cjk_runs_as_the_regex_does():
    # A query's CJK runs are found by a loop (the class costs ~2 ms to compile); long texts use the regex.
    import random

    rng = random.Random(7)
    edges = [lo + d for lo, hi in tokenize._CJK_RANGES for lo in (lo, hi) for d in (-1, 0, 1)]
    alphabet = [chr(c) for c in edges] + list("ab1_ é数据한カ\u3000ー々〇豈")
    alphabet += [chr(0xFAFF), chr(0xFB00), chr(0xD7B0)]
    for _ in range(3000):
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert tokenize._spans_loop(word) == tokenize._spans_rx(word), repr(word)
    for _ in range(300):
        text = " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(60))
        short, long_ = text[:tokenize.SHORT_TEXT], text[:tokenize.SHORT_TEXT] + " " * (tokenize.SHORT_TEXT + 1)
        assert len(short) <= tokenize.SHORT_TEXT < len(long_)
        assert tokenize.tokens(short) == tokenize.tokens(long_), repr(short)  # loop vs regex, same tokens
        assert tokenize.joined(short) == tokenize.joined(long_), repr(short)
        assert tokenize.cjk_runs(short) == tokenize.cjk_runs(long_), repr(short)


def test_a_short_chinese_query_compiles_no_cjk_class():
    code = ("import sys; from memvault.search import tokenize; "
            "tokenize.tokens('数据库 迁移 한국어 カタカナ'); tokenize.cjk_runs('数据库'); "
            "print(tokenize._cjk_rx.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


def test_a_process_tokenising_many_texts_finds_short_texts_runs_with_the_compiled_class():
    # A bulk build's worker compiles the CJK class once (for_many_texts): every text's runs, short ones too, then
    # come from it; same tokens as the loop gives.
    code = ("import sys; from memvault.search import tokenize\n"
            "texts = ['数据库 迁移 한국어 カタカナ', 'plain ascii', '混合 mixed 文本_x', '豈\\u3000ー々〇ab数']\n"
            "before = [(tokenize.joined(t), tokenize.tokens(t), tokenize.cjk_runs(t)) for t in texts]\n"
            "assert tokenize._spans_for(texts[0]) is tokenize._spans_loop\n"
            "tokenize.for_many_texts()\n"
            "assert tokenize._spans_for(texts[0]) is tokenize._spans_rx\n"
            "after = [(tokenize.joined(t), tokenize.tokens(t), tokenize.cjk_runs(t)) for t in texts]\n"
            "print(before == after, tokenize._cjk_rx.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "1"]
