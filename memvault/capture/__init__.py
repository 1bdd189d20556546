"""memvault.capture."""
