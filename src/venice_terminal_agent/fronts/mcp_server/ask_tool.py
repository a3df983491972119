"""The MCP front's one tool, `ask`: what the server does with each call.

Per call, the client's caps are the server's or lower (`lowered`); the client's person answers the
consent questions through elicitation (`ClientApprover`, client_consent.py); the loop's events
become progress notifications (`Progress`); a client's cancellation cancels the question, which
the agent rolls back; the receipt becomes the tool's result (`AskResult`). Conversations live in
memory for the server's lifetime, one `Agent` per id; with sessions on, each is a saved session
(`fronts/saved_sessions.py`, as the terminal's), so an id outlives the server and
`venice-agent -r ID` goes on with it.

Each question runs in a task of its own (`Question`, in question.py): on the 2026-07-28
protocol a server cannot send a request mid-call, so a consent question pauses the run and the
`tools/call` returns an input-required result (SEP-2322) naming the paused question in its
`requestState` (sealed by the SDK); the client's retry carries the answer, which resumes that
same run (`Front.resume`). A retry that never comes is a no after `DEADLINE` seconds.

The server that carries the tool (its set-up, transports, start and stop) is mcp_main.py.
"""

import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ...core.errors import ConfigError, StoreError
from ...core.events import Event, RoundStarted, ToolFinished, ToolStarted
from ..settings_load import Flags
from ..text import ARGS_PREVIEW, call_text, safe
from .client_consent import asking
from .question import NOT_WAITING, Question, Timers

if TYPE_CHECKING:
    from ...core.receipt import Receipt
    from ..runtime import Runtime

DEADLINE = 600.0  # seconds a paused question waits for the client's retry before it is a no
BUSY = (
    "conversation {conversation} is answering another question: ask again when that one has its "
    "answer (a conversation takes one question at a time)"
)


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


__all__ = ["AskResult", "Caps", "Front", "lowered"]
