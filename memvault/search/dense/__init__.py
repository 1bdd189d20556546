"""memvault.search.dense: the optional dense ("meaning") layer of search, off unless `embeddings.base_url` is set.

Owns: the embeddings settings (settings), the HTTP client for any OpenAI-compatible POST /embeddings (client,
httpx imported lazily), the vector matrix files under `.memvault/` (store, numpy imported lazily), filling
them incrementally (embed), and the search-time part: embed the question, find the nearest vectors, fuse with
the lexical ranking through search.fusion (hybrid).

Must not import: capture, distill, views, cli. Holds no SQL: the key list of the vectors is a SQLite file read
and written through search/index/vectors.py. Never writes into cards: vectors are derived data under
`.memvault/`, written through vault.files. Nothing here is imported by a search while embeddings are off (so
numpy never loads then), and the API key is read from the variable named by `api_key_env`, never stored or shown.
"""
