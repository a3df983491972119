"""A small stdio MCP server for the terminal tests: tools that are not known to be free.

`charge` and `refund` stand for paid Actors (no read-only hint, and the config does not
trust this server anyway); `ansi` returns terminal escape sequences, as a hostile page would.
"""

import gc

gc.disable()  # while the SDK loads, then frozen: less CPU a start (servers/time_server.py says why)
from mcp.server import MCPServer  # noqa: E402
from mcp.types import TextContent  # noqa: E402

gc.freeze()
gc.enable()

server = MCPServer("shop")


@server.tool()
def charge(amount: int) -> str:
    """Charge the account (costs money)."""
    return f"charged {amount}"


@server.tool()
def refund(amount: int) -> str:
    """Refund the account (costs money)."""
    return f"refunded {amount}"


@server.tool()
def ansi() -> list[TextContent]:
    """A page with escape sequences in it (plain text, so they arrive raw)."""
    return [TextContent(type="text", text="before \x1b[2J\x1b]0;pwned\x07\x1b[31mred after")]


@server.tool()
async def wait(seconds: float) -> str:
    """Take a while (a slow Actor run)."""
    import anyio

    await anyio.sleep(seconds)
    return "waited"


if __name__ == "__main__":
    server.run()
