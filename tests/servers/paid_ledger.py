"""A paid MCP server on 127.0.0.1 (Streamable HTTP) that counts every call it receives by id.

    python paid_ledger.py PORT LOG

`charge(call_id)` stands for a paid Actor: no read-only hint (it needs a yes), and each call
appends its id to LOG (one line, written whole with O_APPEND) before it answers, so a test
reads how many times each id reached the server, whoever died meanwhile.
"""

import os
import sys

import uvicorn
from mcp.server import MCPServer


def build_app(log: str):
    server = MCPServer("paid", version="1.0")

    @server.tool()
    def charge(call_id: str) -> str:
        """Charge the account for one call (costs money)."""
        descriptor = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, f"{call_id}\n".encode())
        finally:
            os.close(descriptor)
        return f"charged {call_id}"

    return server.streamable_http_app()


if __name__ == "__main__":
    uvicorn.run(build_app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="info")
