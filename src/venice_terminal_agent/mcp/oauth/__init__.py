"""Signing in to MCP servers: the SDK's OAuth provider, grants, the browser redirect, token files."""
