"""One question as a DBOS workflow: the agent's loop replays, its model requests and tool calls
are steps, and each step goes out only behind an intent recorded with its reservation.

DBOS runs a step at least once: a step in flight when its worker died runs again on recovery,
and a paid call would be paid twice. So every step first asks the ledger (`ledger.reserve`, one
transaction): new, it is recorded with its worst cost reserved and sent; recorded before and
never settled, it is not sent again and ends the question `interrupted` (so does a step cut by
Ctrl+C: it is left recorded and unsettled, as it may have gone out); settled before (the
worker died between the settlement and DBOS's checkpoint), its kept result comes back. The
loop itself is untouched: the agent gets a model client and a toolbox that do this
(`LedgerModel`, `LedgerToolbox`), and a refusal reaches the planner as `Refused` with its exit.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from dbos import DBOS

from ...core.errors import (
    ContextFullError,
    ModelError,
    OutputMaximumError,
    PaymentError,
    PrivateError,
    Refused,
    ToolError,
)
from ...core.events import EventSink, ignore
from ...core.exits import Exit
from ...core.record import Record
from ...model.spending import Spending, input_bound
from ...model.stream import Completion
from . import crash
from .ledger import Ledger, Reservation, nusd, usd

WORKFLOW = "venice_agent.batch.question"


class Stopping(Record, frozen=False):
    """Why a question must stop, found by a step (the shared cap, an interrupted call); the
    next model request is refused with it, and the receipt ends on it."""

    exit: Exit | None = None
    refusal: str | None = None

    def set(self, exit: Exit, refusal: str) -> None:
        if self.exit is None or exit is Exit.INTERRUPTED:  # interrupted says the most
            self.exit, self.refusal = exit, refusal


class Account(Record):
    """Where a question's steps are recorded."""

    ledger: Ledger
    batch_id: str
    workflow_id: str
    stopping: Stopping

    async def reserve(self, kind: str, what: str, worst: int) -> Reservation:
        step = DBOS.step_id
        assert step is not None
        return await asyncio.to_thread(
            self.ledger.reserve, self.batch_id, self.workflow_id, step, kind, what, worst
        )

    async def settle(self, charged: int, result: Any) -> None:
        step = DBOS.step_id
        assert step is not None
        await asyncio.to_thread(self.ledger.settle, self.batch_id, self.workflow_id, step, charged, result)


def refusal(found: Reservation, kind: str, what: str) -> dict[str, Any]:
    """A step's answer when it did not go out: the batch's cap, or interrupted."""
    if found.kind == "cap":
        return {
            "refused": Exit.COST_CAP.value,
            "message": (
                f"stopped before the {kind} ({what}): it could cost up to ${usd(found.reserved):.6f} and "
                f"${usd(found.left):.6f} of the batch's ${usd(found.cap or 0):.6f} cap is left "
                "(the other questions hold the rest)"
            ),
        }
    return {
        "refused": Exit.INTERRUPTED.value,
        "message": (
            f"the {kind} ({what}) was in flight when its worker stopped: it may have reached the "
            f"server, so it was not sent again, and its ${usd(found.reserved):.6f} reservation is charged"
        ),
    }


class LedgerModel:
    """A model client (`ChatModel`) whose every request is a DBOS step behind the ledger."""

    def __init__(self, inner: Any, account: Account, facts: Any, search_usd: float = 0.0) -> None:
        self.inner, self.account = inner, account
        # The planner's own money rules (model/spending.py): the same worst case and the same cost.
        self.spending = Spending(facts.prices if facts is not None else None, search_usd=search_usd)

    def __getattr__(self, name: str) -> Any:  # takes_cache_key, venice_parameters, private…
        return getattr(self.inner, name)

    def worst(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], limit: int | None
    ) -> int:
        """The request's worst cost, as the planner counts it against a cap; 0 when it cannot
        be known (no prices or no output limit: then no cap is set either)."""
        if self.spending.prices is None or limit is None:
            return 0
        worst = self.spending.worst(input_bound(messages, tools), limit)
        return 0 if worst is None else nusd(worst)

    def cost(self, turn: Completion) -> float | None:
        return self.spending.cost(turn.usage, searched=bool(turn.citations))

    async def complete(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        *,
        events: EventSink | None = None,
        max_completion_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        stopping = self.account.stopping
        if stopping.exit is not None:
            raise Refused(stopping.refusal or "", exit=stopping.exit)
        worst = self.worst(messages, tools, max_completion_tokens)
        heard = events or ignore

        def streamed(event: Any) -> None:
            crash.point("stream")
            heard(event)

        async def request() -> dict[str, Any]:
            found = await self.account.reserve("model", model, worst)
            if found.kind == "settled":
                return found.result  # type: ignore[no-any-return]
            if found.kind != "new":
                return refusal(found, "model request", model)
            try:
                turn = await self.inner.complete(
                    model,
                    messages,
                    tools,
                    events=streamed,
                    max_completion_tokens=max_completion_tokens,
                    **options,
                )
            except ModelError as error:
                # Refused outright (an HTTP status): nothing was generated; else it may have begun.
                charged = 0 if error.status is not None else worst
                result = {"error": error_data(error)}
                await self.account.settle(charged, result)
                return result
            cost = self.cost(turn)
            result = {"completion": completion_data(turn)}
            await self.account.settle(worst if cost is None else nusd(cost), result)
            return result

        result = await DBOS.run_step_async({"name": "model.request"}, request)
        crash.point("between")
        if "refused" in result:
            exit = Exit(result["refused"])
            stopping.set(exit, result["message"])
            raise Refused(result["message"], exit=exit)
        if "error" in result:
            raise model_error(result["error"])
        return Completion(**result["completion"])


class LedgerToolbox:
    """A toolbox whose every call is a DBOS step behind the ledger; `call_usd` is reserved and
    charged for each (the most a call may cost; 0: tools are not priced)."""

    def __init__(self, inner: Any, account: Account, call_usd: float = 0.0) -> None:
        self.inner, self.account, self.price = inner, account, nusd(call_usd)

    def __contains__(self, name: object) -> bool:
        return name in self.inner

    def __getattr__(self, name: str) -> Any:  # specs, refresh, settle, servers…
        return getattr(self.inner, name)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        stopping = self.account.stopping
        if stopping.exit is not None:
            raise ToolError(f"{name} did not run: {stopping.refusal}")

        async def run() -> dict[str, Any]:
            found = await self.account.reserve("tool", name, self.price)
            if found.kind == "settled":
                return found.result  # type: ignore[no-any-return]
            if found.kind != "new":
                return refusal(found, "tool call", name)
            try:
                value = await self.inner.call(name, arguments)
                result: dict[str, Any] = {"result": json.loads(json.dumps(value, default=str))}
            except ToolError as error:
                result = {"tool_error": error.message}
            except Exception as error:
                result = {"tool_error": f"{type(error).__name__}: {error}"}
            crash.point("tool")  # it reached the server; its result is not settled yet
            await self.account.settle(self.price, result)
            return result

        result = await DBOS.run_step_async({"name": "tool.call"}, run)
        crash.point("between")
        if "refused" in result:
            stopping.set(Exit(result["refused"]), result["message"])
            raise ToolError(f"{name} did not run: {result['message']}")
        if "tool_error" in result:
            raise ToolError(result["tool_error"])
        return result["result"]


def completion_data(turn: Completion) -> dict[str, Any]:
    """A completion as plain data (a step's output, and the ledger's)."""
    fields = ("message", "finish_reason", "usage", "model", "headers", "streamed", "thought", "citations")
    return json.loads(json.dumps({name: getattr(turn, name) for name in fields}, default=str))


ERRORS: dict[str, type[ModelError]] = {
    cls.__name__: cls
    for cls in (ModelError, ContextFullError, OutputMaximumError, PaymentError, PrivateError)
}


def error_data(error: ModelError) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": type(error).__name__, "message": error.message, "status": error.status}
    if isinstance(error, OutputMaximumError):
        data["maximum"] = error.maximum
    if isinstance(error, PaymentError):
        data["code"] = error.code
    return data


def model_error(data: dict[str, Any]) -> ModelError:
    """The error a step recorded, as it was raised."""
    kind, message, status = data.get("kind"), data.get("message", ""), data.get("status")
    if kind == "OutputMaximumError":
        return OutputMaximumError(message, maximum=int(data["maximum"]), status=status)
    if kind == "PaymentError":
        return PaymentError(message, code=data.get("code"))
    cls = ERRORS.get(str(kind), ModelError)
    return cls(message, status=status)


# The worker of this process (`run.py` sets it before DBOS launches): the runtime the workflows share.
WORKER: Any = None


@DBOS.workflow(name=WORKFLOW)
async def answer_question(batch_id: str, line: dict[str, Any]) -> dict[str, Any]:
    """One question to its receipt (kept in the ledger, and returned)."""
    assert WORKER is not None, "the batch worker is set before DBOS launches"
    return await WORKER.answer(batch_id, line)  # type: ignore[no-any-return]
