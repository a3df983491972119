"""Streamable HTTP with a bearer token: our Python server of record on a loopback port."""

import sys
from contextlib import asynccontextmanager
from pathlib import Path

from servers.net import free_port, serving
from venice_terminal_agent.mcp.config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox

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
    assert reason.startswith("wrong did not start (Unauthorized: bad or missing token): ")
    assert "answered HTTP 401 Unauthorized: the server wants a token or a sign-in" in reason
    assert "s3cret" not in reason and "nope" not in reason


async def test_a_wrong_path_says_its_status_and_to_check_the_path():
    async with bearer_server("s3cret") as url:
        wrong = ServerConfig(
            "notes", url=url.replace("/mcp", "/nope"), headers={"Authorization": "Bearer s3cret"}
        )
        async with McpToolbox.open([wrong], startup_timeout=20) as box:
            (reason,) = box.failures
    assert reason == (
        f"notes did not start: {url.replace('/mcp', '/nope')} answered HTTP 404 Not Found: "
        "nothing is there; check the URL's path (MCP servers often serve at /mcp)"
    )


def test_every_http_status_at_start_up_is_named():
    from venice_terminal_agent.mcp.results import http_status_reason

    assert http_status_reason("http://h/mcp", 501) == (
        "http://h/mcp answered HTTP 501 Not Implemented: "
        "check that the URL is the server's Streamable HTTP endpoint"
    )
    assert "wants a token or a sign-in" in http_status_reason("http://h/mcp", 403)
