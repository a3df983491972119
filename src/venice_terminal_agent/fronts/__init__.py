"""How a person or a program reaches the agent: `runtime.py`, the one composition root, and what
the fronts share beside it; one folder per front (`terminal/`, `acp/`, `mcp_server/`, `serve/`,
`batch/`), none importing another (tests/test_import_graph.py)."""
