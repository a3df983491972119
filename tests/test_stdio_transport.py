"""The stdio transport's contract, run against this agent's transport AND the SDK's
`stdio_client`: the same tests, so ours keeps the SDK's framing rules and shutdown order.

Each test drives a real child process (tests/servers/raw_mcp.py) behind the same `mcp.Client`.
Where ours goes further (a result cut inside a character, junk on stdout) is tested in
test_mcp_misbehaving.py; its speed on large results is benchmarks/bench_mcp_result_size.py.
"""

from __future__ import annotations

import os
import select
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from venice_terminal_agent.mcp.results import CONNECTION_CLOSED
from venice_terminal_agent.mcp.stdio import spawn

RAW = str(Path(__file__).parent / "servers" / "raw_mcp.py")


@pytest.fixture(params=["ours", "sdk"])
def transport(request, monkeypatch):
    # Both wait 2 s before each escalation; the order is what is tested, not the wait.
    monkeypatch.setattr("venice_terminal_agent.mcp.stdio.EXIT_GRACE", 0.5)
    monkeypatch.setattr("mcp.client.stdio.PROCESS_TERMINATION_TIMEOUT", 0.5)
    monkeypatch.setattr("mcp.client.stdio.FORCE_KILL_TIMEOUT", 0.5)
    errlogs: list[Any] = []  # the child's stderr file is the caller's to close, with either transport

    def ours(args: list[str], env: dict[str, str] | None = None):
        server = spawn("raw", sys.executable, args, env or {}, None)
        errlogs.append(server.stderr)
        return server

    def sdk(args: list[str], env: dict[str, str] | None = None):
        errlogs.append(errlog := tempfile.TemporaryFile("w+"))
        return stdio_client(StdioServerParameters(command=sys.executable, args=args, env=env), errlog=errlog)

    yield ours if request.param == "ours" else sdk
    for errlog in errlogs:
        errlog.close()


def client(transport) -> Client:
    return Client(transport, mode="legacy", read_timeout_seconds=60)


async def test_a_call_and_a_large_result_arrive_whole(transport):
    async with client(transport([RAW])) as session:
        assert (await session.call_tool("echo", {"text": "héllo ✓"})).content[0].text == "héllo ✓"
        big = await session.call_tool("big", {"size": 3_000_000})
        assert big.content[0].text == "x" * 3_000_000


async def test_the_child_gets_the_few_inherited_variables_and_its_own_never_ours(transport, monkeypatch):
    monkeypatch.setenv("VENICE_API_KEY", "sk-secret")
    async with client(transport([RAW], {"GREETING": "hi"})) as session:
        names = set((await session.call_tool("env", {})).content[0].text.split())
    assert "GREETING" in names and "PATH" in names and "VENICE_API_KEY" not in names


async def test_a_server_dying_mid_call_ends_the_call_as_a_closed_connection(transport):
    async with client(transport([RAW])) as session:
        with pytest.raises(MCPError) as caught:
            await session.call_tool("crash", {})
    assert caught.value.code == CONNECTION_CLOSED


def ended(record: Path) -> list[str]:
    return record.read_text().split()


async def test_closing_closes_stdin_first_and_a_server_that_leaves_is_not_signalled(transport, tmp_path):
    record = tmp_path / "record"
    async with client(transport([RAW, "--record", str(record)])) as session:
        await session.call_tool("echo", {"text": "x"})
    assert ended(record) == ["eof"]


async def test_a_server_staying_after_stdin_closes_gets_sigterm(transport, tmp_path):
    record = tmp_path / "record"
    async with client(transport([RAW, "--record", str(record), "--ignore-eof"])) as session:
        await session.call_tool("echo", {"text": "x"})
    assert ended(record) == ["eof", "term"]


async def test_a_server_ignoring_sigterm_is_killed_with_its_whole_process_group(transport, tmp_path):
    record = tmp_path / "record"
    args = [RAW, "--record", str(record), "--ignore-eof", "--ignore-term", "--child"]
    async with client(transport(args)) as session:
        await session.call_tool("echo", {"text": "x"})
        grandchild = os.pidfd_open(int(ended(record)[1]))  # "child PID"
    try:
        ready, _, _ = select.select([grandchild], [], [], 30)  # readable once it has exited
        assert ready == [grandchild]
    finally:
        os.close(grandchild)
    assert ended(record)[2:] == ["eof", "term-ignored"]
