"""`venice-agent serve`: the chat bot over HTTP (uvicorn, `serve/app.py`), on SQLite or Redis.

Start-up, in order: refuse a non-loopback address without tokens; raise the soft limit of open
descriptors to the hard one; read the tokens; open the store; with a model, resolve it (its
server must answer, pinned model or not) and open the MCP servers; bind the socket; say in one
line where it listens, on which store, who plans, and whether paid tools are offered. Only then
are requests accepted, so `/healthz` answers 200 as soon as anyone can reach it (and 503 while
the store, an MCP server or the model server is down).

Connections (`guarded_http`): one that has not sent a whole request head within
`HEAD_TIMEOUT` is closed, and at most `connection_cap()` are open; past that a new one closes
the oldest still waiting for its head, so stalled connections cannot keep anyone else out.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import resource
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ConfigError, load_settings
from ..core.defaults import CALLS_PER_WINDOW
from ..core.receipt import USAGE_ERROR_STATUS
from ..core.toolbox import ToolSpec

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})
GRACE = 5  # seconds running replies are given to finish on SIGTERM or Ctrl+C
SETTLING = 5  # then, for the cancelled ones to be recorded and answered
OWN_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})  # the Host names of a loopback server
HEAD_TIMEOUT = 5.0  # seconds a connection has to send a whole request head
LISTEN_QUEUE = 2048  # connections the kernel holds until they are accepted
MAX_CONNECTIONS = 1000  # open at once; fewer when the descriptor limit is low (connection_cap)


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
    from ..serve.app import split_host

    for name in options.allowed_hosts:
        if split_host(name) is None:
            return _fail(
                f"--allowed-host {name!r} is not a host name (NAME or NAME:PORT, e.g. bot.example.com)"
            )
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
    except VeniceAgentError as problem:  # a setting, the store, the model or an MCP server
        return _fail(problem.message, problem.exit_status)
    except OSError as problem:  # the address is taken or not ours
        return _fail(f"cannot listen on {options.host}:{options.port}: {problem.strerror or problem}")
    except KeyboardInterrupt:
        return 0
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


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

        def agent_for(chat: str) -> Any:
            # Nobody can be asked over HTTP: without --yes only read-only tools are offered, and
            # once a chat read a file its MCP calls are refused (the local-data rule) unless --yes.
            # The model's prices and limits were read once, for the whole service.
            return runtime.agent(runtime.consented(tools=tools, auto_approve=options.yes))

        async with Bot(store=store, agent=agent_for, calls_per_window=options.calls) as bot:
            planner = f"the model {runtime.model}" + ("" if servers else f", {NO_MCP}")
            return await _listen(options, users, bot, spec, planner, paid, health_of(runtime))


def health_of(runtime: Any) -> Callable[[], Awaitable[list[str]]]:
    """What `/healthz` asks beside the store: the MCP servers that started (one that failed at
    start was said then, and the bot runs without it) and the model server."""
    from ..core.errors import ModelError
    from ..serve.app import HEALTH_TIMEOUT

    started = [status.name for status in runtime.mcp.servers if status.state == "ready"]

    async def model_down() -> list[str]:
        try:
            async with asyncio.timeout(HEALTH_TIMEOUT):
                await runtime.client.check()
        except TimeoutError:
            return [f"the model server is down: it did not answer within {HEALTH_TIMEOUT:g} s"]
        except ModelError as problem:
            return [f"the model server is down: {problem.message}"]
        return []

    async def health() -> list[str]:
        servers, model = await asyncio.gather(runtime.mcp.down(started), model_down())
        return [*(f"the MCP server {name} is down: {why}" for name, why in servers.items()), *model]

    return health


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
    options: ServeOptions,
    users: dict[str, str] | None,
    bot: Any,
    spec: str,
    planner: str,
    paid: str,
    health: Callable[[], Awaitable[list[str]]] | None = None,
) -> int:
    import uvicorn

    from ..core.wording import plural
    from ..serve.app import Replies, build_app
    from ..store.protocol import shown

    replies = Replies()
    sock = listening_socket(options.host, options.port)
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
    print(
        f"venice-agent serve: http://{where}:{port} ({who}) · store {shown(spec)} · "
        f"planned by {planner} · {plural(options.calls, 'call')} per chat an hour · paid tools {paid}",
        file=sys.stderr,
        flush=True,
    )
    cap = connection_cap()
    config = uvicorn.Config(
        app,
        http=guarded_http(HEAD_TIMEOUT, cap),
        # asyncio accepts up to `backlog` connections at a time before any of them is counted:
        # a few such bursts must fit in the descriptors left above the cap, or accept() fails
        # (EMFILE) and asyncio stops accepting for a second while the kernel's queue overflows.
        backlog=max(16, cap // 8),
        log_level="warning",
        access_log=False,
        lifespan="off",
        # uvicorn's own deadline is past the grace and the settling: it never has to cancel.
        timeout_graceful_shutdown=GRACE + SETTLING,
    )
    await serve_server(config, replies).serve(sockets=[sock])
    return 0


def serve_server(config: Any, replies: Any) -> Any:
    import uvicorn  # here, not at the top: the other commands start without it

    class Server(uvicorn.Server):
        """uvicorn's server, stopped as `serve --help` says. On SIGTERM or Ctrl+C it takes no
        new request, gives the running replies GRACE seconds, then cancels the rest (each ends
        `cancelled`, settled, and its client gets that reply), and the command exits 0."""

        def __init__(self, config: Any, replies: Any) -> None:
            super().__init__(config)
            self.replies = replies

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            for listening in sockets or ():
                listening.listen(LISTEN_QUEUE)  # the kernel's queue stays long (asyncio set `backlog`)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn's own raises the signal again once stopped: SIGTERM then killed it (143).
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            before = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            later = asyncio.get_running_loop().call_later(GRACE, self.replies.cancel)
            try:
                await super().shutdown(sockets)
            finally:
                later.cancel()

    return Server(config, replies)


def hosts_for(bound: str, port: int, allowed: Sequence[str]) -> Any:
    """The Host names a server bound to `bound`:`port` answers to (see `serve.app.Hosts`): the
    address it is bound to; on loopback or on every address, 127.0.0.1, localhost and [::1]
    too; on every address, any IP address (a client on the network names the machine by one).
    DNS names only when given (--allowed-host): a name is what a rebinding page sends."""
    from ..serve.app import Hosts, split_host

    address = ipaddress.ip_address(bound)
    everywhere = address.is_unspecified
    names = {f"[{address}]" if address.version == 6 else str(address)}
    if address.is_loopback or everywhere:
        names |= OWN_NAMES
    given = tuple(parsed for name in allowed if (parsed := split_host(name)) is not None)
    return Hosts(port, frozenset(names), given, any_address=everywhere)


def raise_descriptor_limit() -> None:
    """Raise the soft limit of open descriptors to the hard one: many systems start programs at
    1,024 with far more allowed above it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        with contextlib.suppress(ValueError, OSError):  # not allowed here: the soft limit stays
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def connection_cap() -> int:
    """At most MAX_CONNECTIONS, and half the descriptor limit at most: the other half stays for
    the store, the MCP servers' pipes and the model's connections."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = MAX_CONNECTIONS if soft == resource.RLIM_INFINITY else min(MAX_CONNECTIONS, soft // 2)
    return max(limit, 1)


def guarded_http(head_timeout: float, max_connections: int) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools) with what it lacks against stalled connections:
    uvicorn arms its keep-alive timeout only after a reply, and cancels it at the first byte of
    the next request, so a connection that sends nothing, or half a head, was kept forever.

    Here a connection that is waiting for a request head (since it opened, or since its last
    reply) is closed `head_timeout` seconds later unless the head is complete; and when more
    than `max_connections` are open, a new connection closes the oldest one still waiting for
    its head (a stalled one, or an idle keep-alive), or is itself answered 503 when every
    connection is busy with a request."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    busy_body = b'{"error": "the server has too many open connections; try again in a moment"}'
    busy = (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nretry-after: 1\r\nconnection: close\r\n\r\n%s" % (len(busy_body), busy_body)
    )

    class GuardedHttp(HttpToolsProtocol):
        waiting_since: float | None = None  # loop time since it waits for a request head
        head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.await_head()
            if len(self.connections) > max_connections:
                self.make_room()

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop_waiting()
            super().connection_lost(exc)

        def on_headers_complete(self) -> None:
            self.stop_waiting()
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.timeout_keep_alive_task is not None:  # kept alive, and no request queued
                self.await_head()

        def await_head(self) -> None:
            self.stop_waiting()
            self.waiting_since = self.loop.time()
            self.head_timer = self.loop.call_later(head_timeout, self.transport.close)

        def stop_waiting(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
            self.head_timer = self.waiting_since = None

        def make_room(self) -> None:
            live = [c for c in self.connections if not c.transport.is_closing()]
            if len(live) <= max_connections:
                return  # the ones over are already closing
            waiting = {
                c: c.waiting_since
                for c in live
                if isinstance(c, GuardedHttp) and c is not self and c.waiting_since is not None
            }
            if waiting:
                oldest = min(waiting, key=waiting.__getitem__)
                oldest.stop_waiting()
                oldest.transport.close()
            else:
                self.stop_waiting()
                self.transport.write(busy)
                self.transport.close()

    return GuardedHttp


def listening_socket(host: str, port: int) -> socket.socket:
    """The service's socket, bound and listening. It says it is TCP (IPPROTO_TCP, not 0):
    asyncio sets TCP_NODELAY only on connections of such a socket, and without it a reply
    written in two pieces (uvicorn writes the head, then the body) waits for the client's
    delayed ACK, about 40 ms a reply."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(LISTEN_QUEUE)
    return sock


def _fail(message: str, status: int = USAGE_ERROR_STATUS) -> int:
    from .terminal import fail

    return fail(" ".join(message.split()), status, command="venice-agent serve")
