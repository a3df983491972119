"""`venice-agent mcp`: one MCP tool, `ask`, on the same runtime as every other command.

The parts come from `runtime.py` (model, MCP servers, the one `Consent`, caps, receipts). Per
call, the client's caps are the server's or lower (`lowered`); the client's person answers the
consent questions through elicitation (`ClientApprover`); the loop's events become progress
notifications; a client's cancellation cancels the question, which the agent rolls back.
Conversations live in memory for the server's lifetime, one `Agent` per id.
"""

# No `from __future__ import annotations`: the SDK reads the `ask` tool's annotations at run time,
# and they name classes imported inside `build_server`.

import asyncio
import contextvars
import hmac
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field

from ..config import ConfigError
from ..core.consent import Why
from ..core.errors import VeniceAgentError
from ..core.events import Event, RoundStarted, ToolFinished, ToolStarted
from ..core.receipt import Call, CallOutcome
from ..core.toolbox import ToolSpec
from .runtime import Flags, load, open_runtime
from .terminal import fail
from .text import ARGS_PREVIEW, call_text, safe

NAME = "venice-agent"
NOBODY = "this MCP client cannot be asked (no elicitation), so {tool} was declined; start the server with --yes to run paid tools"
NO_BACK_CHANNEL = (
    "this client speaks MCP {version}, where a server cannot ask mid-call, so {tool} was declined; "
    "start the server with --yes to run paid tools"
)


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


class AskResult(BaseModel):
    """The structured content of `ask`: the receipt, and what the server changed or could not do."""

    answer: str | None = Field(description="The answer (also the text content).")
    stopped_because: str = Field(description="The named exit: answered, budget, max_rounds, cost_cap, …")
    notes: list[str] = Field(default_factory=list, description="Caps lowered, calls nobody could approve.")
    conversation: str | None = Field(default=None, description="Give it again to ask a follow-up.")
    receipt: dict[str, Any] = Field(description="The full receipt, as `venice-agent --json` prints it.")


@dataclass(frozen=True)
class Caps:
    """What the server was started with: the most any question gets."""

    budget: int
    max_rounds: int
    max_usd: float | None


def lowered(
    caps: Caps, budget: int | None, max_rounds: int | None, max_usd: float | None
) -> tuple[Caps, list[str]]:
    """The client's caps, never above the server's; a note for each one that was lowered."""
    notes: list[str] = []

    def lower(name: str, asked: Any, most: Any) -> Any:
        if asked is None:
            return most
        if most is not None and asked > most:
            notes.append(f"{name} {asked} is above this server's {most}: {most} was used")
            return most
        return asked

    return (
        Caps(
            lower("budget", budget, caps.budget),
            lower("max_rounds", max_rounds, caps.max_rounds),
            lower("max_usd", max_usd, caps.max_usd),
        ),
        notes,
    )


@dataclass
class Asking:
    """The call being served: its MCP context and what the consent step had to say."""

    ctx: Any
    notes: list[str] = field(default_factory=list)


asking: contextvars.ContextVar[Asking | None] = contextvars.ContextVar("asking", default=None)


class Approve(BaseModel):
    run: bool = Field(description="Run this call?")


class ClientApprover:
    """A `consent.Approver` that asks the MCP client's person (elicitation, form mode). Nobody
    to ask (no elicitation, or the 2026-07-28 protocol with no back channel) is a no, said in
    the result."""

    async def __call__(
        self, call: Call, spec: ToolSpec | None = None, why: Why = Why.PAID
    ) -> bool | CallOutcome:
        from mcp.shared.exceptions import NoBackChannelError

        current = asking.get()
        if current is None or why is Why.SAMPLING:
            return CallOutcome.NO_ONE_TO_ASK
        name = safe(call.tool)
        capabilities = current.ctx.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            current.notes.append(NOBODY.format(tool=name))
            return CallOutcome.NO_ONE_TO_ASK  # the model is told so, not that someone said no
        where = f" on {safe(spec.server)}" if spec is not None and spec.server else ""
        reason = (
            "it may send local file contents off this machine"
            if why is Why.LOCAL_DATA
            else ("it is not known to be free: it may spend money or change things")
        )
        message = f"Run {call_text(call.tool, call.arguments, ARGS_PREVIEW)}{where}? ({reason}) yes/no"
        try:
            answer = await current.ctx.elicit(message, schema=Approve)
        except NoBackChannelError:
            current.notes.append(NO_BACK_CHANNEL.format(version=current.ctx.protocol_version, tool=name))
            return CallOutcome.NO_ONE_TO_ASK
        approved = answer.action == "accept" and bool(getattr(answer.data, "run", False))
        if not approved:
            current.notes.append(f"the client's person declined {name}")
        return approved


class Front:
    """The `ask` tool's state: the runtime, the server's caps, the conversations."""

    def __init__(self, runtime: Any, caps: Caps) -> None:
        self.runtime = runtime
        self.caps = caps
        self.approver = ClientApprover()
        self.conversations: dict[str, Any] = {}
        self.locks: dict[str, asyncio.Lock] = {}

    def agent_for(self, conversation: str | None) -> Any:
        if conversation is None:
            return self.runtime.agent(self.runtime.consented(self.approver))
        if conversation not in self.conversations:
            self.conversations[conversation] = self.runtime.agent(self.runtime.consented(self.approver))
        return self.conversations[conversation]

    async def ask(
        self,
        ctx: Any,
        question: str,
        budget: int | None,
        max_usd: float | None,
        max_rounds: int | None,
        conversation: str | None,
    ) -> Any:
        from mcp.types import CallToolResult, TextContent

        caps, notes = lowered(self.caps, budget, max_rounds, max_usd)
        lock = self.locks.setdefault(conversation or "", asyncio.Lock()) if conversation else asyncio.Lock()
        async with lock:  # one question at a time per conversation
            agent = self.agent_for(conversation)
            agent.max_rounds, agent.max_usd = caps.max_rounds, caps.max_usd
            if caps.max_usd is not None and (problem := agent.cannot_cap()) is not None:
                return CallToolResult(content=[TextContent(type="text", text=problem)], is_error=True)
            current = Asking(ctx)
            token = asking.set(current)
            progress = Progress(ctx)
            try:
                receipt = await agent.ask(question, events=progress, budget=caps.budget)
            finally:
                asking.reset(token)
                await progress.close()
        result = AskResult(
            answer=receipt.answer,
            stopped_because=str(receipt.stopped_because.value),
            notes=notes + current.notes,
            conversation=conversation,
            receipt=receipt.to_dict(),
        )
        text = receipt.answer or receipt.refusal or f"stopped: {receipt.stopped_because.value}"
        if result.notes:
            text += "\n\n" + "\n".join(f"note: {note}" for note in result.notes)
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=result.model_dump(mode="json"),
        )


class Progress:
    """The loop's events as MCP progress notifications, sent in order by one task."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.count = 0
        self.sender = asyncio.ensure_future(self._send())

    def __call__(self, event: Event) -> None:
        if isinstance(event, RoundStarted):
            self.queue.put_nowait(f"round {event.round}")
        elif isinstance(event, ToolStarted):
            self.queue.put_nowait(f"→ {call_text(event.call.tool, event.call.arguments, ARGS_PREVIEW)}")
        elif isinstance(event, ToolFinished):
            outcome = "failed" if event.error else "done"
            self.queue.put_nowait(f"{safe(event.call.tool)} {outcome}")

    async def _send(self) -> None:
        while (message := await self.queue.get()) is not None:
            self.count += 1
            try:
                await self.ctx.report_progress(self.count, None, message)
            except Exception:  # a client gone or without a progress token: the question goes on
                pass

    async def close(self) -> None:
        self.queue.put_nowait(None)
        try:
            await asyncio.shield(self.sender)
        except BaseException:
            self.sender.cancel()


def build_server(front: Front) -> Any:
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context
    from mcp.types import CallToolResult

    server = MCPServer(
        NAME,
        instructions="ask(question) runs the venice-agent with its tools, caps and consent; "
        "give a conversation id to ask follow-ups.",
        log_level="WARNING",
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
            float | None, Field(ge=0, description="Most USD (never above the server's).")
        ] = None,
        max_rounds: Annotated[
            int | None, Field(ge=1, le=40, description="Most model rounds (never above the server's).")
        ] = None,
        conversation: Annotated[
            str | None, Field(description="An id: the same id continues a conversation.")
        ] = None,
    ) -> Annotated[CallToolResult, AskResult]:
        return await front.ask(ctx, question, budget, max_usd, max_rounds, conversation)

    return server


def mcp_front_main(options: FrontOptions) -> int:
    """The whole command; returns the exit status."""
    if options.http and options.token is None and not loopback(options.host):
        return fail(f"--host {options.host} is not loopback: give --token (or VENICE_AGENT_MCP_TOKEN)")
    if options.mcp_config is not None and not options.mcp_config.is_file():
        return fail(f"--mcp-config {options.mcp_config}: no such file")
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
    try:
        settings, servers = load(flags)
        settings.require_venice_key()
    except ConfigError as error:
        return fail(error.message)
    try:
        return asyncio.run(serve(options, settings, servers))
    except VeniceAgentError as error:
        return fail(error.message, error.exit_status)
    except KeyboardInterrupt:
        return 0


def loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def serve(options: FrontOptions, settings: Any, servers: list[Any]) -> int:
    from ..core.defaults import QUESTION_BUDGET

    # person=False: nobody at this terminal (stdout may be the protocol): servers get neither
    # elicitation nor sampling from us; the consent questions go to the MCP client instead.
    async with open_runtime(settings, servers, root=options.root, person=False) as runtime:
        for failure in runtime.mcp.failures:
            print(f"venice-agent mcp: {failure}", file=sys.stderr, flush=True)
        caps = Caps(
            options.budget if options.budget is not None else QUESTION_BUDGET,
            settings.max_rounds,
            settings.max_usd,
        )
        if caps.max_usd is not None:
            problem = runtime.agent(runtime.consented()).cannot_cap()
            if problem is not None:
                raise ConfigError(problem)
        server = build_server(Front(runtime, caps))
        if not options.http:
            await server.run_stdio_async()
            return 0
        await serve_http(server, options)
    return 0


async def serve_http(server: Any, options: FrontOptions) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from ..serve.edge import EdgeRules
    from ..serve.server import listening_socket
    from .serve_cmd import hosts_for

    sock = listening_socket(options.host, options.port)
    port = sock.getsockname()[1]
    # One rule for Host and Origin, serve's (EdgeRules); the SDK's own copy of it is off.
    app = server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False), host=options.host
    )
    guarded: Any = EdgeRules(Bearer(app, options.token), hosts_for(options.host, port, []))
    shown = f"[{options.host}]" if ":" in options.host else options.host
    who = "bearer token" if options.token else "loopback, no token"
    print(f"venice-agent mcp: http://{shown}:{port}/mcp ({who})", file=sys.stderr, flush=True)
    config = uvicorn.Config(guarded, log_level="warning", access_log=False, lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


class Bearer:
    """ASGI middleware: with a token, every request carries `Authorization: Bearer TOKEN`."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.token is not None:
            from starlette.datastructures import Headers
            from starlette.responses import JSONResponse

            given = Headers(scope=scope).get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                value.strip().encode(), self.token.encode()
            ):
                response = JSONResponse(
                    {"error": "this server needs 'Authorization: Bearer TOKEN'"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


__all__ = ["AskResult", "FrontOptions", "mcp_front_main"]
