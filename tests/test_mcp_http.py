"""Streamable HTTP with a bearer token: our Python server of record on a loopback port."""

import sys
from contextlib import asynccontextmanager
from pathlib import Path

from servers.net import free_port, serving
from venice_terminal_agent.tools.mcp_config import ServerConfig
from venice_terminal_agent.tools.mcp_toolbox import McpToolbox

SERVER = Path(__file__).parent / "servers" / "http_bearer.py"


@asynccontextmanager
async def bearer_server(token: str):
    port = free_port()
    async with serving([sys.executable, str(SERVER), str(port), token], b"Uvicorn running on"):
        yield f"http://127.0.0.1:{port}/mcp"


async def test_the_bearer_token_is_carried_and_a_wrong_one_is_a_readable_error():
    async with bearer_server("s3cret") as url:
        good = ServerConfig("notes", url=url, headers={"Authorization": "Bearer s3cret"})
        bad = ServerConfig("wrong", url=url, headers={"Authorization": "Bearer nope"})
        async with McpToolbox.open([good, bad], startup_timeout=20) as box:
            assert await box.call("add", {"a": 2, "b": 40}) == '{"result": 42}'
            assert [s.state for s in box.servers] == ["ready", "failed"]
            (reason,) = box.failures
    assert reason.startswith("wrong did not start (Unauthorized: bad or missing token)")
    assert "s3cret" not in reason and "nope" not in reason
