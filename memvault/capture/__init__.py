"""memvault.capture: chat logs in, redacted append-only episodes out.

Owns reading chat-log formats (`formats/`, pure: stdlib + memvault.model + memvault.errors), placing an input's
turns among the stored ones (`align`), finding the files a folder holds and opening an input and sniffing its
format (`inputs`), and the capture service (`service`: read, group into turns, hygiene, redact, cap, append
through vault/).

May import the core (errors, model, choices), redact/ and vault/. Must NOT import search/, distill/, views/ or
cli/ (capture and search are siblings), and never writes a file itself: every write goes through vault/.
"""
