"""The MCP server of `venice-agent demo`: one tool that stands for a paid one, on stdio.

`pretend_purchase` says it is not read-only, as a paid tool (an Apify Actor run) would, so the
agent asks before it runs; it buys nothing, charges nothing and reaches nothing::

    python -m venice_terminal_agent.testing.demo_server
"""

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("demo", instructions="A stand-in for a paid tool server: nothing it does is real.")


@server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=True), structured_output=False)
def pretend_purchase(item: str) -> str:
    """Buy something (a stand-in for a paid tool: nothing is bought or charged)."""
    return f"pretend purchase of {item}: nothing was bought or charged (the demo's stand-in for a paid tool)"


if __name__ == "__main__":
    server.run()
