"""Streamable HTTP with a bearer token: our Python server of record on a loopback port."""

import sys
from contextlib import asynccontextmanager
from pathlib import Path

from servers.net import free_port, serving
from venice_terminal_agent.mcp.server_config import ServerConfig
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


def test_an_error_result_quoting_a_configured_token_is_masked_on_stderr_and_for_the_model(tmp_path):
    """A `${VAR}` token in a header, repeated by the server in an `is_error` result: masked like
    any error, in `tools call` and in what the model is sent; a successful result is the tool's
    own text, untouched."""
    import asyncio
    import json
    import subprocess

    from cli_support import COMMAND, clean_env, fake_venice

    token = "notes-token-0123456789"

    async def scenario():
        async with bearer_server(token) as url:
            config = tmp_path / "mcp.json"
            entry = {"url": url, "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}}
            config.write_text(json.dumps({"mcpServers": {"notes": entry}}))
            script = [{"tool_calls": [{"name": "fail", "arguments": {}}]},
                      {"tool_calls": [{"name": "echo", "arguments": {"text": f"say {token}"}}]}, {"text": "done"}]  # fmt: skip
            with fake_venice(script, tmp_path) as fake:
                env = clean_env(tmp_path, fake.base_url, NOTES_TOKEN=token)
                run = lambda *args: subprocess.run(  # noqa: E731
                    [COMMAND, *args, "--yes", "--mcp-config", str(config)], capture_output=True, text=True,
                    env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, timeout=90, check=False,
                )  # fmt: skip
                called, asked = await asyncio.gather(
                    asyncio.to_thread(run, "tools", "call", "fail"), asyncio.to_thread(run, "say it")
                )
                return called, asked, fake.chat_bodies()

    called, asked, bodies = asyncio.run(scenario())
    assert called.returncode == 5, called.stderr
    assert (
        called.stderr
        == "venice-agent tools call: fail: Error executing tool fail: the token *** is not allowed to fail\n"
    )
    assert asked.returncode == 0, asked.stderr
    results = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert "the token *** is not allowed to fail" in results[0] and token not in results[0]
    assert f"say {token}" in results[1]  # a result is untouched
    failed = [line for line in asked.stderr.splitlines() if "not allowed to fail" in line]
    assert failed and all(token not in line and "***" in line for line in failed), asked.stderr


REDIRECTS = Path(__file__).parent / "servers" / "redirects.py"


@asynccontextmanager
async def redirecting(events: Path, *args: str):
    port = free_port()
    async with serving(
        [sys.executable, str(REDIRECTS), str(port), str(events), *args], b"Uvicorn running on"
    ):
        yield f"http://127.0.0.1:{port}"


async def test_a_redirect_within_the_origin_is_followed_with_the_token(tmp_path):
    events = tmp_path / "events"
    async with redirecting(events, "/mcp", "s3cret") as base:
        notes = ServerConfig("notes", url=f"{base}/old", headers={"Authorization": "Bearer s3cret"})
        async with McpToolbox.open([notes], startup_timeout=20) as box:
            assert box.failures == [] and await box.call("add", {"a": 2, "b": 40}) == '{"result": 42}'
    assert all("authorization=Bearer s3cret" in line for line in events.read_text().splitlines())


async def test_a_redirect_to_another_origin_is_followed_without_the_token_or_headers(tmp_path):
    """Two ports are two origins: the new one gets the request, never the configured
    Authorization header or the other configured headers (they were for the first)."""
    there_events, here_events = tmp_path / "there", tmp_path / "here"
    async with redirecting(there_events) as there, redirecting(here_events, f"{there}/mcp") as here:
        headers = {"Authorization": "Bearer s3cret", "X-Api-Key": "k3y-value"}
        notes = ServerConfig("notes", url=f"{here}/old", headers=headers)
        async with McpToolbox.open([notes], startup_timeout=20) as box:
            assert box.failures == [] and await box.call("add", {"a": 2, "b": 40}) == '{"result": 42}'
    arrived = there_events.read_text().splitlines()
    assert arrived and all(line.endswith(" authorization=- x-api-key=-") for line in arrived), arrived
    asked = here_events.read_text().splitlines()
    assert asked and all("authorization=Bearer s3cret x-api-key=k3y-value" in line for line in asked)


async def test_a_request_made_for_another_origin_keeps_its_credentials_through_its_redirects(tmp_path):
    """An OAuth token request goes to the authorisation server, often on another origin than the
    MCP URL: its client credentials were made for that origin, and a redirect within it keeps them
    (only a hop to yet another origin drops them)."""
    import httpx2

    from venice_terminal_agent.mcp.redirects import redirecting_transport

    events = tmp_path / "events"
    async with redirecting(events, "/token") as issuer:
        config = ServerConfig("notes", url="http://127.0.0.1:9/mcp", headers={"X-Api-Key": "k3y-value"})
        async with httpx2.AsyncClient(transport=redirecting_transport(config)) as http:
            basic = {"Authorization": "Basic Y2xpZW50OnNlY3JldA==", "X-Api-Key": "k3y-value"}
            await http.post(f"{issuer}/old", headers=basic, data={"grant_type": "client_credentials"})
    assert [line.split(" ", 1)[1] for line in events.read_text().splitlines()] == [
        "POST /old authorization=Basic Y2xpZW50OnNlY3JldA== x-api-key=k3y-value",
        "POST /token authorization=Basic Y2xpZW50OnNlY3JldA== x-api-key=k3y-value",
    ]
