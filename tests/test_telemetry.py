"""Traces are receipts: the agent against the scripted fake Venice, watched by the OpenTelemetry
watcher (telemetry/watcher.py) into the SDK's in-memory exporter and metric reader. For every
exit: one `invoke_agent` span, a `chat` span per request the receipt counts, an `execute_tool`
span per call that ran, and the spans' tokens and costs add up to the receipt's exactly."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from test_agent import calls, no_wait, toolbox
from venice_terminal_agent import Exit
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core import observe
from venice_terminal_agent.core.costs import Prices
from venice_terminal_agent.core.errors import Refused
from venice_terminal_agent.core.events import TextDelta
from venice_terminal_agent.core.loop import run_loop
from venice_terminal_agent.core.receipt import Call, CallOutcome, Receipt
from venice_terminal_agent.model import RetryPolicy, VeniceClient
from venice_terminal_agent.model.models import ModelFacts
from venice_terminal_agent.telemetry.watcher import OtelWatcher
from venice_terminal_agent.testing import MockVenice

SECRET = "sk-very-secret-0042"
PRICES = {"pricing": {"input": {"usd": 1.0}, "output": {"usd": 2.0}}}


@dataclass
class Traced:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def named(self, prefix: str) -> list[Any]:
        return sorted(
            (span for span in self.spans.get_finished_spans() if span.name.startswith(prefix)),
            key=lambda span: span.start_time,
        )

    def points(self, name: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        return [
            point
            for resource in (data.resource_metrics if data else ())
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]


def watch(content: bool = False) -> tuple[Traced, OtelWatcher]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    watcher = OtelWatcher(
        tracer_provider, MeterProvider(metric_readers=[reader]), content=content, secrets=(SECRET,)
    )
    return Traced(spans, reader), watcher


@pytest.fixture
def traced():
    seen, watcher = watch()
    previous = observe.install(watcher)
    yield seen
    observe.install(previous)


def used(
    prompt: int, completion: int, *, cached: int = 0, reasoning: int = 0, cost: float | None = None
) -> dict:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }
    if cost is not None:
        usage["cost"] = {"usd": cost}
    return usage


@asynccontextmanager
async def agent_on(script: Any, tools: Any = None, **options: Any):
    if isinstance(script, list):
        script = {"replies": script}
    script = {**script, "model_spec": {**PRICES, **script.get("model_spec", {})}}
    async with MockVenice(script) as fake:
        policy = RetryPolicy(sleep=no_wait, jitter=lambda: 0.5)
        async with VeniceClient(
            SECRET, fake.base_url, retry=policy, http_client=fake.http_client()
        ) as client:
            facts = await client.discovery.model_facts("fake-model")
            yield (
                fake,
                Agent(client, tools or toolbox(), AgentOptions(model="fake-model", facts=facts, **options)),
            )


async def cancelled_question(agent: Agent) -> Receipt:
    streaming = asyncio.Event()
    task = asyncio.create_task(
        agent.ask("slow", events=lambda event: streaming.set() if isinstance(event, TextDelta) else None)
    )
    await streaming.wait()
    task.cancel()
    return await task


ECHO_A, ECHO_B = ("echo", {"text": "a"}), ("echo", {"text": "b"})
# Each exit: the script, the agent's options, and how the question is asked.
SCENARIOS: dict[Exit, tuple[Any, dict[str, Any]]] = {
    Exit.ANSWERED: (
        [
            {**calls(ECHO_A, ("charge", {"amount": 3})), "usage": used(30, 12, cached=10, reasoning=5)},
            {"text": "done", "usage": used(50, 8, cached=20, cost=0.00042)},
        ],
        {},
    ),
    Exit.REPEATED_CALL: (
        [
            {**calls(ECHO_A), "usage": used(30, 5)},
            {**calls(ECHO_A), "usage": used(40, 5)},
            {"text": "partial", "usage": used(60, 7, reasoning=3)},
        ],
        {},
    ),
    Exit.BUDGET: (
        [{**calls(ECHO_A, ECHO_B), "usage": used(30, 9)}, {"text": "from a", "usage": used(44, 6)}],
        {"budget": 1},
    ),
    Exit.TOOL_ERROR: (
        [
            {**calls(("fail", {"reason": "x"})), "usage": used(30, 5)},
            {**calls(("fail", {"reason": "y"})), "usage": used(35, 5)},
        ],
        {},
    ),
    Exit.MAX_ROUNDS: (
        [
            {**calls(ECHO_A), "usage": used(30, 5)},
            {**calls(ECHO_B), "usage": used(40, 5)},
            {"text": "what I have", "usage": used(55, 9, cost=0.0001)},
        ],
        {"max_rounds": 3},
    ),
    Exit.MODEL_ERROR: (
        [{**calls(ECHO_A), "usage": used(30, 5)}, {"status": 500, "headers": {"x-should-retry": "false"}}],
        {},
    ),
    Exit.CANCELLED: (
        [{**calls(ECHO_A), "usage": used(30, 5)}, {"text": "this never ends", "hang": True}],
        {},
    ),
    Exit.COST_CAP: ([{**calls(ECHO_A), "usage": used(3000, 5)}, {"text": "never sent"}], {"max_usd": 0.0035}),
    Exit.CONTEXT_FULL: ({"replies": [{"text": "never"}], "context_window": 50}, {}),
    Exit.OUTPUT_LIMIT: ([{"text": "cut sho", "finish_reason": "length", "usage": used(30, 16)}], {}),
    Exit.SCHEMA_MISMATCH: (
        [{"text": "not json", "usage": used(30, 3)}, {"text": "still not", "usage": used(40, 3)}],
        {"schema": {"type": "object"}},
    ),
    Exit.KEY_REJECTED: ([{"status": 401}], {}),
    Exit.PRIVATE_FAILED: ([], {"private_refusal": "it may be end-to-end encrypted and cannot be checked"}),
    # A batch's worker found its second request recorded as sent by a worker that died: the
    # first request and its call stay counted, the second is never sent (`InFlight`, below).
    Exit.INTERRUPTED: ([{**calls(ECHO_A, ("charge", {"amount": 2})), "usage": used(30, 5)}], {}),
}


class InFlight:
    """The model client as a batch's ledger wraps it (fronts/batch): after `sent` requests, the
    next is refused as found in flight after a crash."""

    def __init__(self, client: Any, sent: int) -> None:
        self.client, self.sent = client, sent

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        if self.sent == 0:
            raise Refused("recorded as sent by a worker that died", exit=Exit.INTERRUPTED)
        self.sent -= 1
        return await self.client.complete(*args, **kwargs)


async def ask(exit: Exit) -> tuple[Any, Agent, Receipt]:
    script, options = SCENARIOS[exit]
    async with agent_on(script, **options) as (fake, agent):
        if exit is Exit.CANCELLED:
            return fake, agent, await cancelled_question(agent)
        if exit is Exit.INTERRUPTED:
            agent.client = InFlight(agent.client, sent=1)
        return fake, agent, await agent.ask("go", budget=options.get("budget"))


def total(spans: list[Any], key: str) -> int:
    return sum(span.attributes.get(key, 0) for span in spans)


def detail(usage: dict, group: str, key: str) -> int:
    return (usage.get(group) or {}).get(key, 0)


@pytest.mark.parametrize("exit", list(Exit))
async def test_the_spans_add_up_to_the_receipt_for_every_exit(traced: Traced, exit: Exit) -> None:
    fake, agent, receipt = await ask(exit)
    assert receipt.stopped_because is exit
    [question] = traced.named("invoke_agent")
    chats, tools = traced.named("chat "), traced.named("execute_tool ")
    # Parents: every request and call of the question is under its span, in one trace.
    for span in (*chats, *tools):
        assert span.parent is not None and span.parent.span_id == question.context.span_id
        assert span.context.trace_id == question.context.trace_id
    sent = chats
    if exit is Exit.INTERRUPTED:  # the request the ledger would not send: a span of its own, an error
        *sent, refused = chats
        assert (
            refused.attributes["error.type"] == "interrupted"
            and refused.status.status_code is StatusCode.ERROR
        )
        assert refused.attributes["venice_agent.cost.unknown"]  # it may have been paid before the crash
        assert not any(key.startswith("gen_ai.usage.") for key in refused.attributes)
    # One chat span per request the receipt counts; one tool span per call that ran.
    assert len(sent) == len(fake.chat_requests)
    assert [span.attributes["gen_ai.tool.name"] for span in tools] == [step.tool for step in receipt.steps]
    usage = receipt.usage or {}
    assert total(chats, "gen_ai.usage.input_tokens") == usage.get("prompt_tokens", 0)
    assert total(chats, "gen_ai.usage.output_tokens") == usage.get("completion_tokens", 0)
    assert total(chats, "gen_ai.usage.cache_read.input_tokens") == detail(
        usage, "prompt_tokens_details", "cached_tokens"
    )
    assert total(chats, "gen_ai.usage.reasoning.output_tokens") == detail(
        usage, "completion_tokens_details", "reasoning_tokens"
    )
    if receipt.cost_usd is None:
        assert any(span.attributes.get("venice_agent.cost.unknown") for span in chats)
    else:
        spent = 0.0
        for span in chats:  # in request order, as the planner added them up
            spent += span.attributes["gen_ai.usage.cost.amount"]
        assert spent == receipt.cost_usd
        assert all(span.attributes["gen_ai.usage.cost.currency"] == "USD" for span in chats)
    # The question's span: its exit, and an error when it is not `answered`.
    assert question.attributes["venice_agent.stop_reason"] == str(exit)
    if exit is Exit.ANSWERED:
        assert question.status.status_code is StatusCode.UNSET and "error.type" not in question.attributes
    else:
        assert question.status.status_code is StatusCode.ERROR
        assert question.attributes["error.type"] == str(exit)
    # Calls that did not run are on the question's span, with why.
    not_run = [event for event in question.events if event.name == "venice_agent.call.not_run"]
    proposed = [item for item in receipt.proposed if item.outcome is not CallOutcome.RAN]
    assert [
        (e.attributes["gen_ai.tool.name"], e.attributes["venice_agent.call.outcome"]) for e in not_run
    ] == [(item.tool, str(item.outcome)) for item in proposed]
    # The metrics say the same: token usage and cost.
    tokens = traced.points("gen_ai.client.token.usage")
    inputs = sum(p.sum for p in tokens if p.attributes["gen_ai.token.type"] == "input")
    assert inputs == usage.get("prompt_tokens", 0)
    cost_points = traced.points("venice_agent.cost")
    assert sum(p.value for p in cost_points) == pytest.approx(agent.spent)
    durations = traced.points("gen_ai.client.operation.duration")
    chat_count = sum(p.count for p in durations if p.attributes["gen_ai.operation.name"] == "chat")
    assert chat_count == len(chats)


async def test_a_chat_span_carries_the_conventions_attributes_and_the_provider_cost(traced: Traced) -> None:
    fake, _, _receipt = await ask(Exit.ANSWERED)
    first, second = traced.named("chat ")
    assert first.name == "chat fake-model" and first.kind.name == "CLIENT"
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.provider.name"] == "openai_compatible"
    assert first.attributes["gen_ai.request.model"] == "fake-model"
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert first.attributes["server.address"] and first.attributes["server.port"]
    assert first.attributes["gen_ai.usage.cost.source"] == "local"  # computed from the prices
    assert second.attributes["gen_ai.usage.cost.source"] == "provider"  # the server's own figure
    assert second.attributes["gen_ai.usage.cost.amount"] == 0.00042
    assert first.attributes["venice_agent.request.purpose"] == "chat"
    [question] = traced.named("invoke_agent")
    conversation = question.attributes["gen_ai.conversation.id"]
    assert conversation.startswith("va-") and second.attributes["gen_ai.conversation.id"] == conversation
    # The model server got each request's own span as its parent (traceparent).
    sent = [seen for seen in fake.requests if seen.path.endswith("/chat/completions")]
    for seen, span in zip(sent, (first, second), strict=True):
        _, trace_id, span_id, _flags = seen.headers["traceparent"].split("-")
        assert int(trace_id, 16) == span.context.trace_id and int(span_id, 16) == span.context.span_id


async def test_tool_spans_say_how_consent_went_and_a_call_that_failed(traced: Traced) -> None:
    async def yes(call, spec, why):
        return True

    script = [calls(ECHO_A, ("charge", {"amount": 3})), calls(("fail", {})), {"text": "ok"}]
    async with agent_on(script, approver=yes) as (_, agent):
        receipt = await agent.ask("go")
    assert receipt.stopped_because is Exit.ANSWERED
    echo, charge, fail = traced.named("execute_tool ")
    assert echo.attributes["venice_agent.consent"] == "not_needed"  # read-only: nobody asked
    assert charge.attributes["venice_agent.consent"] == "yes"
    assert charge.attributes["venice_agent.call.outcome"] == "ran"
    assert fail.attributes["error.type"] == "tool_error" and fail.status.status_code is StatusCode.ERROR
    assert echo.attributes["gen_ai.tool.call.id"]
    # Nothing of what was said is recorded without the opt-in.
    for span in traced.spans.get_finished_spans():
        assert not {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments",
                    "gen_ai.tool.call.result"} & set(span.attributes)  # fmt: skip


async def test_a_declined_call_is_on_the_question_span_not_a_tool_span(traced: Traced) -> None:
    async def no(call, spec, why):
        return False

    async with agent_on([calls(("charge", {"amount": 3})), {"text": "fine"}], approver=no) as (_, agent):
        receipt = await agent.ask("go")
    assert traced.named("execute_tool ") == []
    [question] = traced.named("invoke_agent")
    [event] = question.events
    assert event.attributes["venice_agent.call.outcome"] == "declined" and receipt.steps == ()


async def test_content_is_recorded_only_with_the_opt_in_and_masked() -> None:
    seen, watcher = watch(content=True)
    previous = observe.install(watcher)
    try:
        script = [calls(("echo", {"text": f"key {SECRET}"})), {"text": f"it said {SECRET}"}]
        async with agent_on(script) as (_, agent):
            await agent.ask(f"say my key {SECRET}")
    finally:
        observe.install(previous)
    spans = seen.spans.get_finished_spans()
    recorded = " ".join(str(value) for span in spans for value in span.attributes.values())
    assert SECRET not in recorded and "***" in recorded
    first_chat = seen.named("chat ")[0]
    assert '"say my key ***"' in first_chat.attributes["gen_ai.input.messages"]
    [tool] = seen.named("execute_tool ")
    assert tool.attributes["gen_ai.tool.call.arguments"] == '{"text": "key ***"}'
    assert tool.attributes["gen_ai.tool.call.result"] == '"key ***"'


async def test_the_compaction_summary_is_a_chat_span_of_its_own(traced: Traced) -> None:
    script = {"replies": [{"text": "noted", "usage": used(20, 2)}], "loop": True}
    async with agent_on(script) as (_, agent):
        for number in range(4):
            await agent.ask(f"question {number}")
        spent = agent.spent
        assert (await agent.compact()).startswith("compacted")
        summary_cost = agent.spent - spent
    [summary] = [
        span for span in traced.named("chat ") if span.attributes["venice_agent.request.purpose"] == "summary"
    ]
    assert summary.parent is None  # /compact is not a question
    assert summary.attributes["gen_ai.usage.cost.amount"] == summary_cost


async def test_a_plan_run_alone_is_one_question_with_its_tool_spans(traced: Traced) -> None:
    receipt = await run_loop([Call("echo", {"text": "a"}), Call("echo", {"text": "a"})], toolbox(), 5)
    assert receipt.stopped_because is Exit.REPEATED_CALL
    [question] = traced.named("invoke_agent")
    [tool] = traced.named("execute_tool ")
    assert tool.parent.span_id == question.context.span_id
    assert question.attributes["error.type"] == "repeated_call"


async def test_nobody_watching_records_nothing_and_sends_no_traceparent() -> None:
    seen, _ = watch()
    async with agent_on([{"text": "hi"}]) as (fake, agent):
        await agent.ask("go")
    assert seen.spans.get_finished_spans() == ()
    assert all("traceparent" not in request.headers for request in fake.requests)


def test_a_prices_record_is_what_the_fake_lists() -> None:
    # The scenarios' costs are computed from these prices (`local`) unless a reply says its own.
    assert ModelFacts.from_listing([{"id": "m", "model_spec": PRICES}], "m").prices == Prices(
        input=1.0, output=2.0
    )
