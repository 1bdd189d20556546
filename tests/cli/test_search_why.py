"""`why` speaks the user's words: stems and bigrams are an implementation detail."""


def test_why_names_the_query_words_not_their_stems(run):
    run("remember", "Migrations run before every deploy", "--kind", "rule", "-e", "ci", "--project", "shop")
    run("remember", "订单数据库用 Postgres", "--kind", "decision", "-e", "postgres", "--project", "shop")
    hits = run.json("search", "running", "migrations")["hits"]
    assert hits[0]["why"][0] == "matched: running, migrations"
    zh = run.json("search", "数据库")["hits"]
    assert zh[0]["why"][0].startswith("matched: 数据") and "订单数据库" in zh[0]["title"]


def test_episode_search_folds_word_forms(run):
    run("capture", input='{"role":"user","content":"we are migrating the orders table tonight","session":"m"}\n'
                         '{"role":"assistant","content":"ok, I will watch the locks","session":"m"}\n')
    hits = run.json("search", "--episodes", "migrations")["hits"]
    assert hits and hits[0]["kind"] == "episode" and hits[0]["why"][0] == "matched: migrations"
