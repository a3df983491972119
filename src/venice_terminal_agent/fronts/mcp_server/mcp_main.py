"""`venice-agent mcp`: one MCP tool, `ask`, on the same runtime as every other command.

The parts come from `fronts/runtime.py` (model, MCP servers, the one `Consent`, caps, receipts). Per
call, the client's caps are the server's or lower (`lowered`); the client's person answers the
consent questions through elicitation (`ClientApprover`); the loop's events become progress
notifications; a client's cancellation cancels the question, which the agent rolls back.
Conversations live in memory for the server's lifetime, one `Agent` per id; with sessions on,
each is a saved session (`fronts/saved_sessions.py`, as the terminal's), so an id outlives the server and
`venice-agent -r ID` goes on with it.

Each question runs in a task of its own (`Question`, in question.py): on the 2026-07-28
protocol a server cannot send a request mid-call, so a consent question pauses the run and the
`tools/call` returns an input-required result (SEP-2322) naming the paused question in its
`requestState` (sealed by the SDK); the client's retry carries the answer, which resumes that
same run (`Front.resume`). A retry that never comes is a no after `DEADLINE` seconds.
"""

# No `from __future__ import annotations`: the SDK reads the `ask` tool's annotations at run time,
# and they name classes imported inside `build_server`.

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from ...core.errors import ConfigError, StoreError, VeniceAgentError
from ...core.events import Event, RoundStarted, ToolFinished, ToolStarted
from ..failures import fail, path_problem
from ..listening import is_loopback
from ..runtime import Opening, open_runtime
from ..settings_load import Flags, load
from ..text import ARGS_PREVIEW, call_text, safe
from .client_consent import ClientPerson, asking
from .question import NOT_WAITING, Question, Timers

if TYPE_CHECKING:
    from ...config import Settings
    from ...core.receipt import Receipt
    from ...mcp.server_config import ServerConfig
    from ..runtime import Runtime

NAME = "venice-agent"
DEADLINE = 600.0  # seconds a paused question waits for the client's retry before it is a no
BUSY = (
    "conversation {conversation} is answering another question: ask again when that one has its "
    "answer (a conversation takes one question at a time)"
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
    notes: list[str] = Field(
        default_factory=list,
        description="Caps lowered, calls nobody could approve, and where the conversation is saved.",
    )
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


class Front:
    """The `ask` tool's state: the runtime, the server's caps, the conversations, and the
    questions running by id (those paused for an answer among them; each keeps its own state,
    question.py). `sleep` is the clock the deadline of a pause waits on (a test gives its own)."""

    def __init__(
        self,
        runtime: "Runtime | None",
        caps: Caps,
        *,
        deadline: float = DEADLINE,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        problem: str | None = None,
    ) -> None:
        self.runtime = runtime
        self.caps = caps
        self.problem = problem  # a setting no question can start with: each is answered with it
        self.conversations: dict[str, Any] = {}
        self.finding = asyncio.Lock()  # ids are resolved (and sessions opened) one at a time
        self.busy: set[int] = set()  # the conversations answering a question (by their agent)
        self.questions: dict[str, Question] = {}
        self.timers = Timers(deadline, sleep)  # the pauses' deadlines and drops, cancelled at the end

    async def agent_for(self, conversation: str | None) -> tuple[Any, Any, list[str]]:
        """The agent a question goes to (a `SavingAgent` with sessions on), the `Agent` itself
        (its caps are set on it), and what to say about the session. `ConfigError` when sessions
        are on and `conversation` names no saved session."""
        runtime = self.runtime
        assert runtime is not None  # a front with a problem answers every question with it
        if not runtime.settings.venice_agent_sessions:
            if conversation is None:
                agent = runtime.agent(runtime.consented())
                return agent, agent, []
            if conversation not in self.conversations:
                self.conversations[conversation] = runtime.agent(runtime.consented())
            agent = self.conversations[conversation]
            return agent, agent, []
        if conversation is not None and conversation in self.conversations:
            saving = self.conversations[conversation]
            return saving, saving.agent, []
        from ..saved_sessions import attach, open_session

        flags = Flags(resume=conversation)  # as --resume ID: an id or a unique prefix of one
        settings = runtime.settings
        opened = await open_session(flags, settings, settings.secrets(runtime.servers))
        assert opened is not None  # sessions are on
        if opened.id in self.conversations:  # a prefix of one this server holds
            await opened.store.close()
            saving = self.conversations[opened.id]
            return saving, saving.agent, []
        base = runtime.agent(runtime.consented())
        saving, notes = attach(base, base, opened, settings, flags, runtime.model or "", warn)
        self.conversations[saving.id] = saving
        return saving, base, notes

    async def ask(
        self,
        ctx: Any,
        question: str,
        budget: int | None,
        max_usd: float | None,
        max_rounds: int | None,
        conversation: str | None,
    ) -> Any:
        if ctx.request_state is not None:  # a retry: the answer to a paused question's consent
            return await self.resume(ctx, ctx.request_state)
        if self.problem is not None:
            return refused(self.problem)
        caps, notes = lowered(self.caps, budget, max_rounds, max_usd)
        running = Question(ctx, Progress(ctx), self.timers)
        self.questions[running.id] = running
        running.task = asyncio.ensure_future(self.run(running, question, caps, notes, conversation))
        return await self.drive(running, ctx)

    async def run(
        self, running: Question, question: str, caps: Caps, notes: list[str], conversation: str | None
    ) -> None:
        asking.set(running.asking)  # this task's own context: the approver finds its question
        held: int | None = None
        try:
            problem: str | None = None
            try:
                async with self.finding:  # the full id and a prefix of it find one agent
                    agent, base, said = await self.agent_for(conversation)
            except ConfigError as error:  # no such saved conversation
                agent, problem = None, error.message
            if agent is not None:
                if id(agent) in self.busy:  # refused at once: a wait could last a consent's deadline
                    problem = BUSY.format(conversation=getattr(agent, "id", conversation))
                else:
                    held = id(agent)
                    self.busy.add(held)
            if agent is not None and problem is None:
                base.max_rounds, base.max_usd = caps.max_rounds, caps.max_usd
                problem = base.cannot_cap() if caps.max_usd is not None else None
            if problem is not None:
                await running.progress.close()
                result = refused(problem)
            else:
                try:
                    receipt = await agent.ask(question, events=running.progress, budget=caps.budget)
                finally:
                    await running.progress.close()
                    if hasattr(agent, "opened"):  # no thread per idle session: opened again to save
                        await agent.opened.store.close()
                kept = getattr(agent, "id", conversation)  # a saved session's, after any fork
                result = self.result(receipt, notes + running.asking.notes, kept, said)
        except Exception as error:  # a bug: said to the client as the tool's error, not lost in a task
            result = refused(f"the question failed: {safe(str(error))}")
        finally:
            if held is not None:
                self.busy.discard(held)
        running.signals.put_nowait(result)
        if running.expired is not None and not running.driven:
            # Its client may never come back: the result is kept for one more deadline only.
            self.timers.start(self.drop(running))

    def result(self, receipt: "Receipt", notes: list[str], conversation: str | None, saved: list[str]) -> Any:
        """The answer; `notes` about it follow it in the text (the caller's model reads them),
        those about where the conversation is `saved` are for the program only."""
        from mcp.types import CallToolResult, TextContent

        result = AskResult(
            answer=receipt.answer,
            stopped_because=str(receipt.stopped_because.value),
            notes=notes + saved,
            conversation=conversation,
            receipt=receipt.to_dict(),
        )
        text = receipt.answer or receipt.refusal or f"stopped: {receipt.stopped_because.value}"
        if notes:
            text += "\n\n" + "\n".join(f"note: {note}" for note in notes)
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=result.model_dump(mode="json"),
        )

    async def drive(self, running: Question, ctx: Any) -> Any:
        """This round's outcome: the run's result, or the consent question it paused on."""
        try:
            return await running.drive(ctx)
        finally:
            if running.finished:
                self.questions.pop(running.id, None)

    async def resume(self, ctx: Any, state: str) -> Any:
        """A retry: its answer settles the pause its state names, and the run goes on."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import INVALID_PARAMS

        key, _, number = state.partition(".")
        running = self.questions.get(key)
        if running is None:
            raise MCPError(code=INVALID_PARAMS, message=NOT_WAITING, data={"reason": "not_waiting"})
        asked_again = running.answer(ctx, number)
        if asked_again is not None:
            return asked_again
        return await self.drive(running, ctx)

    async def drop(self, running: Question) -> None:
        """A result no retry came for is kept one more deadline, then let go."""
        await self.timers.sleep(self.timers.deadline)
        if not running.driven:
            self.questions.pop(running.id, None)

    async def close(self) -> None:
        """The server stops: every question still running is cancelled, every session let go."""
        tasks = [running.task for running in self.questions.values() if running.task is not None]
        for task in [*tasks, *self.timers.running]:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        for agent in self.conversations.values():
            if hasattr(agent, "close"):
                try:
                    await agent.opened.store.open()  # to let go of its claim on the session
                except StoreError:
                    pass
                await agent.close()


def refused(problem: str) -> Any:
    """A question that could not start, as the tool's error: the line that says why."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=problem)], is_error=True)


def warn(message: str) -> None:
    """A session that could not be saved (or went on elsewhere): said in the question's result
    and on stderr (the terminal of the person who started the server)."""
    print(f"venice-agent mcp: {safe(message)}", file=sys.stderr, flush=True)
    current = asking.get()
    if current is not None:
        current.notes.append(message)


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


__all__ = ["AskResult", "FrontOptions", "mcp_front_main"]
