"""memvault.redact."""
