"""The client under test for the MCP conformance suite: our session code, driven by its runner.

    conformance client --command "python conformance_client.py" --scenario tools_call

The runner appends the test server's URL and sets MCP_CONFORMANCE_SCENARIO; exit 0 is a pass.
"""

import asyncio
import os
import sys

from venice_terminal_agent.tools.mcp_config import ServerConfig
from venice_terminal_agent.tools.mcp_toolbox import McpToolbox


async def main(url: str, scenario: str) -> int:
    async with McpToolbox.open(
        [ServerConfig("conformance", url=url)], startup_timeout=20, call_timeout=20
    ) as box:
        if box.failures:
            print("\n".join(box.failures), file=sys.stderr)
            return 1
        print(f"tools: {[spec.name for spec in box.specs()]}")
        if scenario == "tools_call":
            result = await box.call("add_numbers", {"a": 5, "b": 3})
            print(f"add_numbers: {result}")
            return 0 if "8" in result else 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))))
