"""`venice-agent mcp`: the agent as an MCP server, on the same runtime as every other command.

This module sets the server up and serves it: the command (`mcp_front_main`: the flags, the
settings, the socket `--http` listens on), the runtime from `fronts/runtime.py` (model, MCP
servers, the one `Consent`, caps, receipts) opened with the client's person (`ClientPerson`,
client_consent.py), the SDK's server with its one tool, its transports (stdio, or HTTP in
http_transport.py), and the way out (every question cancelled, every session let go). What the
tool does with each call, `ask`, is ask_tool.py's `Front`; one question's pause, answer and
deadline are question.py's.
"""

# No `from __future__ import annotations`: the SDK reads the `ask` tool's annotations at run time,
# and they name classes imported inside `build_server`.

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from ...core.errors import ConfigError, VeniceAgentError
from ..failures import fail, path_problem
from ..listening import is_loopback
from ..runtime import Opening, open_runtime
from ..settings_load import Flags, load
from ..text import safe
from .ask_tool import AskResult, Caps, Front
from .client_consent import ClientPerson

if TYPE_CHECKING:
    from ...config import Settings
    from ...mcp.server_config import ServerConfig

NAME = "venice-agent"


@dataclass(frozen=True)
class FrontOptions:
    http: bool = False
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    model: str | None = None
    mcp_config: Path | None = None
    max_rounds: int | None = None
    budget: int | None = None
    max_usd: float | None = None
    yes: bool = False
    root: Path | None = None
    no_files: bool = False
    no_mcp: bool = False


def build_server(front: Front) -> Any:
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context, RequestStateSecurity
    from mcp.types import CallToolResult, InputRequiredResult

    from ... import __version__

    server = MCPServer(
        NAME,
        version=__version__,
        instructions="ask(question) runs the venice-agent with its tools, caps and consent; "
        "give a conversation id to ask follow-ups.",
        log_level="WARNING",
        # The SDK seals each requestState under this process's key; it outlives our deadline,
        # so a late retry reaches us and gets the question's result (or NOT_WAITING).
        request_state_security=RequestStateSecurity.ephemeral(ttl=3 * front.timers.deadline),
    )

    @server.tool(
        name="ask",
        description="Ask the venice-agent a question; it may call its tools (within the server's caps). "
        "Paid calls ask you first. Returns the answer and its receipt.",
    )
    async def ask(
        question: Annotated[str, Field(description="The question.")],
        ctx: Context,
        budget: Annotated[
            int | None, Field(ge=0, description="Most tool calls (never above the server's).")
        ] = None,
        max_usd: Annotated[
            float | None,
            Field(ge=0, allow_inf_nan=False, description="Most USD (never above the server's)."),
        ] = None,
        max_rounds: Annotated[
            int | None, Field(ge=1, le=40, description="Most model rounds (never above the server's).")
        ] = None,
        conversation: Annotated[
            str | None, Field(description="An id: the same id continues a conversation.")
        ] = None,
    ) -> Annotated[CallToolResult, AskResult] | InputRequiredResult:
        return await front.ask(ctx, question, budget, max_usd, max_rounds, conversation)

    return server


def mcp_front_main(options: FrontOptions) -> int:
    """The whole command; returns the exit status."""
    if options.http and options.token is None and not is_loopback(options.host):
        return fail(f"--host {options.host} is not loopback: give --token (or VENICE_AGENT_MCP_TOKEN)")
    if wrong := path_problem(mcp_config=options.mcp_config):
        return fail(wrong)
    flags = Flags(
        model=options.model,
        mcp_config=options.mcp_config,
        max_rounds=options.max_rounds,
        budget=options.budget,
        yes=options.yes,
        max_usd=options.max_usd,
        root=options.root,
        no_files=options.no_files,
        no_mcp=options.no_mcp,
    )
    problem: ConfigError | None = None
    try:
        settings, servers = load(flags)
        settings.require_venice_key()
    except ConfigError as error:  # said to the client too, at each question it asks
        settings, servers, problem = None, [], error
    sock = None
    if options.http:  # before anything starts: a taken port is one line, as serve says it
        from ..listening import listen

        try:
            sock = listen(options.host, options.port)
        except ConfigError as error:
            return fail(error.message)
    try:
        return asyncio.run(serve(options, settings, servers, problem, sock))
    except VeniceAgentError as error:
        return fail(error.message, error.exit_status)
    except KeyboardInterrupt:
        return 0
    finally:
        if sock is not None:
            sock.close()


async def serve(
    options: FrontOptions,
    settings: "Settings | None",
    servers: "list[ServerConfig]",
    problem: ConfigError | None = None,
    sock: Any = None,
) -> int:
    """Serve on stdio, or over HTTP on `sock` (bound already)."""
    async with open_front(options, settings, servers, problem=problem) as server:
        if sock is None:
            await server.run_stdio_async()
            return 0
        from .http_transport import serve_http

        await serve_http(server, sock, options.token)
    return 0


@asynccontextmanager
async def open_front(
    options: FrontOptions,
    settings: "Settings | None",
    servers: "list[ServerConfig]",
    problem: ConfigError | None = None,
    **timing: Any,
) -> AsyncIterator[Any]:
    """The MCP server (the SDK's `MCPServer`) on a runtime opened here and closed on the way out;
    `timing` (deadline, sleep) goes to `Front`. A setting no question can start with (`problem`,
    or found here: no key, a bad setting, a money cap that cannot be kept) still gets a
    server: each question is answered with the line that says why (a server that exits shows
    the client only "Connection closed")."""
    from contextlib import AsyncExitStack

    from ...core.defaults import QUESTION_BUDGET

    async with AsyncExitStack() as stack:
        front: Front | None = None
        if problem is None:
            assert settings is not None  # only a problem comes without settings
            try:
                # The client's person: consent questions go to the client; nobody at this
                # terminal (stdout may be the protocol), so servers get neither forms nor sampling.
                runtime = await stack.enter_async_context(
                    open_runtime(settings, servers, ClientPerson(), Opening(root=options.root))
                )
                for failure in runtime.mcp.failures:
                    print(f"venice-agent mcp: {failure}", file=sys.stderr, flush=True)
                caps = Caps(
                    options.budget if options.budget is not None else QUESTION_BUDGET,
                    settings.max_rounds,
                    settings.max_usd,
                )
                runtime.agent(runtime.consented())  # a money cap that cannot be kept is refused here
                front = Front(runtime, caps, **timing)
            except ConfigError as error:
                problem = error
        if front is None:
            assert problem is not None
            print(f"venice-agent mcp: {safe(problem.message)}", file=sys.stderr, flush=True)
            front = Front(None, Caps(0, 0, None), problem=problem.message, **timing)
        try:
            yield build_server(front)
        finally:
            await front.close()


__all__ = ["FrontOptions", "mcp_front_main"]
