"""A Streamable HTTP MCP server on 127.0.0.1 whose old address redirects, and that writes down
which credentials each request brought.

    python redirects.py PORT EVENTS [TARGET [TOKEN]]

`/mcp` is the server (with TOKEN, it wants `Authorization: Bearer TOKEN`, as http_bearer.py).
`/old` answers 307 to TARGET (a path on this server, or a URL on another port: another origin).
Every request is one line in EVENTS: `PORT METHOD PATH authorization=… x-api-key=…` (`-` when
the header was not sent), so a test sees where a token went.
"""

import sys
from pathlib import Path

import uvicorn
from http_bearer import build_app
from mcp.server import MCPServer


def recorded(app, port: str, events: Path, target: str):
    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        headers = dict(scope["headers"])
        seen = [
            f"{name}={headers.get(name.encode(), b'-').decode()}" for name in ("authorization", "x-api-key")
        ]
        with events.open("a") as out:
            out.write(f"{port} {scope['method']} {scope['path']} {' '.join(seen)}\n")
        if scope["path"] == "/old":
            await send(
                {"type": "http.response.start", "status": 307, "headers": [(b"location", target.encode())]}
            )
            return await send({"type": "http.response.body", "body": b""})
        return await app(scope, receive, send)

    return wrapped


def open_app():
    server = MCPServer("notes", version="1.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server.streamable_http_app()


if __name__ == "__main__":
    port, events = sys.argv[1], Path(sys.argv[2])
    target = sys.argv[3] if len(sys.argv) > 3 else "/mcp"
    inner = build_app(sys.argv[4]) if len(sys.argv) > 4 else open_app()
    uvicorn.run(recorded(inner, port, events, target), host="127.0.0.1", port=int(port), log_level="info")
