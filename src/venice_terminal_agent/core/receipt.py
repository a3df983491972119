"""What a run is made of and what it hands back: steps, exits, the receipt.

Exits are values inside a frozen result, never exceptions: a caller always gets a
`Receipt` that says what ran and why the run stopped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import field
from enum import StrEnum
from typing import Any

from .context import used as window_used
from .costs import tokens, usd

# Defined in exits.py, light enough for --help; imported from here as ever (re-exported).
from .exits import EXIT_STATUS as EXIT_STATUS
from .exits import USAGE_ERROR_STATUS as USAGE_ERROR_STATUS
from .exits import Exit as Exit
from .exits import exit_statuses as exit_statuses
from .record import Record
from .scrub import redact, redact_all
from .wording import plural

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


def canonical_json(value: object) -> str:
    """One spelling for equal JSON values, so argument order never matters."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class Call(Record):
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


class Answer(Record):
    """A step that ends the run with an answer. Never a call, never counted."""

    text: str


class Step(Record):
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


class CallOutcome(StrEnum):
    """What became of one proposed call: the receipt's `proposed` says it for each, in order.
    Only `ran` is a step and counts against the budget."""

    RAN = "ran"
    DECLINED = "declined"  # the person said no (Enter, n, Ctrl+C or end of input at the prompt)
    NO_ONE_TO_ASK = "no_one_to_ask"  # it needed a yes and nobody could be asked (no terminal)
    REFUSED_BY_POLICY = "refused_by_policy"  # it needed a yes the setup rules out (serve without --yes)
    INVALID = "invalid"  # no such tool, or arguments that are not a JSON object
    NOT_RUN = "not_run"  # the run stopped before it (a repeated call, the budget, the last round)


class Proposed(Record):
    """A call the planner proposed, and what became of it; `why` a call did not run, when the
    run stopped before it (`not_run`)."""

    tool: str
    arguments: dict[str, Any]
    outcome: CallOutcome
    why: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {"tool": self.tool, "arguments": self.arguments, "outcome": str(self.outcome)}
        return data if self.why is None else {**data, "why": self.why}


def proposed_summary(proposed: tuple[Proposed, ...], ran: int) -> str:
    """`2 calls`, or when some did not run `3 calls proposed: 1 ran, 2 declined`. Calls left
    when the run stopped (`not_run`) are not counted here: the stop's refusal says it."""
    proposed = tuple(item for item in proposed if item.outcome is not CallOutcome.NOT_RUN)
    if all(item.outcome is CallOutcome.RAN for item in proposed):
        return plural(ran, "call")
    counts: dict[CallOutcome, int] = {CallOutcome.RAN: ran}  # "0 ran" is said too
    for item in proposed:
        if item.outcome is not CallOutcome.RAN:
            counts[item.outcome] = counts.get(item.outcome, 0) + 1
    said = ", ".join(f"{n} {OUTCOME_WORDS[outcome]}" for outcome, n in counts.items())
    return f"{plural(len(proposed), 'call')} proposed: {said}"


OUTCOME_WORDS = {
    CallOutcome.RAN: "ran",
    CallOutcome.DECLINED: "declined",
    CallOutcome.NO_ONE_TO_ASK: "not run (no one to ask)",
    CallOutcome.REFUSED_BY_POLICY: "refused by policy",
    CallOutcome.INVALID: "invalid",
}


class Tally(Record, frozen=False):
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


class Receipt(Record):
    """What ran, and why the run stopped.

    A run planned by a model (`model` set) also carries `usage` (every token count the server
    sent, added up over its requests), `cost_usd` (None: unknown), `partial` (the answer was
    asked for after a `budget`, `max_rounds` or `repeated_call` stop, from what was gathered)
    and `balance` (the account's balance as the server last reported it, when it does),
    `context_tokens` (the input tokens of its last request: the server's count, else the
    estimate), `context_window` (None: unknown), `cached_tokens` (input tokens the server
    read from its prompt cache; None: unknown, no response said how many tokens it took) and `compacted` (`{"rounds", "tokens_before",
    "tokens_after"}` when older rounds were summarised during it); `e2ee` (a model used
    end-to-end encrypted: what was verified, and what not by us) and, with `schema`
    (--schema), `parsed`: the answer as the JSON value that matched it.
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
    context_tokens: int | None = None
    context_window: int | None = None
    cached_tokens: int | None = None
    compacted: dict[str, int] | None = None
    e2ee: dict[str, Any] | None = None  # an encrypted question: what was verified, and what not
    schema: bool = False  # the answer was asked to match a JSON schema (--schema)
    parsed: Any = None  # that answer, parsed and valid (None when it was not)
    unmeasured: int = 0
    unstreamed: int = 0  # requests asked again, and then asked, without streaming (the server sent nothing)
    notes: tuple[str, ...] = ()
    # Every call proposed, in order, with what became of it (`steps` holds those that ran).
    proposed: tuple[Proposed, ...] = ()
    thinking: str | None = None  # the model's thinking, apart from `answer` (None: it showed none)
    sources: tuple[dict[str, str], ...] = ()  # web search results the answer drew on (title, url, date)
    # Tools whose calls here ran on a yes given for the rest of the session (the REPL's `a`).
    approved_for_session: tuple[str, ...] = ()

    def masked(self, secrets: Sequence[str]) -> Receipt:
        """This receipt with every secret in what a tool or the model said replaced by `***`
        (`scrub.redact`): for a receipt that is kept or shown to someone other than the person
        whose settings hold the secrets (the bot's store, a service's reply)."""
        if not secrets:
            return self
        steps = tuple(
            step.replace(
                arguments=redact_all(step.arguments, secrets),
                result=redact_all(step.result, secrets),
                error=redact(step.error, secrets),
            )
            for step in self.steps
        )
        proposed = tuple(
            call.replace(arguments=redact_all(call.arguments, secrets)) for call in self.proposed
        )
        return self.replace(
            steps=steps,
            proposed=proposed,
            answer=redact(self.answer, secrets),
            refusal=redact(self.refusal, secrets),
            thinking=redact(self.thinking, secrets),
            parsed=redact_all(self.parsed, secrets),
            notes=tuple(redact(note, secrets) or note for note in self.notes),
        )

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
            "proposed": [item.to_dict() for item in self.proposed],
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
        if self.model is not None:
            data["context_tokens"] = self.context_tokens
            data["context_window"] = self.context_window
            data["cached_tokens"] = self.cached_tokens
        if self.compacted is not None:
            data["compacted"] = dict(self.compacted)
        if self.e2ee is not None:
            data["e2ee"] = self.e2ee
        if self.schema:
            data["parsed"] = self.parsed
        if self.unmeasured:
            data["unmeasured_requests"] = self.unmeasured
        if self.unstreamed:
            data["unstreamed_requests"] = self.unstreamed
        if self.notes:
            data["notes"] = list(self.notes)
        if self.approved_for_session:
            data["approved_for_session"] = list(self.approved_for_session)
        if self.thinking is not None:
            data["thinking"] = self.thinking
        if self.sources:
            data["sources"] = [dict(source) for source in self.sources]
        # Results are JSON-able by contract; anything else is shown as text, never a crash.
        ready: dict[str, Any] = json.loads(json.dumps(data, ensure_ascii=False, default=str))
        return ready

    def summary(self) -> str:
        """One line for people: `stopped: answered · 2 calls · 3 rounds · 4,210 tokens · $0.0031`."""
        stop = f"stopped: {self.stopped_because}" + (" (partial answer)" if self.partial else "")
        parts = [stop, proposed_summary(self.proposed, self.calls)]
        if self.approved_for_session:
            parts.append(f"{', '.join(self.approved_for_session)} approved for this session")
        if self.rounds:
            parts.append(plural(self.rounds, "round"))
        if self.model is not None:
            used = tokens(self.usage or {})
            if self.unmeasured and not used:
                parts.append("tokens unknown")  # the server sent no counts: never a measured-looking 0
            else:  # some responses came without counts: the total is a floor
                parts.append(f"{used:,}{'+' if self.unmeasured else ''} token" + ("" if used == 1 else "s"))
            parts.append("cost unknown" if self.cost_usd is None else usd(self.cost_usd))
        if self.context_tokens and self.context_window:  # `34% of 128k`: how full the window is
            parts.append(window_used(self.context_tokens, self.context_window))
        if self.e2ee is not None and self.e2ee.get("encrypted"):
            parts.append("end-to-end encrypted (no tools)")
        return " · ".join(parts)
