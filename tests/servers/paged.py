"""A small low-level MCP server of ours: a paginated tool list and tools that misbehave on purpose.

In memory: `build_server(...)`. Over stdio: `python tests/servers/paged.py [--tools N]
[--page-size N] [--repeat-cursor]`. Tools: `echo_<i>` (structured echo), `mixed` (one block
of each kind), `big` (a long text), `refuse` (a JSON-RPC -32602 error), `broken` (an
`is_error` result), `hang` (never answers), `crash` (the process dies mid-call), `grow`
(adds a tool to the list, as Apify does when an Actor is added mid-session), `env` (the
names of its environment variables),
`read_note` (annotated read-only).
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
import mcp.types as t
from mcp import MCPError
from mcp.server import Server

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
OBJECT = {"type": "object", "properties": {"text": {"type": "string"}}}


def build_server(n_echo: int = 5, page_size: int = 2, repeat_cursor: bool = False) -> Server:
    extra: list[str] = []

    def all_tools() -> list[t.Tool]:
        tools = [
            t.Tool(name=f"echo_{i}", description=f"Echo number {i}", input_schema=OBJECT)
            for i in range(n_echo)
        ]
        tools += [
            t.Tool(name=name, description=f"the {name} tool", input_schema={"type": "object"})
            for name in ("mixed", "big", "refuse", "broken", "hang", "crash", "grow", "env", *extra)
        ]
        tools.append(
            t.Tool(
                name="read_note",
                description="Read a note",
                input_schema={"type": "object"},
                annotations=t.ToolAnnotations(read_only_hint=True),
            )
        )
        return tools

    async def list_tools(ctx, params: t.PaginatedRequestParams | None) -> t.ListToolsResult:
        tools = all_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + page_size
        if end >= len(tools):
            return t.ListToolsResult(tools=tools[start:])
        cursor = str(page_size) if repeat_cursor and start > 0 else str(end)
        return t.ListToolsResult(tools=tools[start:end], next_cursor=cursor)

    async def call_tool(ctx, params: t.CallToolRequestParams) -> t.CallToolResult:
        name, args = params.name, params.arguments or {}
        if name.startswith("echo_"):
            return t.CallToolResult(
                content=[t.TextContent(text=str(args.get("text", "")))],
                structured_content={"tool": name, "text": args.get("text")},
            )
        if name == "mixed":
            return t.CallToolResult(
                content=[
                    t.TextContent(text="here is everything"),
                    t.ImageContent(data=PNG_1PX, mime_type="image/png"),
                    t.AudioContent(data="UklGRg==", mime_type="audio/wav"),
                    t.ResourceLink(
                        name="report",
                        uri="file:///tmp/report.csv",
                        mime_type="text/csv",
                        description="the report",
                    ),
                    t.EmbeddedResource(
                        resource=t.TextResourceContents(
                            uri="note://1", mime_type="text/plain", text="note one"
                        )
                    ),
                    t.EmbeddedResource(
                        resource=t.BlobResourceContents(
                            uri="blob://1", mime_type="application/zip", blob="UEsDBA=="
                        )
                    ),
                ]
            )
        if name == "big":
            return t.CallToolResult(
                content=[
                    t.TextContent(text="".join(f"{i:06d}\n" for i in range(int(args.get("lines", 5000)))))
                ]
            )
        if name == "refuse":
            raise MCPError(
                code=t.INVALID_PARAMS, message="Invalid arguments for tool refuse: 'x' is required"
            )
        if name == "broken":
            return t.CallToolResult(content=[t.TextContent(text="the database is on fire")], is_error=True)
        if name == "hang":
            await anyio.Event().wait()
        if name == "crash":
            print("paged server: crashing on purpose", file=sys.stderr, flush=True)
            os._exit(3)
        if name == "grow":
            extra.append(f"grown_{len(extra)}")
            return t.CallToolResult(content=[t.TextContent(text=f"added {extra[-1]}")])
        if name == "env":
            return t.CallToolResult(content=[t.TextContent(text=" ".join(sorted(os.environ)))])
        if name == "read_note":
            return t.CallToolResult(content=[t.TextContent(text="a note")])
        raise MCPError(code=t.INVALID_PARAMS, message=f"Unknown tool: {name}")

    return Server("paged", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=5)
    parser.add_argument("--page-size", type=int, default=2)
    parser.add_argument("--repeat-cursor", action="store_true")
    options = parser.parse_args()
    anyio.run(_serve, build_server(options.tools, options.page_size, options.repeat_cursor))
