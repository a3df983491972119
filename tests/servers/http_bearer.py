"""A Streamable HTTP MCP server on 127.0.0.1 that wants a bearer token, as Apify's hosted one does.

    python http_bearer.py PORT TOKEN

Requests without `Authorization: Bearer TOKEN` get a 401 with a JSON-RPC error body. The tool
`fail` repeats the token in an `is_error` result, and `echo` returns its text (a result is the
tool's own, never masked).
"""

import json
import sys

import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build_app(token: str):
    server = MCPServer("notes", version="1.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def fail() -> str:
        """Fail, repeating the token the request carried."""
        raise ToolError(f"the token {token} is not allowed to fail")

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    inner = server.streamable_http_app()
    expected = f"Bearer {token}".encode()
    refusal = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32001, "message": "Unauthorized: bad or missing token"},
        }
    ).encode()

    async def app(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": refusal})
            return
        await inner(scope, receive, send)

    return app


if __name__ == "__main__":
    uvicorn.run(build_app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="info")
