"""`venice-agent serve` as a process on a loopback port, for the service tests."""

from __future__ import annotations

import asyncio
import os
import re
import resource
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from cli_support import COMMAND, clean_env
from servers.net import free_port
from venice_terminal_agent.store import open_store
from venice_terminal_agent.store.protocol import ChatStore

READY = b"venice-agent serve: http://"


@dataclass
class Served:
    url: str
    line: str  # what it said when it started
    process: asyncio.subprocess.Process
    rest: asyncio.Task[bytes]  # what it says after that line, to its end


def offline_env(folder: Path) -> dict[str, str]:
    env = clean_env(folder, "http://127.0.0.1:9")  # nothing listens there: no model is used
    del env["VENICE_API_KEY"]
    return env


@asynccontextmanager
async def served(
    folder: Path,
    *args: str,
    env: dict[str, str] | None = None,
    nofile: tuple[int, int] | None = None,
    sigint_ignored: bool = False,
) -> AsyncIterator[Served]:
    """A serve process with `args`, once it listens; stopped (SIGTERM) on the way out. It takes
    a port the kernel gives it (`--port 0`) and says which: a port picked here and bound later
    can be taken meanwhile (by another test worker's connection, say). `nofile`: its (soft,
    hard) limit of open descriptors, as a shell's `ulimit -n` would set it. `sigint_ignored`:
    started as a shell starts a background job (`serve &` in a script), SIGINT ignored."""

    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
        if sigint_ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    process = await asyncio.create_subprocess_exec(
        COMMAND, "serve", "--port", "0", *args,
        env=env or offline_env(folder),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        preexec_fn=limit,
    )  # fmt: skip
    assert process.stdout is not None
    said = b""
    try:
        async with asyncio.timeout(60):
            while READY not in (line := await process.stdout.readline()):
                said += line
                assert line, f"serve exited before it listened: {said.decode()}"
        drain = asyncio.create_task(process.stdout.read())  # a full pipe must never block it
        said_url = re.search(r"http://127\.0\.0\.1:\d+", line.decode())
        assert said_url, line
        yield Served(said_url.group(), line.decode().strip(), process, drain)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        await process.wait()
    await drain


def require(program: str) -> str:
    """The path of a service's program (redis-server, chromium); in CI its absence fails."""
    import os
    import shutil

    import pytest

    found = shutil.which(program)
    if found is None:
        message = f"{program} is not installed (apt-get install -y {program.removesuffix('-server')}-server)"
        if program == "chromium":
            message = "chromium is not installed (apt-get install -y chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


@dataclass
class RedisServer:
    url: str
    port: int
    process: asyncio.subprocess.Process


@asynccontextmanager
async def redis_server(folder: Path, port: int | None = None) -> AsyncIterator[RedisServer]:
    """A real redis-server on a loopback port, its data in `folder` (append-only file, so a
    stop and a start on the same folder and port keep the data); stopped on the way out."""
    program = require("redis-server")
    port = port or free_port()
    os.makedirs(folder, exist_ok=True)
    process = await asyncio.create_subprocess_exec(
        program, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
        "--save", "", "--appendonly", "yes", "--protected-mode", "yes",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    said = b""
    try:
        async with asyncio.timeout(30):
            while b"Ready to accept connections" not in (line := await process.stdout.readline()):
                said += line
                assert line, f"redis-server exited: {said.decode()}"
        drain = asyncio.create_task(process.stdout.read())
        yield RedisServer(f"redis://127.0.0.1:{port}/0", port, process)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        await process.wait()
    await drain


@asynccontextmanager
async def chat_store(kind: str, folder: Path) -> AsyncIterator[ChatStore]:
    """The bot's store of `kind`: an SQLite file in `folder` ("sqlite"), or a real redis-server
    on loopback with its data there ("redis"), stopped on the way out."""
    if kind == "sqlite":
        yield open_store(folder / "bot.db")
        return
    async with redis_server(folder / "redis") as redis:
        yield open_store(redis.url)
