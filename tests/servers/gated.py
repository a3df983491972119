"""mcp-server-time, started only once the test opens the FIFO named by the argument for
writing: start-up waits on the test, so keys typed meanwhile are typed ahead of any prompt."""

import runpy
import sys

with open(sys.argv[1]) as gate:  # blocks until a writer opens it
    gate.read()
sys.argv = ["mcp_server_time", "--local-timezone", "UTC"]
runpy.run_module("mcp_server_time", run_name="__main__")
