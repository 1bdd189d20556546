"""memvault.cli."""
