"""Everything MCP: sessions over stdio and HTTP, the config file, the catalogue, results,
resources, sampling, tasks, Apify specifics; sign-in in `mcp/oauth/`. Imports `core` (and
`model`, for a server's sampling requests answered by our model)."""
