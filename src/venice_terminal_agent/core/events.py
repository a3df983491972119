"""One typed stream of events for front ends, instead of callbacks in every signature.

Whoever runs a question passes one `EventSink` (any callable taking an `Event`); the loop,
the planner and the approval step all report through it. A front end matches on the type.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .receipt import Call, Receipt


@dataclass(frozen=True)
class RoundStarted:
    """The planner is asked for its next move (for a model: one request)."""

    round: int


@dataclass(frozen=True)
class TextDelta:
    """Part of the model's visible answer, as it streams in."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """Part of the model's thinking (`reasoning_content`, or a `<think>` block), as it streams:
    shown apart from the answer, never part of it."""

    text: str


@dataclass(frozen=True)
class TextDiscarded:
    """Text streamed so far in this round is void (the request is being retried)."""


@dataclass(frozen=True)
class ConsentAsked:
    call: Call


@dataclass(frozen=True)
class ConsentGiven:
    call: Call
    approved: bool


@dataclass(frozen=True)
class ToolStarted:
    call: Call


@dataclass(frozen=True)
class ToolProgress:
    """A running tool's progress as its server reports it: n of total, a message, or both."""

    call: Call
    progress: float | None = None
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class ToolFinished:
    call: Call
    result: Any = None
    error: str | None = None


@dataclass(frozen=True)
class Notice:
    """Something the person should know once, e.g. the server says the model is deprecated."""

    text: str


@dataclass(frozen=True)
class Finished:
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
