"""The agent as an MCP server: `venice-agent mcp` (named apart from the MCP client, `mcp/`)."""
