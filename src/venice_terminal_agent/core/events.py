"""One typed stream of events for front ends, instead of callbacks in every signature.

Whoever runs a question passes one `EventSink` (any callable taking an `Event`); the loop,
the planner and the approval step all report through it. A front end matches on the type.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from .receipt import Call, Receipt
from .record import Record


class RoundStarted(Record):
    """The planner is asked for its next move (for a model: one request)."""

    round: int


class TextDelta(Record):
    """Part of the model's visible answer, as it streams in."""

    text: str


class ThinkingDelta(Record):
    """Part of the model's thinking (`reasoning_content`, or a `<think>` block), as it streams:
    shown apart from the answer, never part of it."""

    text: str


class TextDiscarded(Record):
    """Text streamed so far in this round is void (the request is being retried)."""


class ConsentAsked(Record):
    call: Call


class ConsentGiven(Record):
    call: Call
    approved: bool


class ToolStarted(Record):
    call: Call


class ToolProgress(Record):
    """A running tool's progress as its server reports it: n of total, a message, or both."""

    call: Call
    progress: float | None = None
    total: float | None = None
    message: str | None = None


class ToolFinished(Record):
    call: Call
    result: Any = None
    error: str | None = None


class Notice(Record):
    """Something the person should know once, e.g. the server says the model is deprecated."""

    text: str


class Finished(Record):
    receipt: Receipt


Event = (
    RoundStarted
    | TextDelta
    | ThinkingDelta
    | TextDiscarded
    | ConsentAsked
    | ConsentGiven
    | ToolStarted
    | ToolProgress
    | ToolFinished
    | Notice
    | Finished
)
EventSink = Callable[[Event], None]


def ignore(_event: Event) -> None:
    """The sink used when nobody listens."""


ProgressReport = Callable[[float | None, float | None, str | None], None]
# Set by the loop around each tool call (so it is local to that call's task) and read by the
# toolboxes that hear progress (MCP servers): `report(progress, total, message)`.
tool_progress: ContextVar[ProgressReport | None] = ContextVar("tool_progress", default=None)
