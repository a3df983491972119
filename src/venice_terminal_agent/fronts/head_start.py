"""Start stdio MCP servers before importing the SDKs, so their start-up overlaps ours.

A Python MCP server spends a second or more importing its own SDK before it can answer;
so does this process before it can talk to it. `venice-agent "question"` therefore spawns
each stdio server first (`mcp/stdio.py`, plain `subprocess`, no SDK needed), then
imports mcp and the model client while the servers boot; each session then takes its running server
instead of spawning one. Same transport, same child environment, same shutdown either way.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from typing import Any

from ..mcp.stdio import StdioServer, child_environment, spawn

__all__ = ["child_environment", "head_start"]


def head_start(servers: Sequence[Any]) -> tuple[list[Any], list[StdioServer]]:
    """Spawn every plain stdio server now; the configs come back with `started` filled in.

    Servers that need a check first (Node's version for Apify's) and any server that cannot
    be spawned here are left to the MCP session, which says what went wrong.
    """
    if sys.platform == "win32":
        return list(servers), []
    ready, started = [], []
    for server in servers:
        if server.transport != "stdio" or server.needs_node or server.unavailable:
            ready.append(server)
            continue
        try:
            handle = spawn(server.name, server.command, server.args, server.env, server.cwd)
        except (OSError, ValueError):
            ready.append(server)  # the session will try again and explain
            continue
        started.append(handle)
        ready.append(dataclasses.replace(server, started=handle))
    return ready, started
