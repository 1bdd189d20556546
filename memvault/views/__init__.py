"""memvault.views: what a person reads and checks, built from the lower layers.

Owns: show, timeline, graph (and graph.html), context (the token-budgeted memory pack), stats, doctor (with the
secret scan, secretscan.py), reindex, and export/import bundles (bundle.py).
May import: core, redact, vault, search, capture and distill. Must not import cli, run SQL (it calls named
methods of memvault.search.index), or write files except through vault/ functions.
"""
