"""Signing in to MCP servers with OAuth: the real CLI against a loopback authorisation server.

The server (`servers/oauth_server.py`) is the mcp SDK's own server side: discovery, dynamic
registration, PKCE, tokens, revocation. The "browser" is `servers/browser.py`, named by the
`BROWSER` variable Python's `webbrowser` honours: it follows the authorisation URL back to
the agent's loopback listener. Tokens go to a temporary user data folder (`XDG_DATA_HOME`).
"""

import asyncio
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from servers.net import free_port, serving
from venice_terminal_agent.config import Settings
from venice_terminal_agent.core.errors import ConfigError
from venice_terminal_agent.mcp.apify import apify_server
from venice_terminal_agent.mcp.oauth.token_store import TokenFile
from venice_terminal_agent.mcp.servers_file import parse_servers

SERVERS = Path(__file__).parent / "servers"
BIN = Path(sys.executable).parent


@pytest.fixture
def home(tmp_path) -> dict[str, str]:
    """The environment of a user with a browser and an empty data folder."""
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SERVERS / "browser.py"}" "$1"\n')
    browser.chmod(0o755)
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("VENICE_", "APIFY_"))}
    return {**keep, "XDG_DATA_HOME": str(tmp_path / "data"), "BROWSER": str(browser)}


async def venice_agent(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(BIN / "venice-agent"), *args, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode or 0, out.decode(), err.decode()


async def test_login_signs_in_sessions_use_it_and_logout_revokes(home, tmp_path):
    port, events = free_port(), tmp_path / "events"
    url = f"http://127.0.0.1:{port}/mcp"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"signed": {"url": url}}}))
    command = [sys.executable, str(SERVERS / "oauth_server.py"), str(port), str(events)]
    async with serving(command, b"Uvicorn running on", env=home):
        status, out, err = await venice_agent(home, "login", "signed", "--mcp-config", str(config))
        assert (status, out) == (0, "Signed in to signed (3 tools)\n"), err
        assert f"Sign in to signed in your browser: http://127.0.0.1:{port}/authorize?" in err
        stored = TokenFile("signed", url, Path(home["XDG_DATA_HOME"]) / "venice-agent" / "oauth")
        assert stat.S_IMODE(stored.path.stat().st_mode) == 0o600
        assert stat.S_IMODE(stored.path.parent.stat().st_mode) == 0o700
        token = (await stored.get_tokens()).access_token

        # No terminal here: the stored sign-in is used, no browser is needed.
        status, out, err = await venice_agent(
            home, "tools", "call", "whoami", "--yes", "--mcp-config", str(config)
        )
        assert (status, json.loads(out)) == (0, {"result": "signed in"}), err  # printed indented
        status, out, err = await venice_agent(home, "login", "signed", "--mcp-config", str(config))
        assert out.startswith("Already signed in to signed"), err

        status, out, err = await venice_agent(home, "logout", "signed", "--mcp-config", str(config))
        assert out == "Signed out of signed: tokens revoked and deleted\n", err
        assert not stored.path.exists()
        assert events.read_text().splitlines() == [
            "TOKEN authorization_code",
            "REVOKED refresh",
            "REVOKED access",
        ]

        # Signed out and no terminal: the server is skipped with what to do, said in one line.
        status, out, err = await venice_agent(home, "tools", "list", "--mcp-config", str(config))
        assert status == 2
        assert f"signed (http, {url}): failed: signed needs a sign-in: run venice-agent login signed" in out
    assert token not in out + err


async def legacy_login(home: dict[str, str], tmp_path: Path, issuer_path: str) -> tuple:
    """`venice-agent login` against `servers/legacy_oauth_server.py`: (status, err, requests, port)."""
    port, events = free_port(), tmp_path / "events"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"legacy": {"url": f"http://127.0.0.1:{port}/mcp"}}}))
    command = [sys.executable, str(SERVERS / "legacy_oauth_server.py"), str(port), str(events), issuer_path]
    async with serving(command, b"Uvicorn running on", env=home):
        status, out, err = await venice_agent(home, "login", "legacy", "--mcp-config", str(config))
    return status, out + err, events.read_text().splitlines(), port


async def test_a_server_without_resource_metadata_signs_in_where_its_origin_is_the_issuer(home, tmp_path):
    """The 2025-03-26 layout: no protected-resource metadata; the metadata at the origin's
    well-known URL, naming the origin as its issuer, is used."""
    status, output, requests, _ = await legacy_login(home, tmp_path, "")
    assert status == 0 and "Signed in to legacy (1 tools)" in output, output
    assert "GET /.well-known/oauth-authorization-server" in requests
    assert "POST /register" in requests and "TOKEN authorization_code" in requests


async def test_metadata_at_the_origin_naming_another_issuer_is_refused(home, tmp_path):
    """RFC 8414 §3.3: metadata fetched from the origin's well-known URL belongs to the origin; a
    document naming another issuer there (the conformance suite's back-compat mock names
    `<origin>/oauth`) "MUST NOT be used". Nothing is registered or sent to the endpoints it
    names, no browser is opened, and the user gets one line."""
    status, output, requests, port = await legacy_login(home, tmp_path, "/oauth")
    assert status == 2, output
    assert (
        "venice-agent login: legacy: sign-in failed: Authorization server metadata issuer mismatch: "
        f"http://127.0.0.1:{port}/oauth != http://127.0.0.1:{port}\n"
    ) in output
    assert "Sign in to legacy in your browser" not in output
    assert "GET /.well-known/oauth-authorization-server" in requests  # found, and refused
    assert not [r for r in requests if r.split()[-1].startswith(("/oauth/", "/register", "/token"))]


def test_an_oauth_entry_is_read_with_its_secrets_kept_out_of_messages():
    entry = {"url": "https://mcp.example.com/mcp", "oauth": {
        "grant_type": "client_credentials", "client_id": "corp", "client_secret": "${CORP_SECRET}"}}  # fmt: skip
    (server,) = parse_servers({"mcpServers": {"corp": entry}}, "mcp.json", Settings(), {"CORP_SECRET": "s3"})
    assert server.oauth == {"grant_type": "client_credentials", "client_id": "corp", "client_secret": "s3"}
    assert "s3" in server.secret_values()
    with pytest.raises(ConfigError, match="'oauth' does not know client_secrte"):
        parse_servers(
            {"mcpServers": {"c": {"url": "http://x/", "oauth": {"client_secrte": "a"}}}}, "f", Settings(), {}
        )
    with pytest.raises(ConfigError, match="'oauth' is for servers reached by 'url'"):
        parse_servers({"mcpServers": {"c": {"command": "x", "oauth": {}}}}, "f", Settings(), {})


def test_hosted_apify_is_anonymous_until_signed_in(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    settings = Settings(_env_file=None, apify_token=None)
    anonymous = apify_server(settings)
    assert anonymous.oauth is None and "tools=search-actors" in (anonymous.url or "")
    signing_in = apify_server(settings, sign_in=True)
    assert signing_in.url == "https://mcp.apify.com" and signing_in.oauth == {}
    TokenFile("apify", "https://mcp.apify.com")._write(tokens={"access_token": "t", "token_type": "Bearer"})
    signed_in = apify_server(settings)
    assert signed_in.url == "https://mcp.apify.com" and signed_in.oauth == {}

    from venice_terminal_agent.fronts.runtime import ANONYMOUS_APIFY, SIGNED_IN_APIFY, apify_mode

    assert apify_mode(settings, [signed_in]) == SIGNED_IN_APIFY
    assert apify_mode(settings, [anonymous]) == ANONYMOUS_APIFY


async def test_a_token_obtained_by_oauth_is_masked_in_errors_and_for_the_model(home, tmp_path):
    """The access token the sign-in obtained, repeated by the server in a JSON-RPC error and in
    an `is_error` result: masked like a token from `mcp.json` in `tools call` and in what the
    model is sent."""
    from cli_support import fake_venice

    port, events = free_port(), tmp_path / "events"
    url = f"http://127.0.0.1:{port}/mcp"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"signed": {"url": url}}}))
    command = [sys.executable, str(SERVERS / "oauth_server.py"), str(port), str(events)]
    script = [{"tool_calls": [{"name": "refuse", "arguments": {}}, {"name": "fail", "arguments": {}}]},
              {"text": "done"}]  # fmt: skip
    async with serving(command, b"Uvicorn running on", env=home):
        status, _, err = await venice_agent(home, "login", "signed", "--mcp-config", str(config))
        assert status == 0, err
        stored = TokenFile("signed", url, Path(home["XDG_DATA_HOME"]) / "venice-agent" / "oauth")
        token = (await stored.get_tokens()).access_token
        said = {}
        for tool in ("refuse", "fail"):
            said[tool] = await venice_agent(home, "tools", "call", tool, "--yes", "--mcp-config", str(config))
        with fake_venice(script, tmp_path) as fake:
            env = {**home, "VENICE_API_KEY": "test-key", "VENICE_BASE_URL": fake.base_url}
            status, out, err = await venice_agent(env, "why?", "--yes", "--mcp-config", str(config))
            sent = json.dumps(fake.chat_bodies()[-1]["messages"])
    assert said["refuse"] == (5, "", "venice-agent tools call: refuse: token *** may not do this\n")
    assert said["fail"] == (
        5,
        "",
        "venice-agent tools call: fail: Error executing tool fail: token *** has expired\n",
    )
    assert status == 0, err
    assert "token *** may not do this" in sent and "token *** has expired" in sent
    assert token not in sent + out + err


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (
            '{"url": "URL", "tokens": {"access_token": 5}}',
            "its 'tokens' has the wrong shape",
        ),  # pydantic's text
        ('{"url": "URL", "client_info": 5}', "its 'client_info' has the wrong shape"),  # 'int' has no .get
        ('{"url": "URL", "tok', "it is not a JSON object"),
    ],
)
async def test_a_damaged_token_file_is_named_with_its_fix_and_login_replaces_it(home, tmp_path, damage, why):
    port, events = free_port(), tmp_path / "events"
    url = f"http://127.0.0.1:{port}/mcp"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"signed": {"url": url}}}))
    stored = TokenFile("signed", url, Path(home["XDG_DATA_HOME"]) / "venice-agent" / "oauth")
    stored.path.parent.mkdir(parents=True)
    stored.path.write_text(damage.replace("URL", url))
    said = f"signed cannot start: its sign-in file {stored.path} cannot be read ({why}); run venice-agent login signed to replace it"
    command = [sys.executable, str(SERVERS / "oauth_server.py"), str(port), str(events)]
    async with serving(command, b"Uvicorn running on", env=home):
        status, out, err = await venice_agent(home, "tools", "list", "--mcp-config", str(config))
        assert (status, out.splitlines()[0]) == (2, f"signed (http, {url}): failed: {said}"), out + err
        status, out, err = await venice_agent(
            home, "tools", "call", "whoami", "--yes", "--mcp-config", str(config)
        )
        assert status == 2 and f": {said}\n" in err, err

        status, out, err = await venice_agent(home, "login", "signed", "--mcp-config", str(config))
        assert (status, out) == (0, "Signed in to signed (3 tools)\n"), err
        assert f"{stored.path} could not be read ({why}): replaced by this sign-in\n" in err
        status, out, err = await venice_agent(
            home, "tools", "call", "whoami", "--yes", "--mcp-config", str(config)
        )
        assert (status, json.loads(out)) == (0, {"result": "signed in"}), err

        stored.path.write_text(damage.replace("URL", url))
        status, out, err = await venice_agent(home, "logout", "signed", "--mcp-config", str(config))
        assert (status, out) == (
            0,
            f"Signed out of signed: {stored.path} could not be read ({why}) and is deleted\n",
        )
        assert not stored.path.exists()
