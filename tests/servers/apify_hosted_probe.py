"""Apify's hosted mode end to end against its local HTTP double, `dist/dev_server.js`.

    python apify_hosted_probe.py NODE DEV_SERVER_JS PORT

Starts the double on 127.0.0.1:PORT (its Apify API replaced by the 401 stand-in, telemetry
off), then opens McpToolbox on the Apify server the settings describe (with APIFY_MCP_URL
pointing at the double and a fake token), calls `search-actors`, and prints one JSON line.
Meant to run inside `unshare -n` (a loopback-only network) together with the double.
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from venice_terminal_agent import ToolError
from venice_terminal_agent.config import Settings
from venice_terminal_agent.mcp.apify import apify_server
from venice_terminal_agent.mcp.toolbox import McpToolbox

STAND_IN = Path(__file__).with_name("apify_api_401.py")


async def probe(port: int) -> dict:
    settings = Settings(_env_file=None, apify_mcp_url=f"http://127.0.0.1:{port}/", apify_token="fake-token")
    server = apify_server(settings)
    async with McpToolbox.open([server], startup_timeout=30, call_timeout=30) as box:
        report = {
            "failures": box.failures,
            "transport": box.servers[0].transport,
            "tools": {spec.name: spec.read_only for spec in box.specs()},
        }
        try:
            report["search"] = await box.call("search-actors", {"keywords": "web"})
        except ToolError as error:
            report["search_error"] = error.message
    return report


def main() -> None:
    node, script, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    env = {**os.environ, "PORT": str(port), "TELEMETRY_ENABLED": "false"}
    double = subprocess.Popen(
        [sys.executable, str(STAND_IN), node, script],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        for line in double.stdout:
            if b"listening" in line:
                break
        else:
            raise SystemExit("the dev server exited before listening")
        print(json.dumps(asyncio.run(probe(port))))
    finally:
        double.terminate()
        double.wait(timeout=10)


if __name__ == "__main__":
    main()
