"""What a run is made of and what it hands back: steps, exits, the receipt.

Exits are values inside a frozen result, never exceptions: a caller always gets a
`Receipt` that says what ran and why the run stopped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .costs import tokens, usd
from .wording import plural


class Exit(StrEnum):
    """Why a run stopped. The first four are the loop's own, tested in this order."""

    ANSWERED = "answered"
    REPEATED_CALL = "repeated_call"
    BUDGET = "budget"
    TOOL_ERROR = "tool_error"
    # Runs planned by a model add these.
    MAX_ROUNDS = "max_rounds"
    MODEL_ERROR = "model_error"
    CANCELLED = "cancelled"
    COST_CAP = "cost_cap"  # the next model request could pass the money cap (checked before it)


# The process exit status of a one-shot command for each exit; 2 is kept for usage and
# configuration errors, 1 for a crash (a bug), 130 follows the shell's Ctrl+C convention.
EXIT_STATUS: dict[Exit, int] = {
    Exit.ANSWERED: 0,
    Exit.BUDGET: 3,
    Exit.REPEATED_CALL: 4,
    Exit.TOOL_ERROR: 5,
    Exit.MAX_ROUNDS: 6,
    Exit.MODEL_ERROR: 7,
    Exit.CANCELLED: 130,
    Exit.COST_CAP: 8,
}
USAGE_ERROR_STATUS = 2


def exit_statuses(*exits: Exit) -> str:
    """`0 answered, 3 budget, …` for help texts, from `EXIT_STATUS` (every exit when none given),
    so no help text copies the table by hand."""
    chosen = sorted(exits or EXIT_STATUS, key=EXIT_STATUS.__getitem__)
    return ", ".join(f"{EXIT_STATUS[exit]} {exit}" for exit in chosen)


MAX_JSON_DEPTH = 100


def read_json(text: str | bytes) -> Any:
    """JSON from a client, a person or a model. Raises ValueError (`json.JSONDecodeError` for
    bad syntax) also when it nests deeper than MAX_JSON_DEPTH levels: Python's json stops near
    1,000 with a RecursionError, and a value a little under that could not be written back
    into a receipt, the store or a model request."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    stack = [(value, 1)]
    while stack:  # a loop, not a recursion: the depth is what is checked
        item, level = stack.pop()
        if isinstance(item, dict | list):
            if level > MAX_JSON_DEPTH:
                raise ValueError("nested too deeply")
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return value


def canonical_json(value: Any) -> str:
    """One spelling for equal JSON values, so argument order never matters."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Call:
    """A step that asks a tool to run.

    `id` is the model's tool-call id when a model proposed the call. `malformed` holds the
    reason a proposed call cannot run as given (arguments that were not a JSON object); the
    loop hands that reason back to the planner instead of running the tool.
    """

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    malformed: str | None = None

    def key(self) -> tuple[str, str, str | None]:
        # Two malformed calls are equal only if they were malformed the same way.
        return (self.tool, canonical_json(self.arguments), self.malformed)


@dataclass(frozen=True)
class Answer:
    """A step that ends the run with an answer. Never a call, never counted."""

    text: str


@dataclass(frozen=True)
class Step:
    """A tool call that ran: its result, or the error it raised."""

    tool: str
    arguments: dict[str, Any]
    result: Any = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "error": self.error,
        }


@dataclass
class Tally:
    """A run's rounds and tool calls against their limits: the loop's own, and those spent
    outside it on the run's behalf (a server's sampling request during a tool call, and the
    calls of the server's own tools the model proposes in it). `reserve` rounds are kept for
    the planner's partial answer."""

    max_rounds: int | None = None
    reserve: int = 0
    rounds: int = 0
    budget: int | None = None  # tool calls
    calls: int = 0

    def full(self) -> bool:
        """No round is left before the reserve."""
        return self.max_rounds is not None and self.rounds >= self.max_rounds - self.reserve


@dataclass(frozen=True)
class Receipt:
    """What ran, and why the run stopped.

    A run planned by a model (`model` set) also carries `usage` (every token count the server
    sent, added up over its requests), `cost_usd` (None: unknown), `partial` (the answer was
    asked for after a `budget`, `max_rounds` or `repeated_call` stop, from what was gathered)
    and `balance` (the account's balance as the server last reported it, when it does).
    """

    steps: tuple[Step, ...]
    stopped_because: Exit
    answer: str | None = None
    refusal: str | None = None
    rounds: int = 0
    duration: float | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    partial: bool = False
    balance: dict[str, str] | None = None
    thinking: str | None = None  # the model's thinking, apart from `answer` (None: it showed none)
    sources: tuple[dict[str, str], ...] = ()  # web search results the answer drew on (title, url, date)

    @property
    def calls(self) -> int:
        return len(self.steps)

    @property
    def exit_status(self) -> int:
        return EXIT_STATUS[self.stopped_because]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "stopped_because": str(self.stopped_because),
            "answer": self.answer,
            "refusal": self.refusal,
            "steps": [step.to_dict() for step in self.steps],
            "calls": self.calls,
            "rounds": self.rounds,
        }
        if self.duration is not None:
            data["duration"] = round(self.duration, 6)
        if self.model is not None:
            data["model"] = self.model
        if self.model is not None or self.usage is not None:
            data["usage"] = dict(self.usage or {})
            data["cost_usd"] = self.cost_usd
        if self.model is not None or self.partial:
            data["partial"] = self.partial
        if self.balance:
            data["balance"] = dict(self.balance)
        if self.thinking is not None:
            data["thinking"] = self.thinking
        if self.sources:
            data["sources"] = [dict(source) for source in self.sources]
        # Results are JSON-able by contract; anything else is shown as text, never a crash.
        return json.loads(json.dumps(data, ensure_ascii=False, default=str))

    def summary(self) -> str:
        """One line for people: `stopped: answered · 2 calls · 3 rounds · 4,210 tokens · $0.0031`."""
        stop = f"stopped: {self.stopped_because}" + (" (partial answer)" if self.partial else "")
        parts = [stop, plural(self.calls, "call")]
        if self.rounds:
            parts.append(plural(self.rounds, "round"))
        if self.model is not None:
            used = tokens(self.usage or {})
            parts.append(f"{used:,} token" + ("" if used == 1 else "s"))
            parts.append("cost unknown" if self.cost_usd is None else usd(self.cost_usd))
        return " · ".join(parts)
