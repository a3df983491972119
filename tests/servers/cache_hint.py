"""A stdio MCP server that says how long its tool list may be cached (2026-07-28's `ttlMs`,
SEP-2549): `python cache_hint.py MILLISECONDS`. One tool, `now`."""

import sys

from mcp.server import MCPServer
from mcp.server.caching import CacheHint

server = MCPServer("hinted", cache_hints={"tools/list": CacheHint(ttl_ms=int(sys.argv[1]))})


@server.tool()
def now() -> str:
    """The time, as a stand-in answer."""
    return "noon"


if __name__ == "__main__":
    server.run("stdio")
