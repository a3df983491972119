"""@apify/actors-mcp-server 0.16 over stdio on Node 22, offline: a fake token, and the Apify
API replaced by a loopback stand-in answering 401 (so calls come back at once), run in a
network namespace with only loopback (`unshare -n`) where that works."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from servers.net import free_port
from servers.node import (
    MODULES,
    bin_path,
    in_loopback_namespace,
    loopback_only_works,
    node22,
    path_with_node22,
)
from venice_terminal_agent import ToolError
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox

STAND_IN = Path(__file__).parent / "servers" / "apify_api_401.py"
APIFY_STDIO = MODULES / "@apify" / "actors-mcp-server" / "dist" / "stdio.js"
# Resolved: the script starts its server only when argv[1] is its own real path, and `.tools`
# may be a symbolic link (a git worktree shares the main checkout's).
APIFY_DEV_SERVER = (MODULES / "@apify" / "actors-mcp-server" / "dist" / "dev_server.js").resolve()
HOSTED_PROBE = Path(__file__).parent / "servers" / "apify_hosted_probe.py"
READ_ONLY = {"search-actors", "fetch-actor-details", "get-actor-run", "get-dataset-items",
             "get-key-value-store-record", "search-apify-docs", "fetch-apify-docs"}  # fmt: skip
ASKS = {"call-actor", "abort-actor-run"}


def apify_config() -> ServerConfig:
    bin_path("actors-mcp-server")
    command = [
        sys.executable, str(STAND_IN), str(node22()), str(APIFY_STDIO),
        "--tools", "actors,docs", "--telemetry-enabled=false",
    ]  # fmt: skip
    if loopback_only_works():
        command = in_loopback_namespace(command)
    env = {"APIFY_TOKEN": "fake", "PATH": path_with_node22()}
    return ServerConfig(
        "apify", command=command[0], args=tuple(command[1:]), env=env, apify=True, needs_node=22
    )


async def test_apify_tools_consent_and_errors_come_back_readable():
    async with McpToolbox.open([apify_config()], startup_timeout=60, call_timeout=60) as box:
        assert box.failures == []
        specs = {spec.name: spec for spec in box.specs()}
        assert set(specs) == READ_ONLY | ASKS
        assert {name for name, spec in specs.items() if spec.read_only} == READ_ONLY
        assert all(spec.server == "apify" for spec in specs.values())

        # Its JSON-RPC -32602 errors (bad arguments) come back as readable tool errors ...
        with pytest.raises(ToolError) as caught:
            await box.call("search-actors", {"limit": "x"})
        assert caught.value.message.startswith('Invalid arguments for tool "search-actors"')
        assert "/limit: must be integer" in caught.value.message
        # ... and so do its is_error results (the stand-in API refuses the fake token).
        with pytest.raises(ToolError) as caught:
            await box.call("search-actors", {"keywords": "web scraper"})
        assert caught.value.message.startswith('Error calling tool "search-actors"')
        assert "authentication token is not valid" in caught.value.message


async def test_an_unknown_apify_tool_is_refused_by_the_server_as_a_readable_error():
    async with McpToolbox.open([apify_config()], startup_timeout=60, call_timeout=60) as box:
        session = box._sessions["apify"]  # past the catalogue, which refuses unknown names itself
        with pytest.raises(ToolError) as caught:
            await session.call("no-such-tool", {})
    assert caught.value.message.startswith('Tool "no-such-tool" was not found.')


def test_apify_hosted_mode_with_a_token_against_apify_s_http_double():
    """The default hosted path (bearer token, Streamable HTTP) against `dist/dev_server.js`."""
    bin_path("actors-mcp-server")
    port = free_port()  # inside the namespace any port would do
    command = [sys.executable, str(HOSTED_PROBE), str(node22()), str(APIFY_DEV_SERVER), str(port)]
    if loopback_only_works():
        command = in_loopback_namespace(command)
    env = {**os.environ, "PATH": path_with_node22()}
    env = {k: v for k, v in env.items() if not k.startswith(("APIFY_", "VENICE_"))}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["failures"] == [] and report["transport"] == "http"
    assert {name for name, free in report["tools"].items() if free} == READ_ONLY
    assert {name for name, free in report["tools"].items() if not free} == ASKS
    assert "authentication token is not valid" in report["search_error"]
