"""memvault.vault: the vault on disk, and the only package that opens files for writing.

Owns: file primitives (files.py: atomic writes, appends, torn-tail repair, locks, removal), the Vault
class and where each kind of file lives (store.py), episode reading and the capture index (episodes.py), the
counts of the raw layer that stats shows (tally.py),
text <-> record codecs (codec.py; scrub.py redacts records before they become bytes), settings (config.py,
settings_file.py; read and cached by settings_cache.py), whether memory is still being saved (health.py),
locating and creating a vault (locate.py, init.py), slugs, entity pages and synopsis links (slug.py, pages.py, synopsis.py). Other packages write, rename, remove or lock files only through these
functions.
May import: the standard library, yaml, memvault core (errors, model, choices) and memvault.redact.
Must not import: search/, capture/, distill/, views/, cli/.
"""
