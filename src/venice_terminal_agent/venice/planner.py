"""The LLM planner: the model proposes the next move, the deterministic loop decides.

It plugs into `run_loop` through the Planner seam. Each `next(outcomes)` first answers the
previous assistant turn's tool calls (one `tool` message per call, in order: results,
errors as `{"error": ...}` so the model can recover, declined calls said plainly), then asks
the model once. The assistant message goes into the conversation exactly as received.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from ..events import EventSink
from ..loop import DECLINED, Move, Outcome, Stop
from ..receipt import Answer, Call, Exit
from ..tools.base import ToolSpec
from .errors import ModelError
from .stream import Completion

NOT_RUN = "this call did not run (the run stopped before it)"


class ChatModel(Protocol):
    """What the planner needs from a client (`VeniceClient` is one)."""

    async def complete(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        events: EventSink | None = None,
    ) -> Completion: ...


class LLMPlanner:
    """Plans one question; `messages` is the working conversation it appends to."""

    recovers = True  # tool errors go back to the model; the loop ends on the second in a row

    def __init__(
        self,
        client: ChatModel,
        messages: list[dict[str, Any]],
        specs: Sequence[ToolSpec],
        *,
        model: str,
        temperature: float | None = None,
        events: EventSink | None = None,
        refresh: Callable[[], Awaitable[Sequence[ToolSpec] | None]] | None = None,
    ) -> None:
        self.client = client
        # Asked before each model request: new specs when the tools changed meanwhile, else None.
        self.refresh = refresh
        self.messages = messages
        self.tools = [spec.openai_function() for spec in specs]
        self.model = model
        self.temperature = temperature
        self.events = events
        self.usage: dict[str, int] = {}
        self.served_by: str | None = None  # the model the server says answered

    async def next(self, outcomes: Sequence[Outcome]) -> Move:
        self.answer_calls(outcomes)
        if self.refresh is not None and (specs := await self.refresh()) is not None:
            self.tools = [spec.openai_function() for spec in specs]
        try:
            turn = await self.client.complete(
                self.model, self.messages, self.tools, temperature=self.temperature, events=self.events
            )
        except ModelError as error:
            return Stop(Exit.MODEL_ERROR, error.message)
        for key, value in turn.usage.items():
            self.usage[key] = self.usage.get(key, 0) + value
        self.served_by = turn.model or self.served_by
        self.messages.append(turn.message)
        if not turn.tool_calls:
            return Answer(turn.text)
        return [to_call(tool_call) for tool_call in turn.tool_calls]

    def answer_calls(self, outcomes: Sequence[Outcome]) -> None:
        """One `tool` message for each call of the last assistant turn, in its order."""
        last = self.messages[-1] if self.messages else {}
        calls = last.get("tool_calls") if last.get("role") == "assistant" else None
        if not calls:
            return
        by_id = {outcome.call.id: outcome for outcome in outcomes}
        for tool_call in calls:
            outcome = by_id.get(tool_call["id"])
            self.messages.append(
                {"role": "tool", "tool_call_id": tool_call["id"], "content": self.tool_content(outcome)}
            )

    def tool_content(self, outcome: Outcome | None) -> str:
        if outcome is None:
            return json.dumps({"error": NOT_RUN})
        if outcome.declined:
            return json.dumps({"error": DECLINED})
        if outcome.error is not None:
            return json.dumps({"error": outcome.error}, ensure_ascii=False)
        # Long results were already cut into pages by the loop's pager; cutting again here
        # would drop the note that tells the model which page ids hold the rest.
        result = outcome.result
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def to_call(tool_call: dict[str, Any]) -> Call:
    """A proposed tool call as a loop `Call`; arguments that are not a JSON object make it
    malformed, and the loop hands the reason back to the model instead of running it."""
    function = tool_call.get("function") or {}
    name = function.get("name") or "(unnamed)"
    raw = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw)
    except ValueError as error:
        return Call(
            name, {}, id=tool_call["id"], malformed=f"the arguments are not valid JSON ({error}): {raw[:200]}"
        )
    if not isinstance(arguments, dict):
        return Call(
            name, {}, id=tool_call["id"], malformed=f"the arguments must be a JSON object, not {raw[:200]}"
        )
    return Call(name, arguments, id=tool_call["id"])
