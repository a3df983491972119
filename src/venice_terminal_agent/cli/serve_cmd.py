"""`venice-agent serve`: the chat bot over HTTP (uvicorn, `serve/app.py`), on SQLite or Redis.

Start-up, in order: refuse a non-loopback address without tokens; read the tokens; open the
store; with a model, resolve it and open the MCP servers; bind the socket; say in one line
where it listens, on which store, who plans, and whether paid tools are offered. Only then
are requests accepted, so `/healthz` answers 200 as soon as anyone can reach it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ConfigError, load_settings
from ..core.defaults import CALLS_PER_WINDOW
from ..core.receipt import USAGE_ERROR_STATUS
from ..core.toolbox import ToolSpec

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})


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
    no_mcp: bool = False


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_tokens(path: Path) -> dict[str, str]:
    """token → user, from lines `USER TOKEN` (blank lines and # comments skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as problem:
        reason = getattr(problem, "strerror", None) or problem
        raise ConfigError(f"cannot read the token file {path}: {reason}") from None
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
    from ..core.errors import VeniceAgentError

    if options.token_file is None and not is_loopback(options.host):
        return _fail(
            f"without --token-file the API serves loopback only; refusing to listen on {options.host} "
            "(give --token-file, or --host 127.0.0.1)"
        )
    if options.root is not None and not options.root.is_dir():
        return _fail(f"--root {options.root} is not a folder")
    try:
        users = None if options.token_file is None else read_tokens(options.token_file)
        settings = load_settings(auto_approve_tools=options.yes or None)
        return asyncio.run(_serve(options, users, settings))
    except VeniceAgentError as problem:  # a setting, the store, the model or an MCP server
        return _fail(problem.message, problem.exit_status)
    except OSError as problem:  # the address is taken or not ours
        return _fail(f"cannot listen on {options.host}:{options.port}: {problem.strerror or problem}")
    except KeyboardInterrupt:
        return 0


async def _serve(options: ServeOptions, users: dict[str, str] | None, settings: Any) -> int:
    from ..bot.bot import Bot
    from ..store import open_store
    from ..store.schema import resolve_db_path

    spec = options.store or settings.venice_agent_db
    if spec is None:
        path = resolve_db_path(None)
        path.parent.mkdir(parents=True, exist_ok=True)  # the default folder is ours to make
        spec = str(path)
    # A process killed mid-run leaves its reservation: held a little longer than a run may last.
    store = open_store(spec, hold=options.run_timeout + 30)
    key = settings.venice_api_key.get_secret_value().strip() if settings.venice_api_key else ""
    if not key or options.offline:
        offline = Bot(
            store=store, root=options.root, calls_per_window=options.calls, files=settings.file_tools
        )
        async with offline as bot:
            return await _listen(options, users, bot, spec, "commands (no model)", "none (file tools only)")

    from ..mcp.config import load_servers
    from .runtime import NO_MCP, open_runtime

    servers = load_servers(settings, options.mcp_config, no_mcp=options.no_mcp)
    async with open_runtime(settings, servers, root=options.root, person=False) as runtime:
        for failure in runtime.mcp.failures:
            print(f"venice-agent serve: {failure}", file=sys.stderr)
        tools = runtime.tools if options.yes else ReadOnlyTools(runtime.tools)
        left_out = [spec.name for spec in runtime.tools.specs() if not spec.read_only]
        paid = (
            f"offered ({len(left_out)}, --yes)"
            if options.yes
            else f"left out ({len(left_out)}; start with --yes to offer them)"
        )

        def agent_for(chat: str) -> Any:
            # Nobody can be asked over HTTP: without --yes only read-only tools are offered, and
            # once a chat read a file its MCP calls are refused (the local-data rule) unless --yes.
            # The model's prices and limits were read once, for the whole service.
            return runtime.agent(runtime.consented(tools=tools, auto_approve=options.yes))

        async with Bot(store=store, agent=agent_for, calls_per_window=options.calls) as bot:
            planner = f"the model {runtime.model}" + ("" if servers else f", {NO_MCP}")
            return await _listen(options, users, bot, spec, planner, paid)


class ReadOnlyTools:
    """A toolbox showing only the read-only tools of another (consent cannot be asked over HTTP)."""

    def __init__(self, tools: Any) -> None:
        self.tools = tools

    def specs(self) -> Sequence[ToolSpec]:
        return [spec for spec in self.tools.specs() if spec.read_only]

    def __contains__(self, name: object) -> bool:
        return any(spec.name == name for spec in self.specs())

    async def call(self, name: str, arguments: Any) -> Any:
        from ..core.toolbox import ToolError

        if name not in self:
            raise ToolError(f"no tool {name!r} here (tools that may cost money need serve --yes)")
        return await self.tools.call(name, arguments)


async def _listen(
    options: ServeOptions, users: dict[str, str] | None, bot: Any, spec: str, planner: str, paid: str
) -> int:
    import uvicorn

    from ..core.wording import plural
    from ..serve.app import build_app
    from ..store.protocol import shown

    app = build_app(bot, users=users, run_timeout=options.run_timeout)
    sock = listening_socket(options.host, options.port)
    host, port = sock.getsockname()[:2]
    where = f"[{host}]" if sock.family == socket.AF_INET6 else host
    who = (
        "loopback only, no tokens"
        if users is None
        else f"{plural(len(set(users.values())), 'user')} with tokens"
    )
    print(
        f"venice-agent serve: http://{where}:{port} ({who}) · store {shown(spec)} · "
        f"planned by {planner} · {plural(options.calls, 'call')} per chat an hour · paid tools {paid}",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=5
    )
    await uvicorn.Server(config).serve(sockets=[sock])
    return 0


def listening_socket(host: str, port: int) -> socket.socket:
    """The service's socket, bound and listening. It says it is TCP (IPPROTO_TCP, not 0):
    asyncio sets TCP_NODELAY only on connections of such a socket, and without it a reply
    written in two pieces (uvicorn writes the head, then the body) waits for the client's
    delayed ACK, about 40 ms a reply."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(2048)
    return sock


def _fail(message: str, status: int = USAGE_ERROR_STATUS) -> int:
    from .terminal import fail

    return fail(" ".join(message.split()), status, command="venice-agent serve")
