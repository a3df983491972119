"""The run's hooks (`core/observe.py`) as OpenTelemetry spans and metrics, per the GenAI conventions.

Spans (semantic-conventions-genai v0.1.0, Development status; docs/tracing.md):
- `invoke_agent venice-agent` (INTERNAL), one per question: the receipt's totals, its exit as
  `venice_agent.stop_reason`, and, when it is not `answered`, status ERROR and `error.type` the
  exit; each proposed call that did not run is an event `venice_agent.call.not_run` on it;
- `chat {model}` (CLIENT), one per model request the receipt counts (a compaction's summary, the
  answer-from-what-you-have request and a server's sampling request included): `gen_ai.usage.*`
  from the response's own usage, and its cost as the receipt counts it
  (`gen_ai.usage.cost.amount`/`.currency`/`.source`: `provider` when the server sent it,
  `local` when computed from prices);
- `execute_tool {name}` (INTERNAL), one per call that ran: how its consent went
  (`venice_agent.consent`), its outcome, and an MCP call's `mcp.*` attributes.
Metrics: `gen_ai.client.operation.duration`, `gen_ai.client.token.usage`, and
`venice_agent.cost` (USD). Content (messages, arguments, results) only with the opt-in, masked.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, StatusCode

from .. import __version__
from ..core.costs import server_cost
from ..core.events import ConsentGiven, Event, EventSink
from ..core.observe import NOBODY
from ..core.receipt import Call, CallOutcome, Exit, Receipt
from ..core.scrub import redact, redact_all

AGENT = "venice-agent"
SCOPE = "venice_terminal_agent"
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216)


def provider_of(url: str) -> tuple[str, str | None, int | None]:
    """`gen_ai.provider.name`, `server.address` and `server.port` of a model server's URL."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    name = (
        "venice"
        if host.endswith("venice.ai")
        else "openai"
        if host.endswith("openai.com")
        else "openai_compatible"
    )
    port = parts.port or (443 if parts.scheme == "https" else 80 if parts.scheme == "http" else None)
    return name, host or None, port


def usage_attributes(usage: Mapping[str, Any]) -> dict[str, int]:
    """A response's usage as `gen_ai.usage.*` (only what the server counted)."""
    found: dict[str, int] = {}
    pairs = (
        ("gen_ai.usage.input_tokens", usage.get("prompt_tokens")),
        ("gen_ai.usage.output_tokens", usage.get("completion_tokens")),
        ("gen_ai.usage.cache_read.input_tokens", _detail(usage, "prompt_tokens_details", "cached_tokens")),
        (
            "gen_ai.usage.reasoning.output_tokens",
            _detail(usage, "completion_tokens_details", "reasoning_tokens"),
        ),
    )
    for key, value in pairs:
        if isinstance(value, int | float) and not isinstance(value, bool):
            found[key] = int(value)
    return found


def _detail(usage: Mapping[str, Any], group: str, key: str) -> Any:
    details = usage.get(group)
    return details.get(key) if isinstance(details, Mapping) else None


def as_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages in the conventions' shape (`role` and `parts`)."""
    shaped = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        content = message.get("content")
        if isinstance(content, str) and content:
            kind = "tool_call_response" if message.get("role") == "tool" else "text"
            parts.append(
                {"type": kind, "id": message.get("tool_call_id"), "response": content}
                if kind == "tool_call_response"
                else {"type": "text", "content": content}
            )
        elif isinstance(content, list):
            parts.extend(
                {"type": "text", "content": part.get("text", "")}
                for part in content
                if isinstance(part, Mapping) and part.get("type") == "text"
            )
        for tool_call in message.get("tool_calls") or ():
            function = tool_call.get("function") or {}
            parts.append(
                {
                    "type": "tool_call",
                    "id": tool_call.get("id"),
                    "name": function.get("name"),
                    "arguments": function.get("arguments"),
                }
            )
        shaped.append({"role": message.get("role"), "parts": parts})
    return shaped


class _Question:
    def __init__(self, watcher: OtelWatcher, span: Any, conversation: str | None = None) -> None:
        self.watcher = watcher
        self.span = span
        self.conversation = conversation
        self.consented: dict[Any, bool] = {}  # a call's key → the yes it got (asked, --yes, a grant)

    def sink(self, emit: EventSink) -> EventSink:
        def seen(event: Event) -> None:
            if isinstance(event, ConsentGiven):
                self.consented[_key(event.call)] = event.approved
            emit(event)

        return seen

    def finished(self, receipt: Receipt) -> None:
        span, mask = self.span, self.watcher.mask
        attributes: dict[str, Any] = {
            "venice_agent.stop_reason": str(receipt.stopped_because),
            "venice_agent.rounds": receipt.rounds,
            "venice_agent.calls": len(receipt.steps),
            "venice_agent.partial": receipt.partial,
            **usage_attributes(receipt.usage or {}),
        }
        if receipt.model:
            attributes["gen_ai.response.model"] = receipt.model
        if receipt.cost_usd is not None:
            attributes["venice_agent.cost.usd"] = receipt.cost_usd
        elif receipt.usage is not None:
            attributes["venice_agent.cost.unknown"] = True
        span.set_attributes(attributes)
        for item in receipt.proposed:
            if item.outcome is not CallOutcome.RAN:
                event = {"gen_ai.tool.name": item.tool, "venice_agent.call.outcome": str(item.outcome)}
                if item.why:
                    event["venice_agent.call.why"] = mask(item.why) or ""
                if self.watcher.content:
                    event["gen_ai.tool.call.arguments"] = self.watcher.dumps(item.arguments)
                span.add_event("venice_agent.call.not_run", event)
        if self.watcher.content and receipt.answer is not None:
            answer = [{"role": "assistant", "parts": [{"type": "text", "content": receipt.answer}]}]
            span.set_attribute("gen_ai.output.messages", self.watcher.dumps(answer))
        if receipt.stopped_because is not Exit.ANSWERED:
            span.set_attribute("error.type", str(receipt.stopped_because))
            span.set_status(StatusCode.ERROR, mask(receipt.refusal) or str(receipt.stopped_because))


class _Request:
    def __init__(self, watcher: OtelWatcher, span: Any, model: str) -> None:
        self.watcher, self.span, self.model = watcher, span, model
        self.provider = "openai_compatible"
        self.response_model: str | None = None
        self.error: str | None = None

    def answered(self, completion: Any, cost: float | None, facts: Mapping[str, Any]) -> None:
        span = self.span
        usage = completion.usage or {}
        self.response_model = completion.model
        attributes: dict[str, Any] = usage_attributes(usage)
        if completion.model:
            attributes["gen_ai.response.model"] = completion.model
        if completion.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = [completion.finish_reason]
        attributes.update(self.costed(cost, server_cost(usage) is not None))
        attributes.update({f"venice_agent.{key}": value for key, value in facts.items()})
        if self.watcher.content:
            attributes["gen_ai.output.messages"] = self.watcher.dumps(as_messages([completion.message]))
        span.set_attributes(attributes)
        self.watcher.count_tokens(self, usage)
        if cost is not None:
            self.watcher.cost.add(cost, self.metric_attributes())

    def failed(self, error: BaseException, cost: float | None) -> None:
        # A request refused before it went out names the exit its question ends on (`Refused`:
        # a batch's shared cap, or `interrupted`); an HTTP failure its status; else its class.
        exit, status = getattr(error, "exit", None), getattr(error, "status", None)
        self.error = str(exit or status or type(error).__name__)
        self.span.set_attributes({"error.type": self.error, **self.costed(cost, False)})
        message = getattr(error, "message", None) or str(error)
        self.span.set_status(StatusCode.ERROR, self.watcher.mask(message) or self.error)

    @staticmethod
    def costed(cost: float | None, provider: bool) -> dict[str, Any]:
        if cost is None:
            return {"venice_agent.cost.unknown": True}
        return {
            "gen_ai.usage.cost.amount": cost,
            "gen_ai.usage.cost.currency": "USD",
            "gen_ai.usage.cost.source": "provider" if provider else "local",
        }

    def metric_attributes(self) -> dict[str, Any]:
        found = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.model,
        }
        if self.response_model:
            found["gen_ai.response.model"] = self.response_model
        if self.error:
            found["error.type"] = self.error
        return found


class _Tool:
    def __init__(self, watcher: OtelWatcher, span: Any, call: Call) -> None:
        self.watcher, self.span, self.call = watcher, span, call

    def finished(self, result: Any, error: str | None) -> None:
        span = self.span
        if error is not None:
            span.set_attributes({"error.type": "tool_error", "venice_agent.call.outcome": "failed"})
            span.set_status(StatusCode.ERROR, self.watcher.mask(error) or "tool_error")
        else:
            span.set_attribute("venice_agent.call.outcome", "ran")
        if self.watcher.content:
            span.set_attribute(
                "gen_ai.tool.call.result", self.watcher.dumps(error if error is not None else result)
            )


class OtelWatcher:
    """A `core.observe.Watcher` that records spans and metrics; `content`: the opt-in to record
    messages and tool arguments and results, masked with `secrets`."""

    def __init__(
        self,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        *,
        content: bool = False,
        secrets: Sequence[str] = (),
        clock: Any = time.perf_counter,
    ) -> None:
        self.tracer = trace.get_tracer(SCOPE, __version__, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, __version__, meter_provider=meter_provider)
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS),
        )
        self.cost = meter.create_counter(
            "venice_agent.cost", unit="USD", description="What the model requests cost, as the receipts say"
        )
        self.content = content
        self.secrets = tuple(secrets)
        self.clock = clock
        self.question_now: ContextVar[_Question | None] = ContextVar("question_now", default=None)
        self.request_now: ContextVar[_Request | None] = ContextVar("request_now", default=None)

    def mask(self, text: str | None) -> str | None:
        return redact(text, self.secrets)

    def dumps(self, value: Any) -> str:
        """`value` as the JSON an attribute holds, every secret masked."""
        return json.dumps(redact_all(value, self.secrets), ensure_ascii=False, default=str)

    @contextmanager
    def question(self, model: str | None, conversation: str | None) -> Iterator[Any]:
        if self.question_now.get() is not None:  # run_loop inside Agent.ask: the same question
            yield NOBODY
            return
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
        if model:
            attributes["gen_ai.request.model"] = model
        if conversation:
            attributes["gen_ai.conversation.id"] = conversation
        span = self.tracer.start_span(f"invoke_agent {AGENT}", kind=SpanKind.INTERNAL, attributes=attributes)
        watch = _Question(self, span, conversation)
        token = self.question_now.set(watch)
        started = self.clock()
        try:
            with trace.use_span(span, end_on_exit=True):
                yield watch
        finally:
            self.question_now.reset(token)
            self.duration.record(
                self.clock() - started, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
            )

    @contextmanager
    def request(
        self, model: str, purpose: str, limit: int | None, messages: Any, tools: Any
    ) -> Iterator[Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "venice_agent.request.purpose": purpose,
        }
        if limit is not None:
            attributes["gen_ai.request.max_tokens"] = limit
        question = self.question_now.get()
        if question is not None and question.conversation:
            attributes["gen_ai.conversation.id"] = question.conversation
        if self.content:
            attributes["gen_ai.input.messages"] = self.dumps(as_messages(messages))
            if tools:
                attributes["gen_ai.tool.definitions"] = self.dumps(list(tools))
        span = self.tracer.start_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes)
        watch = _Request(self, span, model)
        token = self.request_now.set(watch)
        started = self.clock()
        try:
            with trace.use_span(
                span, end_on_exit=True, record_exception=False, set_status_on_exception=False
            ):
                yield watch
        finally:
            self.request_now.reset(token)
            span_attributes = watch.metric_attributes()
            self.duration.record(self.clock() - started, span_attributes)

    @contextmanager
    def tool(self, call: Call) -> Iterator[Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.tool,
            "gen_ai.tool.type": "function",
        }
        if call.id:
            attributes["gen_ai.tool.call.id"] = call.id
        question = self.question_now.get()
        consent = question.consented.get(_key(call)) if question is not None else None
        attributes["venice_agent.consent"] = "not_needed" if consent is None else "yes" if consent else "no"
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = self.dumps(call.arguments)
        span = self.tracer.start_span(
            f"execute_tool {call.tool}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
            yield _Tool(self, span, call)

    def outgoing(self, url: str) -> dict[str, str]:
        request = self.request_now.get()
        if request is not None:
            name, host, port = provider_of(url)
            request.provider = name
            found: dict[str, Any] = {"gen_ai.provider.name": name}
            if host:
                found["server.address"] = host
            if port:
                found["server.port"] = port
            request.span.set_attributes(found)
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        return carrier

    @contextmanager
    def continued(self, carrier: Mapping[str, str]) -> Iterator[None]:
        token = otel_context.attach(propagate.extract(carrier))
        try:
            yield
        finally:
            otel_context.detach(token)

    def note(self, facts: Mapping[str, Any]) -> None:
        span = trace.get_current_span()
        if span.is_recording():
            span.set_attributes(dict(facts))
            if "mcp.method.name" in facts:
                span.set_attribute("gen_ai.tool.type", "extension")

    def count_tokens(self, request: _Request, usage: Mapping[str, Any]) -> None:
        base = request.metric_attributes()
        for kind, key in (("input", "prompt_tokens"), ("output", "completion_tokens")):
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                self.tokens.record(value, {**base, "gen_ai.token.type": kind})


def _key(call: Call) -> Any:
    return call.id if call.id is not None else call.key()
