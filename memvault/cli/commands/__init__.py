"""One module per command group; memvault.cli.app imports a module only when one of its commands runs."""
