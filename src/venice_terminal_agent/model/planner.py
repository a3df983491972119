"""The LLM planner: the model proposes the next move, the deterministic loop decides.

It plugs into `run_loop` through the Planner seam. Each `next(outcomes)` first answers the
previous assistant turn's tool calls (one `tool` message per call, in order: results,
errors as `{"error": ...}` so the model can recover, declined calls said plainly), then asks
the model once. The assistant message goes into the conversation exactly as received.

Money: every response's usage is added up whole and costed (the server's figure, else the
prices from `/models`); with a cap, each request's worst cost is checked before it is made
(`cost_cap`). When the loop stops on `budget`, `max_rounds` or `repeated_call`, `conclude`
makes one last request without tools so the person gets a partial answer from what was
gathered and paid for.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from ..core.costs import Cap, add_usage, round_cost, server_cost
from ..core.events import EventSink
from ..core.loop import DECLINED, Move, Outcome, Stop
from ..core.receipt import Answer, Call, Exit, read_json
from ..core.toolbox import ToolSpec
from .errors import ModelError
from .models import ModelFacts, balance
from .stream import Completion

NOT_RUN = "this call did not run (the run stopped before it)"
CONCLUDE = (
    "(The run stopped before you finished: {reason}. No more tools can run for this question. "
    "Answer now from what you have gathered so far, and say plainly what is missing.)"
)


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
        max_completion_tokens: int | None = None,
        options: Any = None,
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
        facts: ModelFacts | None = None,
        cap: Cap | None = None,
        max_completion_tokens: int | None = None,
        options: dict[str, Any] | None = None,
        search_usd: float = 0.0,
    ) -> None:
        self.client = client
        # Request fields of the question's own (web search, reasoning), checked before (options.py).
        self.options = options or {}
        self.search_usd = search_usd  # the most a request's web search can add to its cost
        self.thinking: list[str] = []  # each response's thinking, apart from the answers
        self.sources: dict[str, dict[str, str]] = {}  # web search results by URL, in order
        # Asked before each model request: new specs when the tools changed meanwhile, else None.
        self.refresh = refresh
        self.messages = messages
        self.tools = [spec.openai_function() for spec in specs]
        self.model = model
        self.temperature = temperature
        self.events = events
        self.facts = facts or ModelFacts()
        self.cap = cap
        self.max_completion_tokens = max_completion_tokens  # sent with each request when set
        self.usage: dict[str, Any] = {}
        self.cost: float | None = 0.0  # None once a response's cost is unknown
        self.requests = 0
        self.served_by: str | None = None  # the model the server says answered
        self.headers: dict[str, str] = {}  # Venice's balance and deprecation headers, latest

    @property
    def balance(self) -> dict[str, str] | None:
        return balance(self.headers)

    async def next(self, outcomes: Sequence[Outcome]) -> Move:
        self.answer_calls(outcomes)
        if self.refresh is not None and (specs := await self.refresh()) is not None:
            self.tools = [spec.openai_function() for spec in specs]
        return await self.ask(self.tools)

    async def conclude(self, outcomes: Sequence[Outcome], reason: str) -> Move | None:
        """One last request, without tools, for an answer from what was gathered.

        The note asking for it goes with this request only: the history keeps the question,
        the rounds (each call answered) and the answer. None when no request was made."""
        self.answer_calls(outcomes)
        note = {"role": "user", "content": CONCLUDE.format(reason=reason)}
        move = await self.ask((), note)
        if isinstance(move, list):
            # A server that proposed calls anyway: they cannot run, so they leave the turn
            # (an unanswered call would make the conversation malformed).
            last = self.messages[-1]
            del last["tool_calls"]
            last["content"] = last.get("content") or ""
            return Answer(last["content"])
        if isinstance(move, Stop) and move.exit is Exit.COST_CAP:
            return None  # not made: the cap is kept even for the partial answer
        return move

    async def ask(self, tools: Sequence[dict[str, Any]], note: dict[str, Any] | None = None) -> Move:
        messages = [*self.messages, note] if note is not None else self.messages
        refusal = self.check_cap(messages, tools)
        if refusal is not None:
            return Stop(Exit.COST_CAP, refusal)
        self.requests += 1
        options: dict[str, Any] = {"temperature": self.temperature, "events": self.events}
        if self.max_completion_tokens is not None:
            options["max_completion_tokens"] = self.max_completion_tokens
        if self.options:
            options["options"] = self.options
        try:
            turn = await self.client.complete(self.model, messages, tools, **options)
        except ModelError as error:
            return Stop(Exit.MODEL_ERROR, error.message)
        self.account(turn)
        self.messages.append(turn.message)
        if not turn.tool_calls:
            return Answer(turn.text)
        return [to_call(tool_call) for tool_call in turn.tool_calls]

    def account(self, turn: Completion) -> None:
        """Add the response's usage and cost to the question's (a search that brought results
        costs its price when the server sent no cost of its own), its thinking and sources."""
        self.usage = add_usage(self.usage, turn.usage)
        cost = round_cost(turn.usage, self.facts.prices)
        if cost is not None and turn.citations and server_cost(turn.usage) is None:
            cost += self.search_usd
        if turn.thinking:
            self.thinking.append(turn.thinking)
        for found in turn.citations:
            if isinstance(found.get("url"), str) and found["url"] not in self.sources:
                self.sources[found["url"]] = {
                    key: str(found[key]) for key in ("title", "url", "date") if found.get(key)
                }
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        if self.cap is not None and cost is not None:
            self.cap.spent += cost
        self.served_by = turn.model or self.served_by
        self.headers.update(turn.headers)

    async def sample(
        self,
        messages: Sequence[dict[str, Any]],
        max_tokens: int,
        temperature: float | None,
        tools: Sequence[dict[str, Any]] = (),
    ) -> Completion:
        """A server's sampling request (`mcp/sampling_model.py`), made on this question's account: counted,
        costed and capped like the planner's own requests; only the server's `tools`, nothing
        streamed to the person, and the conversation is not touched. `ModelError` when it fails."""
        self.requests += 1
        limit = self.output_limit(max_tokens)
        turn = await self.client.complete(
            self.model, messages, tools, temperature=temperature, max_completion_tokens=limit
        )
        self.account(turn)
        return turn

    def sampling_refusal(
        self, messages: Sequence[dict[str, Any]], max_tokens: int, tools: Sequence[dict[str, Any]] = ()
    ) -> str | None:
        """Why a sampling request must not be made under the money cap, or None."""
        return self.check_cap(messages, tools, self.output_limit(max_tokens))

    def output_limit(self, asked: int | None = None) -> int | None:
        """The most output tokens a request may take: the settings' or model's limit, and `asked`."""
        limits = [self.max_completion_tokens or self.facts.max_completion_tokens, asked]
        return min((limit for limit in limits if limit is not None), default=None)

    def check_cap(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], limit: int | None = None
    ) -> str | None:
        """Why the next request (of at most `limit` output tokens) must not be made under the
        money cap, or None."""
        if self.cap is None:
            return None
        prices = self.facts.prices
        limit = self.output_limit() if limit is None else limit
        if prices is None or limit is None:  # refused up front as a setting error; a safety net
            return f"stopped before model request {self.requests + 1}: no price or output limit is known for {self.model}"
        worst = prices.worst(self.input_bound(messages, tools), limit) + self.search_usd
        return self.cap.refuse(worst, self.requests + 1)

    @staticmethod
    def input_bound(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
        """At least as many input tokens as the request can have: a token is at least one byte
        of what is sent, and the JSON around each message outweighs a template's few tokens."""
        return len(json.dumps([*messages, *tools], ensure_ascii=False, default=str).encode("utf-8"))

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
        arguments = read_json(raw)
    except ValueError as error:
        return Call(
            name, {}, id=tool_call["id"], malformed=f"the arguments are not valid JSON ({error}): {raw[:200]}"
        )
    if not isinstance(arguments, dict):
        return Call(
            name, {}, id=tool_call["id"], malformed=f"the arguments must be a JSON object, not {raw[:200]}"
        )
    return Call(name, arguments, id=tool_call["id"])
