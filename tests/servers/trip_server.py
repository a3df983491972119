"""A stdio MCP server whose tool asks the client's model with the server's own `weather` tool
(MCP sampling with tools), runs the call the model proposes, and asks again with its result."""

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import SamplingMessage, TextContent, Tool, ToolResultContent

server = MCPServer("trip", version="0.1")
WEATHER = Tool(name="weather", input_schema={"type": "object", "properties": {"city": {"type": "string"}}})


@server.tool()
async def forecast(city: str, ctx: Context) -> str:
    """Plans with the client's model."""
    asked = SamplingMessage(role="user", content=TextContent(type="text", text=f"Weather in {city}?"))
    first = await ctx.session.create_message([asked], max_tokens=30, tools=[WEATHER])
    results = [
        ToolResultContent(
            type="tool_result",
            tool_use_id=use.id,
            content=[TextContent(type="text", text=f"sunny in {use.input['city']}")],
        )
        for use in first.content_as_list
        if use.type == "tool_use"
    ]
    replayed = [
        asked,
        SamplingMessage(role="assistant", content=first.content_as_list),
        SamplingMessage(role="user", content=results),
    ]
    second = await ctx.session.create_message(replayed, max_tokens=30, tools=[WEATHER])
    return " ".join(block.text for block in second.content_as_list if block.type == "text")


if __name__ == "__main__":
    server.run()
