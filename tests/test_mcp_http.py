"""Streamable HTTP with a bearer token: our Python server of record on a loopback port."""

import asyncio
import socket
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from venice_terminal_agent.tools.mcp_config import ServerConfig
from venice_terminal_agent.tools.mcp_toolbox import McpToolbox

SERVER = Path(__file__).parent / "servers" / "http_bearer.py"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@asynccontextmanager
async def bearer_server(token: str):
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(SERVER), str(port), token, stderr=asyncio.subprocess.PIPE
    )
    try:
        async with asyncio.timeout(30):
            while b"Uvicorn running on" not in (line := await process.stderr.readline()):
                assert line, "the HTTP server exited before listening"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        await process.wait()


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
