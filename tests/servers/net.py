"""Loopback helpers for tests that start an HTTP server in a process of its own."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager


def free_port() -> int:
    """A port nobody listens on at the moment, on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@asynccontextmanager
async def serving(
    command: Sequence[str], ready: bytes, *, env: dict[str, str] | None = None
) -> AsyncIterator[asyncio.subprocess.Process]:
    """Run `command` until it prints a line containing `ready` (stdout or stderr), then yield
    it; terminate it on the way out. A server that exits before it is ready fails the test.
    Its later output is drained, so a chatty server never blocks on a full pipe."""
    process = await asyncio.create_subprocess_exec(
        *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        async with asyncio.timeout(30):
            while ready not in (line := await process.stdout.readline()):
                assert line, f"{command[0]} exited before it was ready"
        drain = asyncio.create_task(process.stdout.read())
        yield process
    finally:
        process.terminate()
        await process.wait()
    await drain
