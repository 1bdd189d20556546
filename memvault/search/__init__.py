"""memvault.search: finding cards and episodes for a question.

Owns: tokenising (tokenize), BM25 scoring (bm25), the derived SQLite index with every SQL statement of
memvault (index/), the result tuples (results), the entry point with settings and options (service), one
search as a pipeline of stages a query passes once (pipeline: analyse in query and intent, candidates, score
in scoring, hops, order, fuse, present in snippets), and the optional dense layer (dense/: embeddings client,
vector files, fused search; off unless configured). A query flows service -> pipeline -> each stage in turn
-> index, never back up.

May import: the core (memvault.errors, model, choices), redact, and vault (locate at module level; codec and
store only lazily, on slow paths). Must not import: capture (a sibling), distill, views, cli. Must not open
files for writing except the index's own SQLite files under `.memvault/` (the dense layer's vector matrix goes
through vault.files). No module-level import of yaml,
rapidfuzz, snowballstemmer or jieba on the search path (cli/fast.py imports search.service at every search).
"""
