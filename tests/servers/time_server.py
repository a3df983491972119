"""mcp-server-time as `python -m mcp_server_time ARGS` runs it, started for less CPU.

    python time_server.py [--local-timezone UTC]

A test run starts this server hundreds of times (cli_support.mcp_config), and most of each start
is importing it and the MCP SDK: thousands of pydantic objects that live as long as the process.
Imported with the garbage collector off, then frozen (never scanned again) and the collector on,
as the agent's own command starts (src/venice_terminal_agent/cli/start.py): 0.62 -> 0.46
CPU-seconds a start (2026-12-04). The server itself is the same code, run the same way.
"""

import gc
import runpy
import sys

gc.disable()
import mcp_server_time.server  # noqa: E402, F401 - the server's imports, the SDK's among them

gc.freeze()
gc.enable()
sys.argv = ["mcp_server_time", *sys.argv[1:]]
runpy.run_module("mcp_server_time", run_name="__main__", alter_sys=True)
