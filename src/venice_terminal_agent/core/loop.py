"""The deterministic loop: run a plan of tool calls, stop for a named reason, hand back a receipt.

Before every step the exits are tested in this order:
  1. answered       the next step is an answer (never a call, never counted);
  2. repeated_call  the next call equals the call just before it (tool and arguments);
  3. budget         `len(steps) >= budget`, checked before the call, never after;
  4. tool_error     the tool refused or does not exist; a readable refusal, never a crash.
Planners that think (a model) add `max_rounds`, `model_error`, `cancelled` and `cost_cap`.
A planner with `conclude` (the model) gets one last round after a `budget`, `max_rounds` or
`repeated_call` stop, kept inside `max_rounds`, to answer from what was gathered: the receipt
keeps its exit and carries that answer, marked partial.

This module is pure: it imports nothing of the model provider, MCP, storage or the terminal.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol, runtime_checkable

from . import observe
from .consent import declined_result, no_yes
from .defaults import PLAN_BUDGET
from .errors import ToolError
from .events import (
    Event,
    EventSink,
    Finished,
    RoundStarted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    ignore,
    tool_progress,
)
from .pager import Pager
from .receipt import Answer, Call, CallOutcome, Exit, Proposed, Receipt, Step, Tally
from .record import Record
from .scrub import well_formed, well_formed_all
from .toolbox import Toolbox, as_toolbox, settle
from .wording import plural


class Outcome(Record):
    """What became of one proposed call, handed back to the planner in call order."""

    call: Call
    result: Any = None
    error: str | None = None
    ran: bool = False  # it ran, and so counts as a step
    # It needed a yes and got none: declined, no one to ask, or refused by policy; `error` says so.
    refused: CallOutcome | None = None

    @property
    def declined(self) -> bool:
        return self.refused is not None

    @property
    def failed(self) -> bool:
        return self.error is not None and not self.declined


class Stop(Record):
    """A planner's way to end the run itself (the model API failed, say); with `answer`, the
    run ends with that answer marked partial (the output limit cut it). `unrun`: calls the
    planner proposed and will not run (the cut turn's), for the receipt."""

    exit: Exit
    refusal: str
    answer: str | None = None
    unrun: tuple[Proposed, ...] = ()


Move = Answer | Call | Sequence[Call] | Stop | None


@runtime_checkable
class Planner(Protocol):
    """Decides the next move from the outcomes of the previous one.

    Returns an `Answer`, a batch of `Call`s (run in parallel, checked one by one), a `Stop`,
    or None when it has nothing more to propose. A planner whose `recovers` is true gets tool
    errors back as outcomes instead of the run ending at once; the run then ends on
    `tool_error` only when the same tool fails in two consecutive rounds.
    """

    async def next(self, outcomes: Sequence[Outcome]) -> Move: ...


class StepsPlanner:
    """A fixed plan: an iterable of `Call` and `Answer`, one step per move."""

    recovers = False

    def __init__(self, steps: Iterable[Call | Answer]) -> None:
        self._steps: Iterator[Call | Answer] = iter(steps)

    async def next(self, outcomes: Sequence[Outcome]) -> Move:
        step = next(self._steps, None)
        if step is not None and not isinstance(step, Call | Answer):
            raise TypeError(f"a plan holds Call and Answer steps, not {type(step).__name__}")
        return step


# True: it may run. False: the person said no. A `CallOutcome`: why it may not (no one to ask…).
Approve = Callable[[Call], Awaitable[bool | CallOutcome]]


def as_planner(plan: Planner | Iterable[Call | Answer]) -> Planner:
    # A duck-typed check: `isinstance` on a runtime Protocol walks its attributes each time.
    return plan if callable(getattr(plan, "next", None)) else StepsPlanner(plan)  # type: ignore[return-value,arg-type]


async def run_loop(
    plan: Planner | Iterable[Call | Answer],
    tools: Toolbox | Mapping[str, Callable[..., Any]] | None = None,
    budget: int = PLAN_BUDGET,
    *,
    max_rounds: int | None = None,
    approve: Approve | None = None,
    events: EventSink | None = None,
    pager: Pager | None = None,
    tally: Tally | None = None,
) -> Receipt:
    """Run `plan` on `tools` until one named exit; never more than `budget` tool calls.

    `approve` is asked, one call at a time and before a batch runs, whether a call may run
    (a declined call is handed back to the planner, not run); without it, a toolbox that
    decides consent itself (`consent.Consent`) is asked through its own `approve`. `pager` cuts long results into
    pages. `tally`: the run's count of rounds and calls, to share with what spends them outside
    the loop (the limits are set here). Cancelling the task ends the run with a `cancelled` receipt.
    """
    if budget < 0:
        raise ValueError("budget must be >= 0")
    toolbox = as_toolbox(tools)
    if approve is None:
        # A consent wrapper is never bypassed; `decide` also says why a no was a no.
        approve = getattr(toolbox, "decide", None) or getattr(toolbox, "approve", None)
    with observe.question() as watch:  # within a question of the agent's, that question
        sink = watch.sink(events or ignore)
        run = _Run(as_planner(plan), toolbox, budget, max_rounds, approve, sink, pager, tally or Tally())
        receipt = await run.go()
        watch.finished(receipt)
        return receipt


class _Run(Record, frozen=False):
    planner: Planner
    toolbox: Toolbox
    budget: int
    max_rounds: int | None
    approve: Approve | None
    events: EventSink | None
    pager: Pager | None
    tally: Tally
    steps: list[Step] = field(default_factory=list)
    proposed: list[Proposed] = field(default_factory=list)  # every call, with its outcome
    previous: Call | None = None
    failing: set[str] = field(default_factory=set)  # tools that failed in the previous round
    started: float = field(default_factory=time.perf_counter)

    @property
    def rounds(self) -> int:
        return self.tally.rounds

    def emit(self, event: Event) -> None:
        (self.events or ignore)(event)

    def finish(
        self, exit: Exit, *, answer: str | None = None, refusal: str | None = None, partial: bool = False
    ) -> Receipt:
        receipt = Receipt(
            steps=tuple(self.steps),
            stopped_because=exit,
            answer=answer,
            refusal=refusal,
            rounds=self.rounds,
            duration=time.perf_counter() - self.started,
            partial=partial,
            proposed=tuple(self.proposed),
        )
        self.emit(Finished(receipt))
        return receipt

    async def go(self) -> Receipt:
        outcomes: list[Outcome] = []
        recovers = bool(getattr(self.planner, "recovers", False))
        # The last round is kept for the partial answer, when there is room for one.
        reserve = 1 if self.concludes and self.max_rounds is not None and self.max_rounds > 1 else 0
        self.tally.max_rounds, self.tally.reserve, self.tally.budget = self.max_rounds, reserve, self.budget
        try:
            while True:
                if self.tally.full():
                    return await self.stop(
                        Exit.MAX_ROUNDS,
                        f"no answer after {plural(self.rounds, 'round')} (the round limit is {self.max_rounds})",
                        outcomes,
                    )
                self.tally.rounds += 1
                self.emit(RoundStarted(self.rounds))
                move = await self.planner.next(outcomes)
                if isinstance(move, Answer):
                    return self.finish(Exit.ANSWERED, answer=move.text)
                if isinstance(move, Stop):
                    self.proposed.extend(move.unrun)
                    partial = move.answer is not None
                    return self.finish(move.exit, answer=move.answer, refusal=move.refusal, partial=partial)
                batch = [move] if isinstance(move, Call) else list(move or ())
                if not batch:
                    return self.finish(
                        Exit.BUDGET,
                        refusal=f"the plan ran out without an answer after {_calls(len(self.steps))}",
                    )
                outcomes, stop = await self.play(batch, recovers)
                if isinstance(stop, Receipt):
                    return stop
                if stop is not None:
                    return await self.stop(*stop, outcomes)
        except asyncio.CancelledError:
            # Part of an answer may have streamed already: it was not finished, and is not kept.
            return self.finish(Exit.CANCELLED, refusal="cancelled before the answer was finished")

    @property
    def concludes(self) -> bool:
        return callable(getattr(self.planner, "conclude", None))

    async def stop(self, exit: Exit, refusal: str, outcomes: list[Outcome]) -> Receipt:
        """End on `exit`; a planner that concludes first answers from what it has (partial)."""
        if not self.concludes or (self.max_rounds is not None and self.rounds >= self.max_rounds):
            return self.finish(exit, refusal=refusal)
        self.emit(RoundStarted(self.rounds + 1))
        move = await self.planner.conclude(outcomes, refusal)  # type: ignore[attr-defined]
        if move is None:
            return self.finish(exit, refusal=refusal)
        self.tally.rounds += 1  # a request was made
        if isinstance(move, Answer):
            return self.finish(exit, answer=move.text, refusal=refusal, partial=True)
        if isinstance(move, Stop) and move.answer is not None:  # cut short too, or calls left out
            self.proposed.extend(move.unrun)
            return self.finish(exit, answer=move.answer, refusal=f"{refusal}; {move.refusal}", partial=True)
        return self.finish(exit, refusal=refusal)  # the last request failed: no partial answer

    async def play(
        self, batch: list[Call], recovers: bool
    ) -> tuple[list[Outcome], Receipt | tuple[Exit, str] | None]:
        """Check a batch call by call, ask consent, run the approved calls in parallel."""
        slots: list[Outcome | Call] = []  # a Call is a slot still to run
        check_stop: tuple[Exit, str] | None = None
        if self.concludes and self.max_rounds is not None and self.rounds >= self.max_rounds:
            # No round is left to read the results: running the calls would spend for nothing.
            why = (
                f"stopped before running {plural(len(batch), 'proposed call')}: the round limit is "
                f"{plural(self.max_rounds, 'round')}, so no round is left to read their results"
            )
            self.not_run(batch, why)
            return [], (Exit.MAX_ROUNDS, why)
        await settle(self.toolbox)  # servers a cached list stood in for: started and listed first
        for number, call in enumerate(batch):
            if self.previous is not None and call.key() == self.previous.key():
                check_stop = (
                    Exit.REPEATED_CALL,
                    f"stopped before calling {call.tool} again with the same arguments "
                    "as the call just before it",
                )
                self.not_run(batch[number:], check_stop[1])
                break
            # Counted when queued, so a call's own sampling requests see it; calls a server
            # runs for this run (approved in its sampling request) count too.
            if self.tally.calls >= self.budget:
                check_stop = (
                    Exit.BUDGET,
                    f"stopped before call {self.tally.calls + 1}: "
                    f"the budget of {plural(self.budget, 'tool call')} is spent",
                )
                self.not_run(batch[number:], check_stop[1])
                break
            self.previous = call
            refusal = self.refuse(call)
            if refusal is not None:
                self.proposed.append(Proposed(call.tool, call.arguments, CallOutcome.INVALID))
                if not recovers:
                    check_stop = (Exit.TOOL_ERROR, refusal)
                    self.not_run(batch[number + 1 :], refusal)
                    break
                slots.append(Outcome(call, error=refusal))
                continue
            verdict = True if self.approve is None else await self.approve(call)
            if verdict is not True:
                why = CallOutcome.DECLINED if verdict is False or verdict is CallOutcome.RAN else verdict
                self.proposed.append(Proposed(call.tool, call.arguments, why))
                reason = self.no_yes(why)
                if not recovers:  # a fixed plan cannot do without it: never "answered" as if it ran
                    check_stop = (
                        Exit.TOOL_ERROR,
                        f"{call.tool} did not run: {reason}, so the plan stops here",
                    )
                    self.not_run(batch[number + 1 :], check_stop[1])
                    break
                slots.append(Outcome(call, error=declined_result(reason), refused=why))
            else:
                self.proposed.append(Proposed(call.tool, call.arguments, CallOutcome.RAN))
                slots.append(call)
                self.tally.calls += 1

        outcomes = await self.run_calls(slots)
        failure = self.failure(outcomes, recovers)
        if failure is not None:
            return outcomes, self.finish(Exit.TOOL_ERROR, refusal=failure)
        return outcomes, check_stop

    def not_run(self, calls: Sequence[Call], why: str) -> None:
        """The rest of a batch, left when the run stopped before it, and why."""
        self.proposed.extend(Proposed(call.tool, call.arguments, CallOutcome.NOT_RUN, why) for call in calls)

    def no_yes(self, why: CallOutcome) -> str:
        """Why a call got no yes, in the words of the consent wrapper that said no."""
        wording = getattr(self.toolbox, "no_yes", None)
        return wording(why) if callable(wording) else no_yes(why)

    def refuse(self, call: Call) -> str | None:
        """Why `call` cannot run at all (not counted as a step), or None."""
        if call.malformed is not None:
            return f"{call.tool}: {call.malformed}"
        if call.tool not in self.toolbox:
            names = sorted(spec.name for spec in self.toolbox.specs())
            known = ", ".join(names[:20]) + (" …" if len(names) > 20 else "") if names else "none"
            return f"there is no tool named {call.tool!r} (tools: {known})"
        return None

    async def run_calls(self, slots: list[Outcome | Call]) -> list[Outcome]:
        done: dict[int, Outcome] = {}
        to_run = [(i, slot) for i, slot in enumerate(slots) if isinstance(slot, Call)]
        try:
            async with asyncio.TaskGroup() as group:
                for i, call in to_run:
                    group.create_task(self.run_one(i, call, done))
        finally:
            # Steps in call order, whatever finished; a call cut short still ran.
            for i, call in to_run:
                outcome = done.get(i) or Outcome(call, error="cancelled while running", ran=True)
                done[i] = outcome
                self.steps.append(Step(call.tool, call.arguments, outcome.result, outcome.error))
        return [slot if isinstance(slot, Outcome) else done[i] for i, slot in enumerate(slots)]

    async def run_one(self, index: int, call: Call, done: dict[int, Outcome]) -> None:
        self.emit(ToolStarted(call))

        def report(progress: float | None, total: float | None, message: str | None) -> None:
            self.emit(ToolProgress(call, progress, total, message))

        tool_progress.set(report)  # this call runs in its own task: the value is its own
        # A tool's text may hold a lone surrogate (a file name that is not UTF-8 comes so from
        # the system): repaired here, for every toolbox, as a model's text is, or it cannot be
        # stored, sent or printed.
        with observe.tool(call) as watch:
            try:
                result = self.page(well_formed_all(await self.toolbox.call(call.tool, call.arguments)))
                outcome = Outcome(call, result=result, ran=True)
            except ToolError as refusal:
                outcome = Outcome(call, error=well_formed(refusal.message), ran=True)
            except Exception as error:
                outcome = Outcome(call, error=well_formed(f"{type(error).__name__}: {error}"), ran=True)
            watch.finished(outcome.result, outcome.error)
        done[index] = outcome
        self.emit(ToolFinished(call, outcome.result, outcome.error))

    def page(self, result: object) -> Any:
        if self.pager is None:
            return result
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
        return self.pager.cut(text) if len(text) > self.pager.page_chars else result

    def failure(self, outcomes: list[Outcome], recovers: bool) -> str | None:
        """The refusal that ends the run on `tool_error`, if any outcome calls for it.

        A planner that does not recover stops at the first failure. One that does (a model)
        stops only when the same tool fails in two consecutive rounds: several failures inside
        one parallel round are one round, and a success of that tool in a round clears it.
        """
        failed: dict[str, str] = {}
        worked: set[str] = set()
        for outcome in outcomes:
            if outcome.failed:
                why = outcome.error or "it gave no reason"  # a ToolError("") ends no sentence on ": "
                if not recovers:
                    return f"{outcome.call.tool} refused: {why}"
                failed[outcome.call.tool] = why
            elif outcome.ran:
                worked.add(outcome.call.tool)
        failing = {tool: error for tool, error in failed.items() if tool not in worked}
        again = next((tool for tool in failing if tool in self.failing), None)
        self.failing = set(failing)
        if again is not None:
            return f"{again} failed twice in a row, in two consecutive rounds: {failing[again]}"
        return None


def _calls(n: int) -> str:
    return plural(n, "call")
