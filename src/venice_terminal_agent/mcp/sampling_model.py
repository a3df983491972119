"""A server asks our model a question (MCP sampling), on the account of the question running.

`tools/mcp_sampling.py` turns a server's `sampling/createMessage` into a `SamplingRequest` and
hands it to the session's `SamplingDesk`, which passes it to the question running now
(`Agent.ask` serves a `QuestionSampling` for the length of its run). There, in this order:

1. the round limit: a sampling request is a round of the question; with no round left before
   the one kept for the partial answer, it is refused;
2. money: its worst cost (what it sends and its token limit, at the model's prices) must fit
   what is left of the question's cap, as for the planner's own requests;
3. consent: a person's yes (`Consent.approve_sampling`, shown the server, a preview and the
   token limit); nobody there (no terminal, the bot, `--yes`) is a no.

The limits are checked before the person is asked (nobody is asked about a request that would
be refused) and again after (another request may have spent the room meanwhile). Then the
configured model is asked through the question's planner, so the request's usage and cost are
the question's and show in its receipt. A refusal is `Refused`, which the server receives as
an MCP error and the person sees as a notice. A sampling request is not a tool call.

A request may carry the server's own tools. The calls the model proposes with them are calls of
the question (the server runs them): they must fit what is left of its call budget, and each
needs a yes like any call to a tool nobody described (`Consent.approve` with the server's tool
as `spec`); one no refuses the whole answer. Approved calls go back to the server, which runs
them and sends their results in its next sampling request, another round of the question.

Pure, like the loop: no MCP, no terminal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.errors import ModelError
from ..core.events import EventSink, Notice, ignore
from ..core.receipt import Call, Tally
from ..core.toolbox import ToolSpec
from ..core.wording import plural
from ..model.planner import to_call

if TYPE_CHECKING:
    from ..core.consent import Consent
    from ..model.planner import LLMPlanner

PREVIEW_CHARS = 400
NO_QUESTION = "no question is running, so there is nothing to count the request against"


class Refused(Exception):
    """A sampling request that is not made; `reason` goes to the server."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class SamplingRequest:
    """What a server asks, in the model's terms: chat messages, the server's system prompt first."""

    server: str
    messages: tuple[dict[str, Any], ...]
    max_tokens: int
    temperature: float | None = None
    tools: tuple[dict[str, Any], ...] = ()  # the server's tools, as OpenAI function entries

    def preview(self) -> str:
        text = " | ".join(f"{message['role']}: {message.get('content') or ''}" for message in self.messages)
        if self.tools:
            text += " | tools: " + ", ".join(tool["function"]["name"] for tool in self.tools)
        return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"

    def shown(self) -> Call:
        """The request as consent shows it and as the consent events carry it."""
        arguments = {"server": self.server, "max_tokens": self.max_tokens, "request": self.preview()}
        return Call("sampling", arguments)


@dataclass(frozen=True)
class Sampled:
    text: str
    model: str
    stop_reason: str  # MCP's words: "endTurn", "maxTokens", "toolUse"
    calls: tuple[Call, ...] = ()  # approved calls of the server's tools, for it to run


Sampler = Callable[[SamplingRequest], Awaitable[Sampled]]


class SamplingDesk:
    """Where a session's sampling requests go: to the question running now, if any.

    One question at a time: the terminal commands (`ask`, `chat`) run one at a time, and the
    desk is only set up where a person can answer (not for `serve` or the bot)."""

    def __init__(self) -> None:
        self.question: Sampler | None = None

    @contextmanager
    def serving(self, question: Sampler) -> Iterator[None]:
        before, self.question = self.question, question
        try:
            yield
        finally:
            self.question = before

    async def sample(self, request: SamplingRequest) -> Sampled:
        if self.question is None:
            raise Refused(f"{request.server}'s sampling request was declined: {NO_QUESTION}")
        return await self.question(request)


class QuestionSampling:
    """A question's account for the sampling requests made during its run (see the module)."""

    def __init__(self, planner: LLMPlanner, tally: Tally, consent: Consent, events: EventSink | None) -> None:
        self.planner, self.tally, self.consent = planner, tally, consent
        self.events = events or ignore

    async def __call__(self, request: SamplingRequest) -> Sampled:
        self.check(request)
        if not await self.consent.approve_sampling(request.shown(), request.server, events=self.events):
            raise Refused(f"{request.server}'s sampling request was declined by the user")
        self.check(request)
        self.tally.rounds += 1  # checked just above: a round is left
        try:
            turn = await self.planner.sample(
                request.messages, request.max_tokens, request.temperature, request.tools
            )
        except ModelError as error:
            raise self.refused(request, f"the model failed: {error.message}") from None
        model = turn.model or self.planner.model
        if not turn.tool_calls:
            return Sampled(turn.text, model, "maxTokens" if turn.finish_reason == "length" else "endTurn")
        return Sampled(turn.text, model, "toolUse", await self.approve_calls(request, turn.tool_calls))

    async def approve_calls(
        self, request: SamplingRequest, proposed: list[dict[str, Any]]
    ) -> tuple[Call, ...]:
        """The calls of the server's tools the model proposed, each approved, counted as calls of
        the question (the server runs them); `Refused` on a no or past the call budget."""
        calls = tuple(to_call(tool_call) for tool_call in proposed)
        self.check_calls(request, len(calls))
        for call in calls:
            if call.malformed is not None:
                raise self.refused(
                    request, f"the model's call to {call.tool} is malformed ({call.malformed})"
                )
            spec = ToolSpec(call.tool, server=request.server)
            if not await self.consent.approve(call, events=self.events, spec=spec):
                raise self.refused(request, f"the model's call to {call.tool} was declined by the user")
        self.check_calls(request, len(calls))
        self.tally.calls += len(calls)
        return calls

    def check_calls(self, request: SamplingRequest, count: int) -> None:
        budget, spent = self.tally.budget, self.tally.calls
        if budget is not None and spent + count > budget:
            left = plural(max(0, budget - spent), "call")
            raise self.refused(
                request,
                f"the model proposed {plural(count, 'call')} and {left} of the question's budget is left",
            )

    def check(self, request: SamplingRequest) -> None:
        if self.tally.full():
            raise self.refused(request, f"the question is at its round limit ({self.tally.max_rounds})")
        problem = self.planner.sampling_refusal(request.messages, request.max_tokens, request.tools)
        if problem is not None:
            raise self.refused(request, f"it could pass the question's money cap ({problem})")

    def refused(self, request: SamplingRequest, why: str) -> Refused:
        reason = f"{request.server}'s sampling request was declined: {why}"
        self.events(Notice(reason))
        return Refused(reason)
