"""memvault.cli: the `memvault` command line (Typer), the top layer.

Owns: the app and its command table (app.py: commands load from their module only when they run), one module
per command group (commands/), the shared error guard and output helpers (common.py), plain coercion of option
values (coerce.py), `--vault` after the command (argv.py), the Typer-free path for plain `memvault search`
(fast.py) and human output (render.py). A command parses options, opens the vault, calls ONE function of a
lower layer and renders what it returns.
Must not: hold logic a service needs (nothing below imports cli), write files except through vault/, or import
heavy libraries at module level (every command pays for them at start-up).
"""
