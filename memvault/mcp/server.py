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

    async def list_tools(ctx, params):
        return types.ListToolsResult.model_validate(await run("tools/list", params))

    async def call_tool(ctx, params):
        return types.CallToolResult.model_validate(await run("tools/call", params))

    async def list_prompts(ctx, params):
        return types.ListPromptsResult.model_validate(await run("prompts/list", params))

    async def get_prompt(ctx, params):
        return types.GetPromptResult.model_validate(await run("prompts/get", params))

    async def list_resources(ctx, params):
        return types.ListResourcesResult.model_validate(await run("resources/list", params))

    async def list_templates(ctx, params):
        return types.ListResourceTemplatesResult.model_validate(await run("resources/templates/list", params))

    async def read_resource(ctx, params):
        return types.ReadResourceResult.model_validate(await run("resources/read", params))

    return Server("memvault", version=__version__, title="memvault memory vault", instructions=catalog.INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_prompts=list_prompts,
                  on_get_prompt=get_prompt, on_list_resources=list_resources,
                  on_list_resource_templates=list_templates, on_read_resource=read_resource)


def serve_http(dispatcher: Dispatcher, port: int) -> None:
    import uvicorn

    app = build(dispatcher).streamable_http_app(host="127.0.0.1")
    uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")).run()
