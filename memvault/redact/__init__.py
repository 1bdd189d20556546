"""memvault.redact: the privacy filter, text -> (clean text, findings). A pure leaf.

Owns: the built-in rule table (rules.py: id, family, keywords, finder; reviewed as data), the finders that
need code (finders.py, prose.py, shapes.py; tokens.py for the ~150 provider prefixes scanners know, in one pass;
keyed.py for values next to key-like names in any syntax, and Kubernetes Secrets; names.py for which names
name a secret, the one list every finder asks) and the engine that runs a
rule set and merges spans (engine.py, the public API: `from memvault.redact import engine as redact;
redact.redact(text, rules)`).
urls.py gives an endpoint URL without its user:password@ or query, to name it in a message.
Must not import: anything but the standard library and memvault core (errors, model, choices); never vault/,
search/, capture/, distill/, views/, cli/, nor yaml or other third-party libraries. It opens no files.
Start-up stays cheap (`memvault search` imports it for output): rule-table patterns compile on first use.
"""
