"""`venice-agent serve`: the chat bot over HTTP (uvicorn, `fronts/serve/api.py`), on SQLite or Redis.

Start-up, in order: refuse a non-loopback address without tokens; raise the soft limit of open
descriptors to the hard one; read the tokens; open the store; with a model, resolve it (its
server must answer, pinned model or not) and open the MCP servers; bind the socket; say in one
line where it listens, on which store, who plans, and whether paid tools are offered. Only then
are requests accepted, so `/healthz` answers 200 as soon as anyone can reach it (and 503 while
the store, an MCP server or the model server is down).

The server itself (connections guarded, stopping as `--help` says) is `fronts/serve/server.py`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...config import load_settings
from ...core.defaults import CALLS_PER_WINDOW
from ...core.errors import ConfigError
from ...core.receipt import USAGE_ERROR_STATUS
from ...core.toolbox import ToolSpec
from ..listening import hosts_for, is_loopback, listen


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8080
    store: str | None = None  # an SQLite file or redis://…; None: the default file
    token_file: Path | None = None
    calls: int = CALLS_PER_WINDOW
    root: Path | None = None
    offline: bool = False
    mcp_config: Path | None = None
    yes: bool = False
    run_timeout: float = 300.0
    allowed_hosts: tuple[str, ...] = ()  # more Host names to answer to (NAME or NAME:PORT)
    no_mcp: bool = False


def read_tokens(path: Path) -> dict[str, str]:
    """token → user, from lines `USER TOKEN` (blank lines and # comments skipped)."""
    from ...core.files import read_text

    lines = read_text(path, f"the token file {path}").splitlines()
    users: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != 2:
            raise ConfigError(f"{path}:{number}: expected 'USER TOKEN' (two words)")
        user, token = words
        if token in users:
            raise ConfigError(f"{path}:{number}: this token is already given to {users[token]!r}")
        users[token] = user
    if not users:
        raise ConfigError(f"the token file {path} names no user ('USER TOKEN' lines)")
    return users


def serve_main(options: ServeOptions) -> int:
    """The whole command; returns the process exit status."""
    from ...core.errors import VeniceAgentError

    if options.token_file is None and not is_loopback(options.host):
        return _fail(
            f"without --token-file the API serves loopback only; refusing to listen on {options.host} "
            "(give --token-file, or --host 127.0.0.1)"
        )
    if options.root is not None and not os.path.isdir(options.root):
        return _fail(f"--root {options.root} is not a folder")
    from ..http_edge import split_host

    for name in options.allowed_hosts:
        if split_host(name) is None:
            return _fail(
                f"--allowed-host {name!r} is not a host name (NAME or NAME:PORT, e.g. bot.example.com)"
            )
    from .server import raise_descriptor_limit

    raise_descriptor_limit()
    before = None
    if threading.current_thread() is threading.main_thread():
        # SIGTERM before the server listens (or in the moment before it takes the signal
        # over) stops it as Ctrl+C does, closing what was opened: status 0, not 143.
        before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        users = None if options.token_file is None else read_tokens(options.token_file)
        settings = load_settings(auto_approve_tools=options.yes or None)
        return asyncio.run(_serve(options, users, settings))
    except VeniceAgentError as problem:  # a setting, the address, the store, the model or an MCP server
        return _fail(problem.message, problem.exit_status)
    except KeyboardInterrupt:
        return 0
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


async def _serve(options: ServeOptions, users: dict[str, str] | None, settings: Any) -> int:
    from ...bot.bot import Bot
    from ...store import open_store
    from ...store.schema import resolve_db_path

    spec = options.store or settings.venice_agent_db
    if spec is None:
        path = resolve_db_path(None)
        path.parent.mkdir(parents=True, exist_ok=True)  # the default folder is ours to make
        spec = str(path)
    # A process killed mid-run leaves its reservation: held a little longer than a run may last.
    store = open_store(spec, hold=options.run_timeout + 30)
    key = settings.venice_key_value() or ""
    if not key or options.offline:
        offline = Bot(
            store=store, root=options.root, calls_per_window=options.calls, files=settings.file_tools
        )
        from ...telemetry import traced

        with traced():  # traced when OTEL_* ask, as the runtime does with a model
            async with offline as bot:
                from ..gc_pause import started

                started()  # a service: the collector back on, as the runtime turns it on with a model
                return await _listen(
                    options, users, bot, spec, "commands (no model)", "none (file tools only)"
                )

    from ...mcp.servers_file import load_servers
    from ..runtime import NO_MCP, open_runtime

    servers = load_servers(settings, options.mcp_config, no_mcp=options.no_mcp)
    async with open_runtime(settings, servers, root=options.root, person=False, check_model=True) as runtime:
        for failure in runtime.mcp.failures:
            print(f"venice-agent serve: {failure}", file=sys.stderr)
        tools = runtime.tools if options.yes else ReadOnlyTools(runtime.tools)
        left_out = [spec.name for spec in runtime.tools.specs() if not spec.read_only]
        paid = (
            f"offered ({len(left_out)}, --yes)"
            if options.yes
            else f"left out ({len(left_out)}; start with --yes to offer them)"
        )

        policy = None if options.yes else SERVE_POLICY

        def agent_for(chat: str) -> Any:
            # Nobody can be asked over HTTP: without --yes only read-only tools are offered, and
            # once a chat read a file its MCP calls are refused (the local-data rule) unless --yes.
            # The model's prices and limits were read once, for the whole service.
            return runtime.agent(runtime.consented(tools=tools, auto_approve=options.yes, policy=policy))

        secrets = settings.secrets(servers)  # masked in replies and in the store
        async with Bot(store=store, agent=agent_for, calls_per_window=options.calls, secrets=secrets) as bot:
            planner = f"the model {runtime.model}" + ("" if servers else f", {NO_MCP}")
            return await _listen(options, users, bot, spec, planner, paid, health_of(runtime))


def health_of(runtime: Any) -> Callable[[], Awaitable[list[str]]]:
    """What `/healthz` asks beside the store: the MCP servers that started (one that failed at
    start was said then, and the bot runs without it) and the model server."""
    from ...core.errors import ModelError
    from .api import HEALTH_TIMEOUT

    started = [status.name for status in runtime.mcp.servers if status.state == "ready"]

    async def model_down() -> list[str]:
        try:
            async with asyncio.timeout(HEALTH_TIMEOUT):
                await runtime.client.discovery.check()
        except TimeoutError:
            return [f"the model server is down: it did not answer within {HEALTH_TIMEOUT:g} s"]
        except ModelError as problem:
            return [f"the model server is down: {problem.message}"]
        return []

    async def health() -> list[str]:
        servers, model = await asyncio.gather(runtime.mcp.down(started), model_down())
        return [*(f"the MCP server {name} is down: {why}" for name, why in servers.items()), *model]

    return health


# What the model is told of a call that needs a yes in a service started without --yes.
SERVE_POLICY = "this service asks nobody: it runs such calls only when started with --yes"


class ReadOnlyTools:
    """A toolbox showing only the read-only tools of another (consent cannot be asked over HTTP)."""

    def __init__(self, tools: Any) -> None:
        self.tools = tools

    def specs(self) -> Sequence[ToolSpec]:
        return [spec for spec in self.tools.specs() if spec.read_only]

    def __contains__(self, name: object) -> bool:
        return any(spec.name == name for spec in self.specs())

    async def call(self, name: str, arguments: Any) -> Any:
        from ...core.errors import ToolError

        if name not in self:
            raise ToolError(f"no tool {name!r} here (tools that may cost money need serve --yes)")
        return await self.tools.call(name, arguments)


async def _listen(
    options: ServeOptions,
    users: dict[str, str] | None,
    bot: Any,
    spec: str,
    planner: str,
    paid: str,
    health: Callable[[], Awaitable[list[str]]] | None = None,
) -> int:
    from ...core.wording import plural
    from ...store.protocol import shown
    from .api import Replies, build_app
    from .server import run_server

    replies = Replies()
    sock = listen(options.host, options.port)
    host, port = sock.getsockname()[:2]
    hosts = hosts_for(host, port, options.allowed_hosts)
    app = build_app(
        bot, hosts=hosts, users=users, run_timeout=options.run_timeout, health=health, replies=replies
    )
    where = f"[{host}]" if sock.family == socket.AF_INET6 else host
    who = (
        "loopback only, no tokens"
        if users is None
        else f"{plural(len(set(users.values())), 'user')} with tokens"
    )
    line = (
        f"venice-agent serve: http://{where}:{port} ({who}) · store {shown(spec)} · "
        f"planned by {planner} · {plural(options.calls, 'call')} per chat an hour · paid tools {paid}"
    )
    # Said once it serves with its own signal handlers: before, a stop sent on this line
    # could come while uvicorn was still importing, and be lost.
    await run_server(app, sock, replies, ready=lambda: print(line, file=sys.stderr, flush=True))
    return 0


def _fail(message: str, status: int = USAGE_ERROR_STATUS) -> int:
    from ..failures import fail

    return fail(" ".join(message.split()), status, command="venice-agent serve")
