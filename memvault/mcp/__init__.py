"""memvault over the Model Context Protocol: the vault as tools, prompts and resources for coding agents.

An interface layer beside memvault.cli: it may import views/, distill/, search/, capture/, vault/, redact/ and
the core modules (model, errors, choices), never cli; nothing but memvault.cli imports it (`memvault mcp`, in
memvault.cli.commands.agent). The MCP SDK (the optional extra `memvault[mcp]`) is imported only by server.py,
for streamable HTTP; stdio, what agents launch, needs no SDK (stdio.py says why).

- catalog.py: what is offered: tools (titles, input schemas with the enforced limits, output schemas,
  annotations), prompts, resource templates.
- protocol.py: the MCP methods, answered without the SDK (one Dispatcher for both transports).
- guard.py: argument checks and coercion, redaction of everything returned, fencing and marking of memory text.
- tools.py / writes.py: each tool a thin call of the service function the matching CLI command calls.
- stdio.py: newline-delimited JSON-RPC on stdin/stdout. server.py: streamable HTTP on the SDK.
"""
