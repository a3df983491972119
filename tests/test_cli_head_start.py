"""Stdio MCP servers spawned before the SDKs are imported, then handed to their sessions."""

from __future__ import annotations

import json
import os
import sys

import pytest

from venice_terminal_agent.fronts.head_start import child_environment, head_start
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox

TIME = ServerConfig("time", command=sys.executable, args=("-m", "mcp_server_time", "--local-timezone", "UTC"))


def test_a_child_gets_the_sdks_few_variables_and_its_own_never_our_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VENICE_API_KEY", "sk-secret")
    monkeypatch.setenv("APIFY_TOKEN", "apify-secret")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("SHELL", "() { evil; }")  # a shell function is never passed on
    printer = ServerConfig(
        "env",
        command=sys.executable,
        args=("-c", "import os, json; print(json.dumps(dict(os.environ)))"),
        env={"TZ": "UTC"},
    )
    servers, started = head_start([printer])
    try:
        assert servers[0].started is started[0]
        output, _ = started[0].process.communicate(timeout=30)
    finally:
        started[0].discard()
    seen = json.loads(output)
    seen.pop("LC_CTYPE", None)  # Python may set this itself for a C locale
    assert seen["TZ"] == "UTC" and seen["PATH"] == "/usr/bin:/bin"
    assert "VENICE_API_KEY" not in seen and "APIFY_TOKEN" not in seen and "SHELL" not in seen
    assert set(seen) <= {"HOME", "LOGNAME", "PATH", "TERM", "USER", "TZ"}
    assert child_environment({"A": "1"})["A"] == "1"


def test_only_plain_stdio_servers_get_a_head_start() -> None:
    web = ServerConfig("web", url="http://127.0.0.1:1/mcp")
    apify = ServerConfig("apify", command="npx", args=("-y", "@apify/actors-mcp-server"), needs_node=22)
    servers, started = head_start([web, apify])
    assert started == [] and servers == [web, apify]


async def test_a_started_server_serves_its_session_and_stops_with_it() -> None:
    servers, started = head_start([TIME])
    try:
        async with McpToolbox.open(servers) as tools:
            assert tools.failures == []
            assert "get_current_time" in tools
            result = await tools.call("get_current_time", {"timezone": "UTC"})
            assert json.loads(result)["timezone"] == "UTC"
        assert started[0].process.poll() is not None  # closed with the session, not left behind
    finally:
        for server in started:
            server.discard()


async def test_a_server_that_dies_at_once_is_a_readable_failure_not_a_hang() -> None:
    dying = ServerConfig(
        "dying", command=sys.executable, args=("-c", "import sys; sys.exit('no config found')")
    )
    servers, started = head_start([dying])
    try:
        async with McpToolbox.open(servers, startup_timeout=30) as tools:
            assert len(tools.failures) == 1
            assert "dying" in tools.failures[0] and "no config found" in tools.failures[0]
    finally:
        started[0].discard()


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_server_never_handed_to_a_session_is_stopped_and_its_pipes_closed() -> None:
    before = open_descriptors()
    _, started = head_start([TIME])
    started[0].discard()
    assert started[0].process.poll() is not None
    assert open_descriptors() == before  # stdin, stdout and the stderr file: none left open


def test_a_command_that_cannot_start_is_left_to_the_session_to_explain() -> None:
    missing = ServerConfig("missing", command="/nonexistent/mcp-server")
    servers, started = head_start([missing])
    assert started == [] and servers == [missing]
