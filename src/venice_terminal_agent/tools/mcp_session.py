"""One MCP server kept open for a session: started, listed, called, closed — never leaked.

Each server lives in its own task, which owns one exit stack (transport, HTTP client, the
server's stderr file, the mcp `Client`): anyio contexts must be left by the task that entered
them, and a failure anywhere unwinds everything opened so far. The task waits for `close()`.
Calls are made from the caller's task; the session routes the answers.

Errors are caught inside the client's context (outside it they arrive as an
`ExceptionGroup`) and kept as one readable line in `error`: a server that cannot start says
which server, what happened and what to check.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ToolListError
from .apify import node_problem
from .base import ToolError
from .mcp_auth import ServerAuth, SignIn, http_auth
from .mcp_config import ServerConfig
from .mcp_results import CONNECTION_CLOSED, describe_error, error_reason, leaf_error, redact, result_text

State = Literal["starting", "ready", "failed", "closed"]
MAX_PAGES = 1000  # a server paging forever with fresh cursors is a server gone wrong
CLOSE_TIMEOUT = 15.0


@dataclass(frozen=True)
class ServerStatus:
    """What a user sees of one server: where it runs, whether it started, how many tools."""

    name: str
    transport: str
    where: str
    state: State
    tools: int
    error: str | None = None


class ServerSession:
    def __init__(
        self,
        config: ServerConfig,
        *,
        startup_timeout: float,
        call_timeout: float,
        on_status: Callable[[ServerStatus], None] | None = None,
        sign_in: SignIn | None = None,
    ) -> None:
        self.config = config
        self.sign_in = sign_in
        self.auth: ServerAuth | None = None
        self.startup_timeout = config.startup_timeout or startup_timeout
        self.call_timeout = call_timeout
        self.on_status = on_status
        self.state: State = "starting"
        self.error: str | None = None
        self.tools: list[Any] = []
        self.client: Any = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stderr: Any = None

    @property
    def name(self) -> str:
        return self.config.name

    def status(self) -> ServerStatus:
        return ServerStatus(
            self.name, self.config.transport, self.config.where, self.state, len(self.tools), self.error
        )

    def _set(self, state: State, error: str | None = None) -> None:
        self.state, self.error = state, redact(error, self.config.secret_values())
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
            # The SDK bounds its own shutdown (stdin closed, then SIGTERM, then SIGKILL); this
            # bound is for anything else, so closing can never hang the agent.
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
                    self.tools = await list_all_tools(client, self.name)
                except Exception as error:  # inside the client's context: a plain exception
                    self._set("failed", self._startup_reason(leaf_error(error)))
                    return
                self.client = client
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
        from mcp import Client
        from mcp.types import Implementation

        from .. import __version__

        config = self.config
        if config.unavailable:
            raise ToolError(config.unavailable)
        info = Implementation(name="venice-agent", version=__version__)
        if config.transport == "memory":
            target: Any = config.in_memory
            mode = "auto"
        elif config.transport == "http":
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            self.auth = http_auth(config, self.sign_in)
            if self.auth is not None:
                stack.callback(self.auth.close)
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=dict(config.headers),
                    timeout=httpx2.Timeout(30, read=300),
                    auth=self.auth.httpx() if self.auth else None,
                )
            )
            target, mode = streamable_http_client(config.url or "", http_client=http), "auto"
        elif config.started is not None:  # spawned early by the caller (cli/head_start.py)
            self._stderr = config.started.stderr
            target, mode = config.started, "legacy"
        else:
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            if config.needs_node:
                problem = await node_problem(
                    {"PATH": os.environ.get("PATH", ""), **config.env}, config.needs_node
                )
                if problem:
                    raise ToolError(problem)
            params = StdioServerParameters(
                command=config.command or "", args=list(config.args), env=dict(config.env), cwd=config.cwd
            )
            # The child's stderr goes to an unlinked temporary file: its chatter stays off the
            # user's terminal, and its last lines explain a failure.
            self._stderr = stack.enter_context(
                tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            )
            # "legacy" skips the `server/discover` probe most stdio servers answer with an error,
            # and its 10 s wait on a slow starter.
            target, mode = stdio_client(params, errlog=self._stderr), "legacy"
        client = Client(target, mode=mode, read_timeout_seconds=self.startup_timeout, client_info=info)
        return await stack.enter_async_context(client)

    async def reload(self) -> None:
        """List the tools again; on failure the previous full list stays and `ToolListError` says why."""
        if self.client is None:
            raise ToolListError(f"{self.name} is not running" + (f": {self.error}" if self.error else ""))
        try:
            self.tools = await list_all_tools(self.client, self.name)
        except ToolListError:
            raise
        except Exception as error:
            raise ToolListError(f"{self.name}: cannot list tools: {describe_error(error)}") from None

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> str:
        """Call `tool`; its text, or a `ToolError` whether the server failed or refused."""
        from mcp import MCPError
        from pydantic import ValidationError

        client = self.client
        if client is None:
            raise ToolError(f"{self.name} is not running" + (f": {self.error}" if self.error else ""))
        try:
            result = await client.call_tool(tool, dict(arguments), read_timeout_seconds=self.call_timeout)
        except MCPError as error:
            reason = error_reason(
                error.code, error.message, server=self.name, tool=tool, timeout=self.call_timeout
            )
            if error.code == CONNECTION_CLOSED:
                reason = self._with_stderr(reason)
                self._fail(reason)
            raise ToolError(redact(reason, self.config.secret_values())) from None
        except ValidationError as error:
            raise ToolError(
                f"{self.name} answered {tool} with a result this agent cannot read: {error}"
            ) from None
        except Exception as error:  # the transport broke under the call
            reason = self._with_stderr(
                f"{self.name} failed during the call to {tool}: {describe_error(error)}"
            )
            self._fail(reason)
            raise ToolError(redact(reason, self.config.secret_values())) from None
        return result_text(result)

    def _fail(self, reason: str) -> None:
        """The server is gone: later calls are refused at once; `close()` still cleans up."""
        self.client = None
        self._set("failed", reason)

    def _startup_reason(self, error: BaseException) -> str:
        config = self.config
        if self.auth is not None and self.auth.problem:
            return self.auth.problem
        if isinstance(error, ToolError):
            return f"{self.name} cannot start: {error.message}"
        if isinstance(error, ToolListError):
            return str(error)
        if isinstance(error, FileNotFoundError | PermissionError):
            return (
                f"{self.name} cannot start: `{config.command}` was not found or cannot run "
                f"({describe_error(error)}); check 'command' in the MCP config and that the program is installed"
            )
        text = describe_error(error)
        if config.transport == "http":
            hint = "check the URL, that the server is running, and its token or headers"
        else:
            hint = f"check that `{config.where}` runs on its own"
        return self._with_stderr(f"{self.name} did not start ({text}); {hint}")

    def _startup_timeout_reason(self) -> str:
        what = f"`{self.config.where}`" if self.config.transport == "stdio" else self.config.where
        hint = (
            "check that the command starts an MCP server on stdio (a first `npx` run downloads the package and can be slow)"
            if self.config.transport == "stdio"
            else "check the URL and the network"
        )
        return self._with_stderr(
            f"{self.name} ({what}) did not finish starting within {self.startup_timeout:g} s: {hint}"
        )

    def _with_stderr(self, reason: str) -> str:
        tail = stderr_tail(self._stderr)
        return f"{reason}; its last output: {tail}" if tail else reason


def stderr_tail(stream: Any, lines: int = 3, width: int = 300) -> str:
    """The last non-empty lines a child wrote to stderr, joined on one line."""
    if stream is None or getattr(stream, "closed", True):
        return ""
    try:
        stream.flush()
        stream.seek(0)
        text = stream.read()
        stream.seek(0, os.SEEK_END)
    except (OSError, ValueError):
        return ""
    kept = [" ".join(line.split())[:width] for line in text.splitlines() if line.strip()]
    return " | ".join(kept[-lines:])


async def list_all_tools(client: Any, server: str) -> list[Any]:
    """Every tool, following `next_cursor`; a repeated cursor fails rather than keep part of a list."""
    tools: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
        if cursor in seen:
            raise ToolListError(
                f"{server} sent the tool-list cursor {cursor!r} twice; its tool list is not used"
            )
        seen.add(cursor)
    raise ToolListError(f"{server} sent more than {MAX_PAGES} pages of tools; its tool list is not used")
