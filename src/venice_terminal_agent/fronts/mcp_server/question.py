"""One `ask` of `venice-agent mcp`, run in a task of its own (`Question`), and all its state.

On the 2026-07-28 protocol a server cannot send a request mid-call: a consent question pauses
the run (`Pause`) and the round's `tools/call` returns an input-required result naming it; the
client's retry carries the answer (`answer`), and the run goes on in that retry's round
(`drive`). A retry that never comes is a no after the deadline (`expire`). `Timers` holds the
deadline, the clock it waits on (a test gives its own) and the waits running, which the server
cancels when it stops. The front (`ask_tool.Front`) keeps the questions by id and runs each."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .client_consent import CONSENT, Approve, Asking

NO_ANSWER = "no answer came within {seconds:g} s, so {tool} was declined"
NOT_WAITING = (
    "this question is not waiting for an answer (it ended, it was answered already, "
    "or the server restarted): ask again"
)


@dataclass
class Pause:
    """A consent question waiting for the client's retry: its number in the run, and the answer."""

    number: int
    tool: str
    request: Any  # mcp.types.ElicitRequest
    answer: asyncio.Future[bool]


@dataclass
class Timers:
    """How long a paused question waits for its answer, what it waits on, and the waits running."""

    deadline: float
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    running: set[asyncio.Future[Any]] = field(default_factory=set)

    def start(self, work: Awaitable[Any]) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(work)
        self.running.add(task)
        task.add_done_callback(self.running.discard)
        return task


class Question:
    """One `ask`: its task, the round driving it (`ctx`, `progress`), its pause and its result.
    A round waits on `signals` for either a `Pause` or the final `CallToolResult`."""

    def __init__(self, ctx: Any, progress: Any, timers: Timers) -> None:
        self.id = secrets.token_hex(8)
        self.asking = Asking(ctx, question=self)
        self.progress = progress  # the front's `Progress`: this question's events to the client
        self.timers = timers
        self.signals: asyncio.Queue[Any] = asyncio.Queue()  # Pause, or the final CallToolResult
        self.pause: Pause | None = None
        self.expired: int | None = None  # the pause that ran out of time: its retry gets the result
        self.asks = 0
        self.driven = False  # a round is waiting on `signals`
        self.finished = False  # the result went to a round
        self.task: asyncio.Task[None] | None = None
        self.timer: asyncio.Future[Any] | None = None

    async def ask_client(self, message: str, tool: str) -> bool:
        """Pause until the client's retry answers `message` (False when none comes in time)."""
        from mcp.server.elicitation import render_elicitation_schema
        from mcp.types import ElicitRequest, ElicitRequestFormParams

        self.asks += 1
        params = ElicitRequestFormParams(message=message, requested_schema=render_elicitation_schema(Approve))
        pause = Pause(
            self.asks, tool, ElicitRequest(params=params), asyncio.get_running_loop().create_future()
        )
        self.pause = pause
        self.timer = self.timers.start(self.expire(pause))
        self.signals.put_nowait(pause)
        return await pause.answer

    def settle(self, pause: Pause, approved: bool) -> None:
        if self.pause is pause:
            self.pause = None
        if self.timer is not None:
            self.timer.cancel()
        if not pause.answer.done():
            pause.answer.set_result(approved)

    def waiting(self, pause: Pause) -> Any:
        from mcp.types import InputRequiredResult

        return InputRequiredResult(
            input_requests={CONSENT: pause.request}, request_state=f"{self.id}.{pause.number}"
        )

    async def expire(self, pause: Pause) -> None:
        await self.timers.sleep(self.timers.deadline)
        if self.pause is pause:
            self.asking.notes.append(NO_ANSWER.format(seconds=self.timers.deadline, tool=pause.tool))
            self.expired = pause.number
            self.settle(pause, False)

    async def drive(self, ctx: Any) -> Any:
        """This round's outcome: the run's result (`finished`), or the consent question it
        paused on. The client cancelling the call (or leaving) cancels the question."""
        import anyio

        self.asking.ctx = self.progress.ctx = ctx  # progress and questions go to this round
        self.driven = True
        try:
            signal = await self.signals.get()
        except BaseException:
            self.finished = True
            assert self.task is not None
            self.task.cancel()
            with anyio.CancelScope(shield=True):  # wait for the agent's rollback
                await asyncio.wait([self.task])
            raise
        finally:
            self.driven = False
        if isinstance(signal, Pause):
            return self.waiting(signal)
        self.finished = True
        return signal

    def answer(self, ctx: Any, number: str) -> Any | None:
        """A retry naming pause `number`: its answer settles the pause and None comes back (the
        retry drives the run on); without an answer, the question again. `MCPError` when this
        question is not waiting for that answer."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import INVALID_PARAMS, ElicitResult

        pause = self.pause
        if self.driven:
            raise MCPError(code=INVALID_PARAMS, message=NOT_WAITING, data={"reason": "not_waiting"})
        if pause is not None and str(pause.number) == number:
            given = (ctx.input_responses or {}).get(CONSENT)
            if given is None:  # retried without the answer: asked again
                return self.waiting(pause)
            approved = (
                isinstance(given, ElicitResult)
                and given.action == "accept"
                and (given.content or {}).get("run") is True
            )
            if not approved:
                self.asking.notes.append(f"the client's person declined {pause.tool}")
            self.settle(pause, approved)
        elif self.expired is None or str(self.expired) != number:
            raise MCPError(code=INVALID_PARAMS, message=NOT_WAITING, data={"reason": "not_waiting"})
        return None
