// Preloaded into server-everything (NODE_OPTIONS=--require, `servers.node.EVERYTHING_ENV`): the
// server exits when its stdin closes, as MCP's stdio transport asks of a server. server-everything
// keeps timers running and only a signal ends it, so every client that closed it waited out the
// 2 s a server is given to leave before SIGTERM (EXIT_GRACE in the agent's mcp/stdio.py, as in the
// mcp SDK's client): about 40 tests, 2 s each.
process.stdin.on("end", () => process.exit(0));
