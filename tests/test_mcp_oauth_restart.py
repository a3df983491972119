"""Stored OAuth tokens after a restart: an expired access token is refreshed with the refresh
token before the first request, never a new browser sign-in.

The loopback authorisation server (`servers/oauth_server.py`, the mcp SDK's server side) can
make its access tokens invalid on request (`/expire-access-tokens`), as time would; the token
file's clock is injected, so "two hours later" takes no time. Each `McpToolbox.open` is a
start of the agent: nothing is shared between them but the token file.
"""

import json
import socket
import stat
import sys
from pathlib import Path

import httpx2
import pytest

from servers.net import free_port, serving
from venice_terminal_agent.mcp.oauth.auth import SignIn
from venice_terminal_agent.mcp.oauth.token_store import TokenFile
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox

SERVER = Path(__file__).parent / "servers" / "oauth_server.py"
SIGNED_IN = json.dumps({"result": "signed in"})


async def browser(server: str, url: str) -> None:
    async with httpx2.AsyncClient(follow_redirects=True, timeout=20) as http:
        await http.get(url)


@pytest.mark.parametrize("token_path", ["/token", "/oauth/token"])
async def test_a_restart_past_the_expiry_refreshes_without_a_browser(tmp_path, token_path):
    port, events = free_port(), tmp_path / "events"
    base = f"http://127.0.0.1:{port}"
    now = [1_000_000.0]
    files = tmp_path / "oauth"

    def signing_in(person: bool) -> SignIn:
        storage = lambda config: TokenFile(config.name, config.url, files, clock=lambda: now[0])  # noqa: E731
        return SignIn(open_url=browser if person else None, storage=storage)

    config = ServerConfig("signed", url=f"{base}/mcp")
    command = [sys.executable, str(SERVER), str(port), str(events), token_path]
    async with serving(command, b"Uvicorn running on"):
        async with McpToolbox.open([config], sign_in=signing_in(person=True)) as box:
            assert box.failures == [] and await box.call("whoami", {}) == SIGNED_IN
        stored = json.loads((files / "signed.json").read_text())
        assert stored["expires_at"] == now[0] + 3600
        assert stored["server_metadata"]["token_endpoint"] == base + token_path
        assert stat.S_IMODE((files / "signed.json").stat().st_mode) == 0o600

        async with httpx2.AsyncClient() as http:
            assert (await http.post(f"{base}/expire-access-tokens")).status_code == 204
        now[0] += 2 * 3600  # two hours later, a new start, and nobody at a terminal
        async with McpToolbox.open([config], sign_in=signing_in(person=False)) as box:
            assert box.failures == [] and await box.call("whoami", {}) == SIGNED_IN
        assert json.loads((files / "signed.json").read_text())["expires_at"] == now[0] + 3600

        now[0] += 3600 - 30  # within a minute of the expiry: refreshed early, before use
        with socket.socket() as taken:  # another program holds the registered redirect port
            taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the last TIME_WAIT
            taken.bind(("127.0.0.1", TokenFile("signed", config.url or "", files).registered_port()))
            taken.listen()
            async with McpToolbox.open([config], sign_in=signing_in(person=False)) as box:
                assert box.failures == [] and await box.call("whoami", {}) == SIGNED_IN
    assert events.read_text().splitlines() == [
        "TOKEN authorization_code",
        "EXPIRED access tokens",
        "TOKEN refresh_token",
        "TOKEN refresh_token",
    ]
