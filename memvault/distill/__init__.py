"""memvault.distill."""
