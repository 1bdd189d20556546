"""memvault.search."""
