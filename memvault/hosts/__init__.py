"""memvault.hosts: the agents' (hosts') own settings files, which `memvault setup` edits outside the vault.

Owns: the table of hosts and what setup writes into each (agents.py: MCP entries, hooks, plan and undo), text
editors that keep every byte they do not own (jsonedit.py for JSON and JSONC with comments, tomledit.py for
TOML), and the backups that make `setup --undo` give back a file's bytes (backups.py).
May import: the standard library, memvault core and memvault.vault (every write goes through vault/files.py).
Must not import: search/, capture/, distill/, views/, mcp/, cli/.
"""
