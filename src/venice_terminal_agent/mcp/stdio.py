"""The one stdio transport: every stdio MCP server, on every path, talks through this.

`spawn()` starts the server with plain `subprocess` (no SDK needed, so `venice-agent "…"` can
spawn servers before importing the SDKs); `async with` the returned `StdioServer` gives the
`(read, write)` streams an `mcp.Client` takes as a Transport.

It keeps the SDK's rules (`mcp.client.stdio`): the child gets the same few inherited variables
(HOME, LOGNAME, PATH, SHELL, TERM, USER) plus what its configuration names, never our keys; one
JSON-RPC message per line; on shutdown stdin is closed first, then SIGTERM, then SIGKILL to the
whole process group, with stdout drained meanwhile so a server blocked writing can leave.
It differs where the SDK hurts: lines are read by asyncio's buffered reader (linear in the
message's size, where the SDK's is quadratic), a message holding half of a surrogate pair (text
cut the way JavaScript cuts it) arrives with the half replaced instead of being lost, and a line
that is not MCP is one notice per server instead of a traceback.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from typing import Any

from ..core.scrub import well_formed_all

INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")  # as mcp.client.stdio on POSIX
EXIT_DRAIN = 0.2  # seconds the last lines of a server that exited have to be read
EXIT_POLL = 0.05  # seconds between looks at a server's process where there is no pidfd
EXIT_GRACE = 2.0  # seconds for a server to leave after its stdin closes, then SIGTERM, then SIGKILL
MAX_LINE = 256 * 1024 * 1024  # one JSON-RPC message per line; results can be large


def child_environment(extra: Mapping[str, str]) -> dict[str, str]:
    env = {
        name: value for name in INHERITED if (value := os.environ.get(name)) and not value.startswith("()")
    }
    return env | dict(extra)


def not_mcp_notice(name: str) -> str:
    return f"{name} wrote something that is not MCP to stdout; ignored"


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def spawn(
    name: str, command: str, args: tuple[str, ...] | list[str], env: Mapping[str, str], cwd: str | None
) -> StdioServer:
    """Start the server now; `OSError` (or `ValueError`) when it cannot be started at all."""
    stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
    try:
        process = subprocess.Popen(
            [command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=child_environment(env),
            cwd=cwd,
            start_new_session=True,  # its own process group: shutdown ends the server's children too
        )
    except BaseException:
        stderr.close()
        raise
    return StdioServer(name, process, stderr)


class StdioServer:
    """A running stdio MCP server; `async with` it (once) to get the session's streams."""

    def __init__(self, name: str, process: subprocess.Popen[bytes], stderr: Any) -> None:
        self.name = name
        self.process = process
        self.stderr = stderr  # an unlinked temporary file: the server's chatter stays off the screen
        self.notice: Callable[[str], None] = _to_stderr  # the session sets its own
        self._entered = False
        self._noted = False

    @property
    def exited(self) -> bool:
        return self.process.poll() is not None

    async def __aenter__(self) -> Any:
        self._entered = True
        self._context = self._streams()
        return await self._context.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._context.__aexit__(*exc)

    def discard(self) -> None:
        """Stop a server that was never handed to a session: start-up failed elsewhere, or its
        cached tool list answered for it and the model called no tool (`list_cache.py`)."""
        if not self._entered:  # else the session's streams closed the pipes and saw it leave
            # Never asked anything, so it has nothing to finish: SIGTERM lets it leave as it
            # would on any stop, then the whole group goes (the server's children too).
            _end(self.process, signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=EXIT_GRACE)
            _end(self.process, signal.SIGKILL)
            self.process.wait()
            for pipe in (self.process.stdin, self.process.stdout):
                if pipe is not None:
                    pipe.close()
        self.stderr.close()

    def _not_mcp(self) -> None:
        if not self._noted:
            self._noted = True
            self.notice(not_mcp_notice(self.name))

    @asynccontextmanager
    async def _streams(self) -> AsyncIterator[tuple[Any, Any]]:
        import anyio
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
        gone = (OSError, ConnectionError, ValueError, anyio.ClosedResourceError, anyio.BrokenResourceError)

        async def server_to_session() -> None:
            listening = True
            async with to_session:
                with suppress(*gone):
                    # After the session has gone, keep reading (and dropping) until the pipe
                    # closes: a server blocked writing its stdout could not see its stdin close.
                    while line := await reader.readline():
                        if not line.strip() or not listening:
                            continue
                        message = parse_message(line)
                        if message is None:
                            self._not_mcp()
                            continue
                        try:
                            await to_session.send(SessionMessage(message))
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            listening = False

        async def session_to_server() -> None:
            try:
                async with from_session:
                    async for item in from_session:
                        data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                        writer.write(data.encode() + b"\n")
                        await writer.drain()
            except (OSError, ConnectionError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                await to_session.aclose()  # the server went away: the session sees the end

        async def end_of_output_at_exit() -> None:
            # A server that exits may leave a child holding its stdout (`cmd & exit 3`): no end
            # of file would come, and a request written before it left would wait out its whole
            # timeout. Its exit ends the output instead, once what it wrote has been read.
            await _exit_of(process)
            await asyncio.sleep(EXIT_DRAIN)
            read_transport.close()  # the reader sees the end: the session fails, or ends, now

        async with anyio.create_task_group() as group:
            group.start_soon(server_to_session)
            group.start_soon(session_to_server)
            group.start_soon(end_of_output_at_exit)
            try:
                yield from_server, to_server
            finally:
                with anyio.CancelScope(shield=True):
                    to_server.close()
                    from_server.close()
                    write_transport.close()  # stdin closed (after what is buffered): the cue to leave
                    await _stop(process)
                    read_transport.close()  # stderr stays open: a failure's reason may quote it
                group.cancel_scope.cancel()


async def _exit_of(process: subprocess.Popen[bytes]) -> None:
    """Return when `process` has exited: told by a pidfd where Linux has one, else by polling."""
    if process.poll() is not None:
        return  # reaped already: its pid may be another process's now
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux 5.3+, or already reaped
        while process.poll() is None:  # noqa: ASYNC110 (nothing to wait on but the process)
            await asyncio.sleep(EXIT_POLL)
        return
    loop = asyncio.get_running_loop()
    exited = asyncio.Event()
    loop.add_reader(pidfd, exited.set)
    try:
        await exited.wait()
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


def parse_message(line: bytes) -> Any | None:
    """One JSON-RPC message from a line, or None when the line is not one.

    The fast path is pydantic's; it refuses a lone surrogate escape (`"\\ud83d"` alone), which
    Node servers send when they cut text inside an emoji. Such a line is read again with
    `json`, which accepts it, and each lone half becomes U+FFFD.
    """
    import mcp_types

    adapter = mcp_types.jsonrpc_message_adapter
    try:
        return adapter.validate_json(line, by_name=False)
    except ValueError:
        pass
    try:
        data = json.loads(line.decode("utf-8", errors="replace"))
        return adapter.validate_python(well_formed_all(data), by_name=False)
    except ValueError:
        return None


async def _stop(process: subprocess.Popen[bytes]) -> None:
    for then in (signal.SIGTERM, signal.SIGKILL, None):
        for _ in range(int(EXIT_GRACE / 0.01)):
            if process.poll() is not None:
                break
            await asyncio.sleep(0.01)
        else:
            if then is not None:
                _end(process, then)
            continue
        break
    # The server is gone; what it started may not be (a child it never waited for, a daemon
    # it forked): its process group goes the same way, so nothing outlives the agent.
    for then in (signal.SIGTERM, signal.SIGKILL):
        if not _group_left(process.pid):
            return
        _end(process, then)
        for _ in range(int(EXIT_GRACE / 0.01)):
            if not _group_left(process.pid):
                return
            await asyncio.sleep(0.01)


def _group_left(group: int) -> bool:
    """A process of the group `group` is still running (not merely waiting to be reaped)."""
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return any(_state(pid, group) not in ("Z", "X", None) for pid in _pids())


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # no /proc (not Linux): trust the signal's answer above
        return [-1]


def _state(pid: int, group: int) -> str | None:
    """The state letter of `pid` when it belongs to `group`, else None (`/proc/PID/stat`)."""
    if pid == -1:
        return "R"
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0].decode() if int(fields[2]) == group else None


def _end(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)  # the whole group: a server's own children go too
