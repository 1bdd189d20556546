"""memvault.views."""
