"""One MCP server kept open for a session: started, listed, called, closed — never leaked.

Each server lives in its own task, which owns one exit stack (transport, HTTP client, the
server's stderr file, the mcp `Client`): anyio contexts must be left by the task that entered
them, and a failure anywhere unwinds everything opened so far. The task waits for `close()`.
Calls are made from the caller's task; the session routes the answers.

Errors are caught inside the client's context (outside it they arrive as an
`ExceptionGroup`) and kept as one readable line in `error`: a server that cannot start says
which server, what happened and what to check. A call that goes wrong is that call's
`ToolError`; the server is marked failed only when it is really gone.

What a server says besides results goes through `SessionHooks`: progress to the running
call's reporter (`events.tool_progress`), log messages to `notice` with `verbose` (else
dropped), "my tools changed" to `tools_changed` (the toolbox reloads before the next model
request), and its `instructions` are kept for the system prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..core import observe
from ..core.errors import ToolError
from ..core.events import tool_progress
from .apify import node_problem
from .listing import ToolListError, list_all_tools, startup_reason, startup_timeout_reason
from .oauth.auth import ServerAuth, SignIn, http_auth
from .redirects import redirecting_transport
from .results import (
    CONNECTION_CLOSED,
    describe_error,
    error_reason,
    leaf_error,
    redact,
    result_text,
    schema_error,
    stderr_tail,
)
from .server_config import MODERN_PROTOCOL, ServerConfig

__all__ = ["ServerSession", "ServerStatus", "SessionHooks", "ToolListError", "list_all_tools"]

State = Literal["starting", "ready", "failed", "closed"]
CLOSE_TIMEOUT = 15.0
PING_TIMEOUT = 3.0  # seconds a running server has to answer a ping (serve's /healthz)
MAX_INSTRUCTIONS = 2000  # characters of a server's instructions that reach the system prompt


# `"protocol"` in mcp.json as the SDK's `Client(mode=...)`.
_MODES = {"auto": "auto", "2025-11-25": "legacy", "2026-07-28": "2026-07-28"}


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class SessionHooks:
    """What the rest of the program adds to every session.

    `notice` takes the one-line notes a user should see (a server writing junk to stdout,
    its log messages under `verbose`, its tools changing). `client_options(config)` gives
    extra `mcp.Client` keyword arguments (sampling, elicitation, roots callbacks); None: none.
    """

    notice: Callable[[str], None] = _to_stderr
    verbose: bool = False
    client_options: Callable[[ServerConfig], Mapping[str, Any]] | None = None


@dataclass(frozen=True)
class ServerStatus:
    """What a user sees of one server: where it runs, whether it started, how many tools."""

    name: str
    transport: str
    where: str
    state: State
    tools: int
    error: str | None = None
    protocol: str | None = None  # the MCP revision the server and the agent agreed on


class ServerSession:
    def __init__(
        self,
        config: ServerConfig,
        *,
        startup_timeout: float,
        call_timeout: float,
        on_status: Callable[[ServerStatus], None] | None = None,
        hooks: SessionHooks | None = None,
        sign_in: SignIn | None = None,
    ) -> None:
        self.config = config
        self.sign_in = sign_in
        self.auth: ServerAuth | None = None
        self.startup_timeout = config.startup_timeout or startup_timeout
        self.call_timeout = call_timeout
        self.on_status = on_status
        self.hooks = hooks or SessionHooks()
        self.state: State = "starting"
        self.error: str | None = None
        self.tools: list[Any] = []
        self.skills: list[Any] = []  # its SEP-2640 skills as listed at start-up (mcp/skills.py)
        self.instructions: str | None = None
        self.protocol: str | None = None  # negotiated at start-up
        self.session_id: str | None = None  # an HTTP server's `Mcp-Session-Id`, for traces
        self.list_ttl_ms: int | None = None  # how long a 2026-07-28 server lets its list be cached
        self.tools_changed = False  # the server said its tool list changed; not yet reloaded
        self.client: Any = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stderr: Any = None
        self._process: Any = None  # the stdio server, to tell a dead server from a wrong answer
        self._http_status: int | None = None  # the last HTTP error status, for start-up reasons

    @property
    def name(self) -> str:
        return self.config.name

    def status(self) -> ServerStatus:
        return ServerStatus(
            self.name, self.config.transport, self.config.where, self.state, len(self.tools), self.error,
            self.protocol,
        )  # fmt: skip

    def secrets(self) -> list[str]:
        """What this server's texts must never show: the entry's secrets (headers, env,
        `${NAME}` values) and every token obtained or refreshed for it by OAuth."""
        return self.config.secret_values() + (self.auth.secrets() if self.auth else [])

    def masked(self, text: str) -> str:
        """`text` with `secrets()` masked: for every error and log line a server's text reaches."""
        return redact(text, self.secrets()) or text

    def _set(self, state: State, error: str | None = None) -> None:
        self.state, self.error = state, redact(error, self.secrets())
        if self.on_status is not None:
            self.on_status(self.status())

    async def start(self) -> None:
        """Start the server and list its tools; on failure `state` is "failed" and `error` says why."""
        self._set("starting")
        self._task = asyncio.create_task(self._run(), name=f"mcp server {self.name}")
        try:
            while True:
                try:
                    await asyncio.wait_for(asyncio.shield(self._ready.wait()), self.startup_timeout)
                    break
                except TimeoutError:
                    if self.auth is None or not self.auth.waiting:  # a person signing in is no hang
                        raise
        except TimeoutError:
            reason = self._startup_timeout_reason()  # while its stderr is still there to quote
            self._task.cancel()
            await asyncio.wait([self._task], timeout=CLOSE_TIMEOUT)
            self._set("failed", reason)

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None and not self._task.done():
            if not self._ready.is_set():  # still starting (the opener was cancelled): stop waiting for it
                self._task.cancel()
            # The transport bounds its own shutdown (stdin closed, then SIGTERM, then SIGKILL);
            # this bound is for anything else, so closing can never hang the agent.
            _, pending = await asyncio.wait([self._task], timeout=CLOSE_TIMEOUT)
            if pending:
                self._task.cancel()
                await asyncio.wait([self._task], timeout=CLOSE_TIMEOUT)
        if self.state != "failed":
            self._set("closed", self.error)

    async def _run(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    client = await self._connect(stack)
                    listed: dict[str, Any] = {}
                    self.tools = await list_all_tools(client, self.name, self.hooks.notice, listed)
                    await self._list_skills(client)
                except Exception as error:  # inside the client's context: a plain exception
                    self._set("failed", self._startup_reason(leaf_error(error)))
                    return
                self.client = client
                self.protocol = getattr(client, "protocol_version", None)
                if self.protocol == MODERN_PROTOCOL:  # older revisions say nothing of caching
                    self.list_ttl_ms = listed.get("ttl_ms")
                self.instructions = (client.instructions or "").strip()[:MAX_INSTRUCTIONS] or None
                self._set("ready")
                self._ready.set()
                await self._stop.wait()
        except Exception as error:  # left the client's context: an ExceptionGroup
            if self.state == "starting":
                self._set("failed", self._startup_reason(leaf_error(error)))
            elif self.state == "ready":
                self._set("failed", f"{self.name} stopped: {describe_error(leaf_error(error))}")
        finally:
            self.client = None
            self._ready.set()

    async def _connect(self, stack: contextlib.AsyncExitStack) -> Any:
        config = self.config
        if config.unavailable:  # before the SDK's import: a server that cannot start costs nothing
            raise ToolError(config.unavailable)
        from mcp import Client
        from mcp.types import Implementation

        from .. import __version__

        info = Implementation(name="venice-agent", version=__version__)
        if config.transport == "memory":
            target: Any = config.in_memory
            mode = _MODES[config.wanted_protocol]  # "auto" unless the entry pins one
        elif config.transport == "http":
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            async def remember(response: Any) -> None:
                if response.status_code >= 400:
                    self._http_status = response.status_code
                self.session_id = response.headers.get("mcp-session-id") or self.session_id

            self.auth = http_auth(config, self.sign_in)
            if self.auth is not None:
                stack.callback(self.auth.close)
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=dict(config.headers),
                    timeout=httpx2.Timeout(30, read=300),
                    auth=self.auth.httpx() if self.auth else None,
                    event_hooks={"response": [remember]},
                    transport=redirecting_transport(config),
                )
            )
            target = streamable_http_client(config.url or "", http_client=http)
            mode = _MODES[config.wanted_protocol]
        else:
            target = await self._stdio(stack)
            # By default "legacy": no `server/discover` probe, which most stdio servers answer
            # with an error (and a slow starter with a 10 s wait); the entry may choose.
            mode = _MODES[config.wanted_protocol]
        from mcp.client import advertise

        from .skills import EXTENSION

        options: dict[str, Any] = {
            "extensions": [advertise(EXTENSION)],  # SEP-2640 skills (mcp/skills.py)
            "logging_callback": self._log,
            "message_handler": self._notified,
            **(self.hooks.client_options(config) if self.hooks.client_options else {}),
        }
        client = Client(
            target, mode=mode, read_timeout_seconds=self.startup_timeout, client_info=info, **options
        )
        return await stack.enter_async_context(client)

    async def _list_skills(self, client: Any) -> None:
        """A server that declares the skills extension: its listing (no file is read). A listing
        that fails is one notice; the server's tools still work."""
        from .skills import advertises, list_skills

        if not advertises(client):
            return
        try:
            self.skills = await list_skills(client, self.name)
        except Exception as error:
            self.hooks.notice(self.masked(f"{self.name}: cannot list skills: {describe_error(error)}"))

    async def _stdio(self, stack: contextlib.AsyncExitStack) -> Any:
        """The running server: spawned early by the caller (fronts/head_start.py), else now."""
        from .stdio import spawn

        config = self.config
        server = config.started
        if server is None:
            if config.needs_node:
                env = {"PATH": os.environ.get("PATH", ""), **config.env}
                problem = await node_problem(config.command or "", env, config.needs_node)
                if problem:
                    raise ToolError(problem)
            server = spawn(config.name, config.command or "", config.args, config.env, config.cwd)
            stack.callback(server.stderr.close)
        # The child's stderr is an unlinked temporary file: its chatter stays off the user's
        # terminal, and its last lines explain a failure.
        server.notice = self.hooks.notice
        self._stderr, self._process = server.stderr, server
        return server

    async def _log(self, params: Any) -> None:
        if self.hooks.verbose:
            data = params.data if isinstance(params.data, str) else repr(params.data)
            line = " ".join(self.masked(data).split())[:500]  # masked whole, before it is cut
            self.hooks.notice(f"{self.name} [{params.level}] {line}")

    async def _notified(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.tools_changed = True

    async def reload(self) -> None:
        """List the tools again; on failure the previous full list stays and `ToolListError` says why."""
        if self.client is None:
            raise ToolListError(f"{self.name} is not running" + (f": {self.error}" if self.error else ""))
        self.tools_changed = False
        try:
            self.tools = await list_all_tools(self.client, self.name, self.hooks.notice)
        except ToolListError:
            raise
        except Exception as error:
            raise ToolListError(f"{self.name}: cannot list tools: {describe_error(error)}") from None

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> str:
        """Call `tool`; its text, or a `ToolError` whether the server failed or refused.

        Every call carries a progress token; the server's progress goes to the reporter the
        loop set for this call. A tool that can only run as a task runs as one. An error (the
        server's `is_error` result as much as its JSON-RPC error) is masked like every error:
        it goes to the terminal and to the model. A result is the tool's text, untouched.
        """
        try:
            return await self._call(tool, arguments)
        except ToolError as error:
            raise ToolError(self.masked(error.message)) from None

    async def _call(self, tool: str, arguments: Mapping[str, Any]) -> str:
        from mcp import InputRequiredRoundsExceededError, MCPError
        from pydantic import ValidationError

        from .tasks import call_as_task, needs_task

        client = self.client
        if client is None:
            raise ToolError(f"{self.name} is not running" + (f": {self.error}" if self.error else ""))
        report = tool_progress.get()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if report is not None:
                report(progress, total, message)

        observe.note(self.trace_facts())  # on the call's span, when tracing is on
        try:
            if needs_task(self.tools, tool):
                result = await call_as_task(client, tool, dict(arguments), self.call_timeout, report)
            else:
                result = await client.call_tool(
                    tool,
                    dict(arguments),
                    read_timeout_seconds=self.call_timeout,
                    progress_callback=on_progress,
                )
        except ToolError:
            raise
        except InputRequiredRoundsExceededError as error:  # MRTR (2026-07-28): the SDK's cap
            raise ToolError(
                f"{self.name} asked for more input {error.max_rounds} times during one call to {tool} "
                "without finishing it, so the call was stopped"
            ) from None
        except MCPError as error:
            reason = error_reason(error, server=self.name, tool=tool, timeout=self.call_timeout)
            if error.code == CONNECTION_CLOSED:
                reason = self._with_stderr(reason)
                self._fail(reason)
            raise ToolError(reason) from None
        except ValidationError as error:
            raise ToolError(
                f"{self.name} answered {tool} with a result this agent cannot read: {error}"
            ) from None
        except Exception as error:
            if isinstance(error, RuntimeError) and schema_error(error):
                raise ToolError(
                    f"{self.name}'s result for {tool} did not match the tool's declared output schema "
                    f"({describe_error(error)})"
                ) from None
            reason = f"{self.name} failed during the call to {tool}: {describe_error(error)}"
            if self._gone():  # the transport broke under the call
                reason = self._with_stderr(reason)
                self._fail(reason)
            raise ToolError(reason) from None
        return result_text(result)

    def trace_facts(self) -> dict[str, Any]:
        """The MCP attributes of a call's span (the GenAI conventions' `mcp.*`)."""
        facts = {
            "mcp.method.name": "tools/call",
            "mcp.protocol.version": self.protocol,
            "mcp.session.id": self.session_id,
            "network.transport": "pipe" if self.config.transport == "stdio" else "tcp",
            "venice_agent.mcp.server": self.name,
        }
        return {key: value for key, value in facts.items() if value is not None}

    async def ping(self) -> str | None:
        """None when the server is running and answers an MCP ping within PING_TIMEOUT, else
        why not, in one line."""
        if self.state != "ready" or self.client is None:
            return self.error or f"it is {self.state}"
        if self._gone():
            return "its process has exited" if self._process is not None else "its connection is closed"
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        session, version = self.client.session, self.client.protocol_version
        try:
            async with asyncio.timeout(PING_TIMEOUT):
                # `ping` is the handshake era's; the 2026 protocol removed it, and its servers
                # answer `server/discover` instead (the SDK's `Client.send_ping` warns either way).
                if version in HANDSHAKE_PROTOCOL_VERSIONS:
                    await session.send_ping()
                else:
                    await session.send_discover(version)
        except TimeoutError:
            return f"it did not answer a ping within {PING_TIMEOUT:g} s"
        except Exception as error:
            return describe_error(leaf_error(error))
        return None

    def _gone(self) -> bool:
        if self._process is not None:
            return self._process.exited
        return self._task is None or self._task.done()

    def _fail(self, reason: str) -> None:
        """The server is gone: later calls are refused at once; `close()` still cleans up."""
        self.client = None
        self._set("failed", reason)

    def _startup_reason(self, error: BaseException) -> str:
        if self.auth is not None and self.auth.problem:
            return self.auth.problem
        reason, quote = startup_reason(self.config, error, self._http_status)
        return self._with_stderr(reason) if quote else reason

    def _startup_timeout_reason(self) -> str:
        return self._with_stderr(startup_timeout_reason(self.config, self.startup_timeout))

    def _with_stderr(self, reason: str) -> str:
        tail = stderr_tail(self._stderr)
        return f"{reason}; its last output: {tail}" if tail else reason
