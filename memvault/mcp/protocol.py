"""The MCP methods a memvault server answers, free of the SDK: `Dispatcher.handle(method, params)` gives the
result object of a JSON-RPC response, or raises RpcError with a code and one safe line (never an argument's
value). memvault.mcp.stdio speaks it over stdin/stdout; memvault.mcp.server puts it behind the SDK's HTTP.

- initialize: the client's protocol version when it is one of the handshake versions, else the newest one.
- tools/list, tools/call: memvault.mcp.catalog's tools; a call checks the argument names against the tool's
  schema and hands the values to memvault.mcp.tools, whose guard checks and coerces each; any failure of a
  known tool is an error *result* (isError) with one line (memvault.mcp.guard.message).
- prompts/list, prompts/get: `brief` (a project's session brief) and `recall` (a pack for a task).
- resources/list (paged), resources/templates/list, resources/read: cards and entities as memvault:// URIs.
"""

from __future__ import annotations

import re
from typing import Any

from memvault import __version__
from memvault.mcp import catalog, guard, tools
from memvault.mcp.tools import Ctx

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PAGE = 100
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603
RESOURCE_NOT_FOUND = -32002
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}")
_URI = re.compile(r"memvault://(card|entity)/([^/?#]{1,200})")

CALLS = {"search": tools.search, "show": tools.show, "timeline": tools.timeline, "graph": tools.graph,
         "context": tools.context, "stats": tools.stats}


class RpcError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class Dispatcher:
    def __init__(self, ctx: Ctx, read_only: bool = False):
        self.ctx = ctx
        self.read_only = read_only

    def handle(self, method: Any, params: Any) -> dict[str, Any]:
        if params is not None and not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        params = params or {}
        handler = _METHODS.get(method) if isinstance(method, str) else None
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, "method not found")
        return handler(self, params)

    # -- lifecycle
    def initialize(self, params: dict) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        return {"protocolVersion": asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
                "capabilities": {"tools": {"listChanged": False}, "prompts": {"listChanged": False},
                                 "resources": {"subscribe": False, "listChanged": False}},
                "serverInfo": {"name": "memvault", "title": "memvault memory vault", "version": __version__},
                "instructions": catalog.INSTRUCTIONS}

    def ping(self, params: dict) -> dict[str, Any]:
        return {}

    # -- tools
    def list_tools(self, params: dict) -> dict[str, Any]:
        return {"tools": catalog.tools(self.read_only, self._kinds())}

    def call_tool(self, params: dict) -> dict[str, Any]:
        name = params.get("name")
        spec = catalog.tool(name, self.read_only, self._kinds()) if isinstance(name, str) else None
        if spec is None:  # an error result the model reads, as the SDK's own servers answer, not a protocol error
            return _error_result("unknown tool: the tools are " + ", ".join(
                t["name"] for t in catalog.tools(self.read_only, self._kinds())))
        args = params.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return _error_result("arguments must be an object")
        allowed = spec["inputSchema"]["properties"]
        for key in args:
            if key not in allowed:
                shown = f" {key!r}" if isinstance(key, str) and _NAME.fullmatch(key) else ""
                return _error_result(f"unknown argument{shown}: {name} takes " + (", ".join(allowed) or "none"))
        fn = CALLS.get(name) or _writer(name)
        try:
            reply = fn(self.ctx, **args)
        except Exception as exc:  # noqa: BLE001 - every failure is an error result, never a crashed server
            return _error_result(guard.message(exc))
        return {"content": [{"type": "text", "text": reply.text}], "structuredContent": reply.data,
                "isError": False}

    # -- prompts
    def list_prompts(self, params: dict) -> dict[str, Any]:
        return {"prompts": catalog.PROMPTS}

    def get_prompt(self, params: dict) -> dict[str, Any]:
        name = params.get("name")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise RpcError(INVALID_PARAMS, "arguments must be an object")
        if name not in ("brief", "recall"):
            raise RpcError(INVALID_PARAMS, "unknown prompt: the prompts are brief and recall")
        try:
            if name == "brief":
                reply = tools.context(self.ctx, None, budget=args.get("budget"), project=args.get("project"))
                what = "Memory brief of the project"
            else:
                reply = tools.context(self.ctx, guard.text("task", args.get("task"), "query"),
                                      project=args.get("project"))
                what = "Memory for the task"
        except Exception as exc:  # noqa: BLE001 - a clean error answer, never a traceback
            raise RpcError(INVALID_PARAMS, guard.message(exc)) from None
        return {"description": what, "messages": [{"role": "user",
                                                   "content": {"type": "text", "text": reply.data["pack"]}}]}

    # -- resources
    def list_resources(self, params: dict) -> dict[str, Any]:
        cursor = params.get("cursor")
        start = int(cursor) if isinstance(cursor, str) and cursor.isdigit() and len(cursor) < 10 else 0
        items = tools.resource_list(self.ctx)
        page = items[start:start + PAGE]
        out: dict[str, Any] = {"resources": page}
        if start + PAGE < len(items):
            out["nextCursor"] = str(start + PAGE)
        return out

    def list_templates(self, params: dict) -> dict[str, Any]:
        return {"resourceTemplates": catalog.RESOURCE_TEMPLATES}

    def read_resource(self, params: dict) -> dict[str, Any]:
        uri = params.get("uri")
        m = _URI.fullmatch(uri) if isinstance(uri, str) else None
        if m is None:
            raise RpcError(RESOURCE_NOT_FOUND, "unknown resource: memvault://card/{id} or memvault://entity/{slug}")
        from urllib.parse import unquote

        kind, ident = m.group(1), unquote(m.group(2))
        try:
            text = (tools.card_markdown if kind == "card" else tools.entity_markdown)(self.ctx, ident)
        except Exception as exc:  # noqa: BLE001 - an error answer, never a crashed server
            raise RpcError(RESOURCE_NOT_FOUND, guard.message(exc)) from None
        return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}

    def _kinds(self) -> list[str]:
        try:
            return list(self.ctx.vault().config.kinds) or catalog.KINDS
        except Exception:  # noqa: BLE001 - the listing still answers; a call then names the vault's problem
            return catalog.KINDS


def _writer(name: str):
    from memvault.mcp import writes

    return {"remember": writes.remember, "forget": writes.forget, "distill": writes.distill}[name]


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


_METHODS = {
    "initialize": Dispatcher.initialize, "ping": Dispatcher.ping,
    "tools/list": Dispatcher.list_tools, "tools/call": Dispatcher.call_tool,
    "prompts/list": Dispatcher.list_prompts, "prompts/get": Dispatcher.get_prompt,
    "resources/list": Dispatcher.list_resources, "resources/templates/list": Dispatcher.list_templates,
    "resources/read": Dispatcher.read_resource,
}
