"""Streamable HTTP on 127.0.0.1 (`memvault mcp --http PORT`, endpoint /mcp) on the official Python SDK (`mcp`
2.x, the optional extra `memvault[mcp]`); the only module that imports it.

The SDK's low-level Server carries the transport (sessions, SSE, DNS-rebinding protection for localhost); every
request is answered by the same memvault.mcp.protocol.Dispatcher as stdio, so both transports offer the same
tools, schemas, prompts and resources and give the same answers. Handlers run the dispatcher on a worker
thread, so a long distill leaves the server answering other calls.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from memvault import __version__
from memvault.mcp import catalog
from memvault.mcp.protocol import Dispatcher, RpcError


def build(dispatcher: Dispatcher) -> Server:
    async def run(method: str, params: Any) -> dict[str, Any]:
        raw = params.model_dump(by_alias=True, exclude_none=True, mode="json") if params is not None else {}
        raw.pop("_meta", None)
        try:
            return await anyio.to_thread.run_sync(dispatcher.handle, method, raw)
        except RpcError as exc:
            raise MCPError(exc.code, exc.message) from None

    def answer(method: str, result: type) -> Any:  # an SDK handler that asks the dispatcher
        async def handler(ctx, params):
            return result.model_validate(await run(method, params))
        return handler

    return Server("memvault", version=__version__, title="memvault memory vault", instructions=catalog.INSTRUCTIONS,
                  on_list_tools=answer("tools/list", types.ListToolsResult),
                  on_call_tool=answer("tools/call", types.CallToolResult),
                  on_list_prompts=answer("prompts/list", types.ListPromptsResult),
                  on_get_prompt=answer("prompts/get", types.GetPromptResult),
                  on_list_resources=answer("resources/list", types.ListResourcesResult),
                  on_list_resource_templates=answer("resources/templates/list", types.ListResourceTemplatesResult),
                  on_read_resource=answer("resources/read", types.ReadResourceResult))


def serve_http(dispatcher: Dispatcher, port: int) -> None:
    import uvicorn

    app = build(dispatcher).streamable_http_app(host="127.0.0.1")
    uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")).run()
