"""memvault over the Model Context Protocol: the vault as tools and resources for coding agents and chat apps.

An interface layer beside memvault.cli: it may import views/, distill/, search/, capture/, vault/, redact/ and
the core modules (model, errors, choices), never cli; nothing but memvault.cli imports it (`memvault mcp`, in
memvault.cli.commands.agent). The MCP SDK (the optional extra `memvault[mcp]`) is imported only by server.py.

- guard.py: argument checks, redaction of everything returned, fencing of memory text as quoted data.
- tools.py: each tool a thin call of the service function the matching CLI command calls.
- server.py: the SDK server, its tools and resources, stdio and streamable HTTP, read-only and project scope.
"""
