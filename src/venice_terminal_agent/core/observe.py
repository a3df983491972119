"""Where a run can be watched from outside (traces, metrics), without knowing who watches.

Nobody watches by default: every hook below then costs one global read and imports nothing.
`telemetry/` installs a `Watcher` when OpenTelemetry is turned on. The hooks sit where the
receipt's numbers are made, so what a watcher sees is the receipt:
- `question`: one question (`Agent.ask`, or `run_loop` run alone); the inner one of the two
  is the outer's, not a second;
- `request`: each model request the planner counts and costs (`LLMPlanner.costed`: the
  conversation's, a compaction's summary, the answer-from-what-you-have, a server's sampling);
- `tool`: each tool call that runs (the loop's `run_one`, in the call's own task);
- `outgoing`: the headers a model request goes out with (`traceparent`);
- `continued`: the caller's trace, which a request's runs join (serve's `traceparent` header);
- `note`: facts about the operation under way (an MCP call's session and protocol).

Like the loop, this module is pure.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, cast

from .events import EventSink, ignore
from .receipt import Call, Receipt


class QuestionWatch(Protocol):
    def sink(self, emit: EventSink) -> EventSink:
        """`emit`, seen on its way (whom a call's consent came from)."""
        ...

    def finished(self, receipt: Receipt) -> None: ...


class RequestWatch(Protocol):
    def answered(self, completion: Any, cost: float | None, facts: Mapping[str, Any]) -> None:
        """The response (`model.stream.Completion`), what it cost as the receipt counts it
        (None: unknown), and our own facts (`cap.usd_left`)."""
        ...

    def failed(self, error: BaseException, cost: float | None) -> None: ...


class ToolWatch(Protocol):
    def finished(self, result: Any, error: str | None) -> None: ...


class Watcher(Protocol):
    def question(self, model: str | None, conversation: str | None) -> Any:
        """A context manager giving a `QuestionWatch`."""
        ...

    def request(self, model: str, purpose: str, limit: int | None, messages: Any, tools: Any) -> Any:
        """A context manager giving a `RequestWatch`."""
        ...

    def tool(self, call: Call) -> Any:
        """A context manager giving a `ToolWatch`."""
        ...

    def outgoing(self, url: str) -> dict[str, str]: ...

    def continued(self, carrier: Mapping[str, str]) -> Any:
        """A context manager inside which runs join the trace `carrier` names."""
        ...

    def note(self, facts: Mapping[str, Any]) -> None: ...


class _Nobody:
    """What the hooks give when nobody watches."""

    def sink(self, emit: EventSink) -> EventSink:
        return emit

    def finished(self, *_: Any) -> None:
        pass

    def answered(self, *_: Any) -> None:
        pass

    def failed(self, *_: Any) -> None:
        pass


NOBODY = _Nobody()
P = ParamSpec("P")
_watcher: Watcher | None = None


def install(watcher: Watcher | None) -> Watcher | None:
    """Watch every run from now on with `watcher` (None: nobody); the one it replaces."""
    global _watcher
    previous, _watcher = _watcher, watcher
    return previous


def watcher() -> Watcher | None:
    return _watcher


@contextmanager
def question(model: str | None = None, conversation: str | None = None) -> Iterator[QuestionWatch]:
    if _watcher is None:
        yield NOBODY
        return
    with _watcher.question(model, conversation) as watch:
        yield watch


def watched(
    ask: Callable[Concatenate[Any, str, P], Awaitable[Receipt]],
) -> Callable[Concatenate[Any, str, P], Awaitable[Receipt]]:
    """`Agent.ask` as one `question`: its events seen on their way, its receipt at the end."""

    @functools.wraps(ask)
    async def asked(agent: Any, text: str, /, *args: P.args, **options: P.kwargs) -> Receipt:
        # The agent's prompt-cache key names its conversation (`gen_ai.conversation.id`).
        with question(getattr(agent, "model", None), getattr(agent, "cache_key", None)) as watch:
            given = cast("EventSink | None", options.get("events"))
            options["events"] = watch.sink(given or ignore)
            receipt = await ask(agent, text, *args, **options)
            watch.finished(receipt)
            return receipt

    return asked


@contextmanager
def request(
    model: str, purpose: str, limit: int | None = None, messages: Any = (), tools: Any = ()
) -> Iterator[RequestWatch]:
    if _watcher is None:
        yield NOBODY
        return
    with _watcher.request(model, purpose, limit, messages, tools) as watch:
        yield watch


@contextmanager
def tool(call: Call) -> Iterator[ToolWatch]:
    if _watcher is None:
        yield NOBODY
        return
    with _watcher.tool(call) as watch:
        yield watch


def outgoing(url: str) -> dict[str, str]:
    """Headers for a model request to `url` (the trace it belongs to); none when nobody watches."""
    return {} if _watcher is None else _watcher.outgoing(url)


CARRIED = ("traceparent", "tracestate", "baggage")  # W3C trace context, as headers or `_meta` keys


@contextmanager
def continued(carrier: Mapping[str, Any]) -> Iterator[None]:
    """Runs inside join the caller's trace: `carrier` holds its `traceparent` (a request's
    headers, lower-case, as serve gets them); nothing when nobody watches or none was sent."""
    given = {key: value for key in CARRIED if isinstance(value := carrier.get(key), str)}
    if _watcher is None or "traceparent" not in given:
        yield
        return
    with _watcher.continued(given):
        yield


def note(facts: Mapping[str, Any]) -> None:
    if _watcher is not None:
        _watcher.note(facts)
