"""Start stdio MCP servers before importing the SDKs, so their start-up overlaps ours.

A Python MCP server spends a second or more importing its own SDK before it can answer;
so does this process before it can talk to it. `venice-agent "question"` therefore spawns
each stdio server first (plain `subprocess`, no SDK needed), then imports mcp and openai
while the servers boot, and finally hands each running process to its MCP session as a
`Transport` over the process's pipes.

The child gets exactly what the mcp SDK would give it: the same few inherited variables
(HOME, LOGNAME, PATH, SHELL, TERM, USER) plus what its configuration names, never our keys.
Shutdown follows the SDK's order too: close stdin, wait, then end the process group.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")  # as mcp.client.stdio on POSIX
EXIT_GRACE = 2.0  # seconds for a server to leave after its stdin closes, then SIGTERM, then SIGKILL
MAX_LINE = 64 * 1024 * 1024  # one JSON-RPC message per line; results can be large


def child_environment(extra: dict[str, str]) -> dict[str, str]:
    env = {
        name: value for name in INHERITED if (value := os.environ.get(name)) and not value.startswith("()")
    }
    return env | extra


class StartedServer:
    """A stdio MCP server already running; `async with` it to get the session's streams."""

    def __init__(self, process: subprocess.Popen[bytes], stderr: Any) -> None:
        self.process = process
        self.stderr = stderr  # an unlinked temporary file: the server's chatter stays off the screen
        self._entered = False

    async def __aenter__(self) -> Any:
        self._entered = True
        self._context = self._streams()
        return await self._context.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._context.__aexit__(*exc)

    def discard(self) -> None:
        """Stop a server that was never handed to a session (start-up failed elsewhere)."""
        if not self._entered:
            _end(self.process, signal.SIGKILL)
            self.process.wait()
        self.stderr.close()

    @asynccontextmanager
    async def _streams(self) -> AsyncIterator[tuple[Any, Any]]:
        import anyio
        import mcp_types
        from mcp.shared.message import SessionMessage

        process = self.process
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_LINE)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), process.stdout
        )
        write_transport, write_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, process.stdin
        )
        writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        to_session, from_server = anyio.create_memory_object_stream[Any](0)
        to_server, from_session = anyio.create_memory_object_stream[Any](0)

        async def server_to_session() -> None:
            async with to_session:
                with suppress(OSError, ConnectionError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    while line := await reader.readline():
                        if not line.strip():
                            continue
                        try:
                            message: Any = SessionMessage(
                                mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                            )
                        except ValueError as error:
                            message = error  # the session reports it
                        await to_session.send(message)

        async def session_to_server() -> None:
            try:
                async with from_session:
                    async for item in from_session:
                        data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                        writer.write(data.encode() + b"\n")
                        await writer.drain()
            except (OSError, ConnectionError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                await to_session.aclose()  # the server went away: the session sees the end

        async with anyio.create_task_group() as group:
            group.start_soon(server_to_session)
            group.start_soon(session_to_server)
            try:
                yield from_server, to_server
            finally:
                with anyio.CancelScope(shield=True):
                    to_server.close()
                    from_server.close()
                    write_transport.close()  # stdin closed: the server's cue to leave
                    await _stop(process)
                    read_transport.close()  # stderr stays open: a failure's reason may quote it
                group.cancel_scope.cancel()


async def _stop(process: subprocess.Popen[bytes]) -> None:
    for then in (signal.SIGTERM, signal.SIGKILL, None):
        for _ in range(int(EXIT_GRACE / 0.01)):
            if process.poll() is not None:
                return
            await asyncio.sleep(0.01)
        if then is not None:
            _end(process, then)


def _end(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)  # the whole group: a server's own children go too


def head_start(servers: Sequence[Any]) -> tuple[list[Any], list[StartedServer]]:
    """Spawn every plain stdio server now; the configs come back with `started` filled in.

    Servers that need a check first (Node's version for Apify's) and any server that cannot
    be spawned here are left to the MCP session, which says what went wrong.
    """
    if sys.platform == "win32":
        return list(servers), []
    ready, started = [], []
    for server in servers:
        if server.transport != "stdio" or server.needs_node or server.unavailable:
            ready.append(server)
            continue
        stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        try:
            process = subprocess.Popen(
                [server.command, *server.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=child_environment(dict(server.env)),
                cwd=server.cwd,
                start_new_session=True,
            )
        except (OSError, ValueError):
            stderr.close()
            ready.append(server)  # the session will try again and explain
            continue
        handle = StartedServer(process, stderr)
        started.append(handle)
        ready.append(dataclasses.replace(server, started=handle))
    return ready, started
