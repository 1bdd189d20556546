"""memvault.vault."""
