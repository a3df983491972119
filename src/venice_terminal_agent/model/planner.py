"""The LLM planner: the model proposes the next move, the deterministic loop decides.

It plugs into `run_loop` through the Planner seam. Each `next(outcomes)` first answers the
previous assistant turn's tool calls (one `tool` message per call, in order: results,
errors as `{"error": ...}` so the model can recover, a call without a yes said as it was:
declined, or nobody to ask), then asks the model once. The assistant message goes into the conversation exactly as received.

Money: each request is counted and costed on the question's `Ledger` (ledger.py: what was spent,
what stayed unknown and its worst case, the cap's arithmetic), which says before each request
whether it may be made under the cap (`cost_cap`), the output limit it is sent with and the most
it can cost. A server that names the model's output maximum when a limit is above it is asked
once more with it (`complete`). An answer cut at the output limit (`length`) ends
`output_limit`, partial. When the loop stops
on `budget`, `max_rounds` or `repeated_call`, `conclude` makes one last request without tools
so the person gets a partial answer from what was gathered and paid for.

Context: with a `Gauge`, each request's size is estimated before it is made. When it would
pass the gauge's threshold, the older rounds are compacted first (`compaction.py`: its
`Compactor` asks the planner for the summary request, `summarise`, made on the question's
account). A request that still cannot fit is not made (`context_full`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..core import observe
from ..core.context import Compaction, Gauge, full_refusal, request_bytes
from ..core.costs import Cap, cached_tokens
from ..core.errors import ContextFullError, ModelError, OutputMaximumError, PrivateError, Refused
from ..core.events import Event, EventSink, Notice, ignore
from ..core.loop import Move, Outcome, Stop
from ..core.receipt import Answer, Call, CallOutcome, Exit, Proposed, Tally, read_json
from ..core.toolbox import ToolSpec
from ..core.wording import plural
from .compaction import Compactor
from .ledger import Ledger
from .models import ModelFacts, balance
from .report import Report
from .stream import Completion

if TYPE_CHECKING:  # cryptography: only for a model used encrypted
    from .private import E2EE

NOT_RUN = "this call did not run (the run stopped before it)"
CUT_CALL = "not run: the answer was cut at the output limit"  # a call the output limit cut
LAST_CALL = "not run: the last request, for an answer, offers no tools"  # a call proposed in it
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
        response_format: dict[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        private: E2EE | None = None,
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
        gauge: Gauge | None = None,
        compact: bool = True,
        tally: Tally | None = None,
        cache_key: str | None = None,
        schema: dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        search_usd: float = 0.0,
        private: E2EE | None = None,
    ) -> None:
        """`private`: the model is used end-to-end encrypted; every request of this planner's
        (the question's, a summary's, a server's sampling) goes sealed (`VeniceClient.complete`)."""
        self.client = client
        self.private = private
        self.gauge = gauge or Gauge()
        self.compacts = compact  # compact the older rounds when a request would pass the threshold
        self.tally = tally  # the question's rounds: a compaction is one of them
        self.cache_key = cache_key  # sent as `prompt_cache_key` by a client that takes it
        self.compactor = Compactor(self)
        self.added: list[dict[str, Any]] = []  # the messages this planner added, as they were
        self.context_tokens: int | None = None  # the last request's input tokens (server's, else estimated)
        # --schema: the answer must match it (checked here, asked again once); `response_format`
        # carries it in each request when the model takes one.
        self.schema = schema
        self.response_format = response_format
        self.parsed: Any = None
        # Request fields of the question's own (web search, reasoning), checked before (options.py).
        self.options = options or {}
        self.thinking: list[str] = []  # each response's thinking, apart from the answers
        self.sources: dict[str, dict[str, str]] = {}  # web search results by URL, in order
        # Asked before each model request: new specs when the tools changed meanwhile, else None.
        self.refresh = refresh
        self.messages = messages
        self.tools = [spec.openai_function() for spec in specs]
        self.model = model
        self.temperature = temperature
        self.events = events
        # What the requests spent and may spend (ledger.py).
        self.ledger = Ledger(model, facts or ModelFacts(), cap, max_completion_tokens, search_usd)
        self.sent: int | None = None  # the output limit sent with the last request
        self.notes: list[str] = []  # how replies came, for the receipt (once each)
        self.served_by: str | None = None  # the model the server says answered
        self.headers: dict[str, str] = {}  # Venice's balance and deprecation headers, latest

    @property
    def compaction(self) -> Compaction:
        """What this question's compactions did, for the receipt."""
        return self.compactor.compaction

    @property
    def markers(self) -> list[dict[str, Any]]:
        """Where it compacted (`context.marker`), for the record."""
        return self.compactor.markers

    @property
    def balance(self) -> dict[str, str] | None:
        return balance(self.headers)

    def report(self) -> Report:
        """What this planner's requests came to, for the receipt and the session."""
        ledger = self.ledger
        return Report(
            requests=ledger.requests,
            model=self.served_by or self.model,
            usage=ledger.usage,
            cost_usd=ledger.cost,
            balance=self.balance,
            context_tokens=self.context_tokens,
            cached_tokens=cached_tokens(ledger.usage, ledger.unmeasured),
            compacted=self.compaction.to_dict(),
            parsed=self.parsed,
            unmeasured=ledger.unmeasured,
            unstreamed=ledger.unstreamed,
            notes=tuple(self.notes),
            thinking="\n\n".join(self.thinking) if self.thinking else None,
            sources=tuple(self.sources.values()),
            facts=ledger.facts,
            known_cost=ledger.known_cost,
            unknown_worst=ledger.unknown_worst,
            headers=dict(self.headers),
            added=tuple(self.added),
            markers=tuple(self.markers),
        )

    async def next(self, outcomes: Sequence[Outcome]) -> Move:
        self.answer_calls(outcomes)
        if self.refresh is not None and (specs := await self.refresh()) is not None:
            self.tools = [spec.openai_function() for spec in specs]
        move = await self.ask(self.tools)
        if self.schema is not None and isinstance(move, Answer):
            return await self.structured(move)
        return move

    async def structured(self, answer: Answer) -> Move:
        """`answer` when it matches the schema; else the model is told why and asked once
        more (without tools); a second mismatch ends the question `schema_mismatch`."""
        from ..core.events import Notice
        from .structured import ASKING_AGAIN, RETRY, check

        assert self.schema is not None
        parsed, problem = check(answer.text, self.schema)
        if problem is None:
            self.parsed = parsed
            return answer
        if self.events is not None:  # said between the two answers, so they are never one text
            self.events(Notice(ASKING_AGAIN.format(error=problem)))
        self.messages.append({"role": "user", "content": RETRY.format(error=problem)})
        again = await self.ask(())
        if not isinstance(again, Answer):
            return (
                again
                if isinstance(again, Stop)
                else Stop(
                    Exit.SCHEMA_MISMATCH,
                    "asked again for an answer that matches --schema, the model called tools",
                )
            )
        parsed, problem = check(again.text, self.schema)
        if problem is not None:
            return Stop(Exit.SCHEMA_MISMATCH, f"the answer did not match --schema, asked twice: {problem}")
        self.parsed = parsed
        return again

    async def conclude(self, outcomes: Sequence[Outcome], reason: str) -> Move | None:
        """One last request, without tools, for an answer from what was gathered.

        The note asking for it goes with this request only: the history keeps the question,
        the rounds (each call answered) and the answer. None when no request was made."""
        self.answer_calls(outcomes)
        note = {"role": "user", "content": CONCLUDE.format(reason=reason)}
        move = await self.ask((), note)
        if isinstance(move, list):
            # A server that proposed calls anyway: they cannot run, so they leave the turn
            # (an unanswered call would make the conversation malformed), and are on the
            # receipt as not run.
            last = self.messages[-1]
            del last["tool_calls"]
            last["content"] = last.get("content") or ""
            return Stop(Exit.ANSWERED, not_run_line(move), last["content"], unrun(move, LAST_CALL))
        if isinstance(move, Stop) and move.exit is Exit.COST_CAP:
            return None  # not made: the cap is kept even for the partial answer
        return move

    async def ask(self, tools: Sequence[dict[str, Any]], note: dict[str, Any] | None = None) -> Move:
        messages = [*self.messages, note] if note is not None else self.messages
        size = request_bytes(messages, tools)
        needed = self.gauge.estimate_bytes(size)
        why = ""
        if note is None and self.compacts and self.gauge.over_threshold(needed):
            why = await self.compactor.to_fit()
            messages = self.messages
            size = request_bytes(messages, tools)
            needed = self.gauge.estimate_bytes(size)
        if not self.gauge.fits(needed):
            self.context_tokens = needed
            return Stop(Exit.CONTEXT_FULL, full_refusal(needed, self.gauge.window or 0, why))
        # Under a cap, what is sent is measured once for the check, the limit and the worst cost.
        bound = self.ledger.bound(messages, tools)
        refusal = self.ledger.check_cap(messages, tools, bound=bound)
        if refusal is not None:
            return Stop(Exit.COST_CAP, refusal)
        limit, worst = self.ledger.terms(messages, tools, bound=bound)
        options: dict[str, Any] = {"temperature": self.temperature, "events": self.heard}
        options.update(self.cache_option())
        if self.response_format is not None:
            options["response_format"] = self.response_format
        if self.options:
            options["options"] = self.options
        purpose = "chat" if note is None else "conclude"
        try:
            request = self.complete(messages, tools, limit, **options)
            turn = await self.costed(worst, request, purpose, limit, messages, tools)
        except ContextFullError as error:  # the server's own "too long": not a model failure
            self.context_tokens = needed
            return Stop(Exit.CONTEXT_FULL, error.message)
        except ModelError as error:
            if isinstance(error, Refused):  # a shared cap, or a durable run's interrupted request
                exit = error.exit
            elif isinstance(error, PrivateError):
                exit = Exit.PRIVATE_FAILED
            elif error.status in (401, 403):  # a rejected key is the setup to fix, not the model failing
                exit = Exit.KEY_REJECTED
            else:
                exit = Exit.MODEL_ERROR
            return Stop(exit, error.message)
        self.gauge.measured(size, turn.usage.get("prompt_tokens"))
        prompt = turn.usage.get("prompt_tokens")
        self.context_tokens = prompt if isinstance(prompt, int) and prompt > 0 else needed
        self.messages.append(turn.message)
        self.added.append(turn.message)
        if turn.finish_reason == "length":
            return self.cut(turn, self.sent)
        if not turn.tool_calls:
            return Answer(turn.text)
        return [to_call(tool_call) for tool_call in turn.tool_calls]

    def heard(self, event: Event) -> None:
        """An event of the client's, passed on; what it says of how replies came (a server
        that cannot stream tool calls) goes on the receipt too, whether or not the request
        then succeeded."""
        if isinstance(event, Notice) and event.text not in self.notes:
            self.notes.append(event.text)
        (self.events or ignore)(event)

    def cache_option(self) -> dict[str, Any]:
        """`prompt_cache_key` for a client that sends it (`VeniceClient`): the server routes the
        conversation's requests to where its prefix is cached."""
        if self.cache_key is None or not getattr(self.client, "takes_cache_key", False):
            return {}
        return {"prompt_cache_key": self.cache_key}

    async def compact(self, focus: str | None = None) -> str | None:
        """Replace the older rounds with a summary (`/compact`): None when done; else why not,
        and the messages are as they were."""
        return await self.compactor.compact(focus)

    async def summarise(self, request: Sequence[dict[str, Any]]) -> Completion:
        """A compaction's summary request, without tools and nothing streamed, counted and
        costed like the others; `ModelError` when it fails."""
        limit, worst = self.ledger.terms(request, ())
        request_made = self.complete(request, (), limit, temperature=self.temperature, **self.cache_option())
        return await self.costed(worst, request_made, "summary", limit, request)

    async def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        limit: int | None,
        **options: Any,
    ) -> Completion:
        """One request of at most `limit` output tokens (none sent when None). A server that
        refuses the limit as above the model's maximum and names it (Venice's 400) is asked
        once more with that maximum, which can only cost less; the ledger's facts keep it, so
        the session's later requests send it at once. Nothing was generated by the refused
        request: it is neither a request nor a cost of its own."""
        self.sent = limit
        if self.private is not None:  # sealed; a client that cannot seal is never asked so
            options["private"] = self.private
        if limit is None:  # a client that takes no limit is asked for none
            return await self.client.complete(self.model, messages, tools, **options)
        try:
            return await self.client.complete(
                self.model, messages, tools, max_completion_tokens=limit, **options
            )
        except OutputMaximumError as error:
            if error.maximum >= limit:
                raise
            self.ledger.facts = self.ledger.facts.replace(max_completion_tokens=error.maximum)
            self.sent = limit = error.maximum
        return await self.client.complete(self.model, messages, tools, max_completion_tokens=limit, **options)

    async def costed(
        self,
        worst: float | None,
        request: Awaitable[Completion],
        purpose: str = "chat",
        limit: int | None = None,
        messages: Sequence[dict[str, Any]] = (),
        tools: Sequence[dict[str, Any]] = (),
    ) -> Completion:
        """`request`, one model request (the conversation's, a summary, a server's sampling;
        `purpose` says which) made on this question's account: counted, and costed at its
        price, or at most `worst` when it fails after the model may have begun (`unpaid`).
        Every request the receipt counts passes here, watched as it is counted (`observe`)."""
        ledger = self.ledger
        ledger.requests += 1
        with observe.request(self.model, purpose, limit, messages, tools) as watch:
            try:
                turn = await request
            except ModelError as error:
                watch.failed(error, ledger.unpaid(worst, error))
                raise
            except asyncio.CancelledError as error:
                watch.failed(error, ledger.unpaid(worst, None))
                raise
            cost = self.account(turn, worst)
            watch.answered(turn, cost, {"cap.usd_left": ledger.cap.left} if ledger.cap is not None else {})
        return turn

    def cut(self, turn: Completion, limit: int | None) -> Stop:
        """An answer the output limit (`limit`, the one sent) cut short (`finish_reason:
        length`): partial, said so. Calls it was proposing may be cut too, so none runs: each
        stays in the turn (its arguments `{}` when they were cut), answered `not run` (so the
        model hears of it when the conversation goes on), is named in the refusal and is on the
        receipt (`not_run`, why)."""
        refusal = self.ledger.cut_reason(turn, limit)
        calls = [to_call(tool_call) for tool_call in turn.tool_calls]
        for tool_call, call in zip(turn.tool_calls, calls, strict=True):
            if call.malformed is not None:
                # Arguments the limit cut mid-JSON go back as `{}`: a server that parses them
                # (llama-server) would refuse the whole conversation from then on (a 500).
                tool_call["function"]["arguments"] = "{}"
            self.answer(tool_call, json.dumps({"error": CUT_CALL}))
        if calls:
            refusal += f"; {not_run_line(calls)}"
        return Stop(Exit.OUTPUT_LIMIT, refusal, turn.text, unrun(calls, CUT_CALL))

    def account(self, turn: Completion, worst: float | None = None) -> float | None:
        """Add the response's usage and cost to the question's (`Ledger.charge`; `worst`: the
        most it could cost), its thinking, sources, model and headers. Its cost (None: unknown)."""
        cost = self.ledger.charge(turn, worst)
        if turn.thinking:
            self.thinking.append(turn.thinking)
        for found in turn.citations:
            if isinstance(found.get("url"), str) and found["url"] not in self.sources:
                self.sources[found["url"]] = {
                    key: str(found[key]) for key in ("title", "url", "date") if found.get(key)
                }
        self.served_by = turn.model or self.served_by
        self.headers.update(turn.headers)
        return cost

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
        limit, worst = self.ledger.terms(messages, tools, max_tokens)
        request = self.complete(messages, tools, limit, temperature=temperature)
        return await self.costed(worst, request, "sampling", limit, messages, tools)

    def sampling_refusal(
        self, messages: Sequence[dict[str, Any]], max_tokens: int, tools: Sequence[dict[str, Any]] = ()
    ) -> str | None:
        """Why a sampling request must not be made under the money cap, or None."""
        return self.ledger.check_cap(messages, tools, max_tokens)

    def answer_calls(self, outcomes: Sequence[Outcome]) -> None:
        """One `tool` message for each call of the last assistant turn, in its order."""
        last = self.messages[-1] if self.messages else {}
        calls = last.get("tool_calls") if last.get("role") == "assistant" else None
        if not calls:
            return
        by_id = {outcome.call.id: outcome for outcome in outcomes}
        for tool_call in calls:
            self.answer(tool_call, self.tool_content(by_id.get(tool_call["id"])))

    def answer(self, tool_call: dict[str, Any], content: str) -> None:
        """The `tool` message that answers `tool_call`, into the conversation."""
        message = {"role": "tool", "tool_call_id": tool_call["id"], "content": content}
        self.messages.append(message)
        self.added.append(message)

    def tool_content(self, outcome: Outcome | None) -> str:
        if outcome is None:
            return json.dumps({"error": NOT_RUN})
        if outcome.error is not None:
            return json.dumps({"error": outcome.error}, ensure_ascii=False)
        # Long results were already cut into pages by the loop's pager; cutting again here
        # would drop the note that tells the model which page ids hold the rest.
        result = outcome.result
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def not_run_line(calls: Sequence[Call]) -> str:
    """`2 proposed calls did not run (echo, charge)`."""
    return f"{plural(len(calls), 'proposed call')} did not run ({', '.join(call.tool for call in calls)})"


def unrun(calls: Sequence[Call], why: str) -> tuple[Proposed, ...]:
    """`calls` for the receipt, as proposed and not run, and why."""
    return tuple(Proposed(call.tool, call.arguments, CallOutcome.NOT_RUN, why) for call in calls)


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
