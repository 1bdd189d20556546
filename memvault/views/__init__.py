"""memvault.views: what a person reads and checks, built from the lower layers.

Owns: show, timeline, graph (and graph.html), context (the token-budgeted memory pack), stats, doctor (with the
secret scan, secretscan.py), reindex, export/import bundles (bundle.py), the session brief (brief.py) and what
an agent's hook does (hookrun.py).
May import: core, redact, vault, search, capture and distill. Must not import cli, run SQL (it calls named
methods of memvault.search.index), or write files except through vault/ functions.
"""
