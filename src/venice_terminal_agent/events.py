"""One typed stream of events for front ends, instead of callbacks in every signature.

Whoever runs a question passes one `EventSink` (any callable taking an `Event`); the loop,
the planner and the approval step all report through it. A front end matches on the type.
"""

from __future__ import annotations

from collections.abc import Callable
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
class ToolFinished:
    call: Call
    result: Any = None
    error: str | None = None


@dataclass(frozen=True)
class Finished:
    receipt: Receipt


Event = (
    RoundStarted
    | TextDelta
    | TextDiscarded
    | ConsentAsked
    | ConsentGiven
    | ToolStarted
    | ToolFinished
    | Finished
)
EventSink = Callable[[Event], None]


def ignore(_event: Event) -> None:
    """The sink used when nobody listens."""
