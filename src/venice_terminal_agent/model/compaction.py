"""Compaction: the older rounds of a planner's conversation replaced by a summary the model writes.

The planner asks two things of it (`Compactor`): `to_fit()`, before a request that would pass
the gauge's threshold, and `compact(focus)`, for `/compact`. The model summarises the older
rounds in one request without tools, a round of the question counted and costed like the
others; the system messages and the last user turns stay whole, and the cut is always before a
user turn (`core.context.cuts`), so no tool call is parted from its answer. A compaction that
fails leaves the messages as they were and says why.

What it asks of the planner is `Summarising`: the working conversation, the gauge, the
question's tally and events, its `Ledger` (the money cap's verdict, ledger.py), and the summary
request itself, made on the question's account. Where the conversation was compacted is kept as record markers
(`context.marker`) and, for the receipt, as a `Compaction`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from ..core.context import Compaction, Gauge, compacted_line, cuts, leading_system, marker
from ..core.errors import ModelError
from ..core.events import EventSink, Notice, RoundStarted
from ..core.receipt import Tally
from .ledger import Ledger
from .stream import Completion

SUMMARISE = (
    "The conversation below is getting too long for your context window. Write a summary of "
    "it that lets you go on without it: the user's questions and goals, what the tools found "
    "(names, figures, ids, file paths, URLs), decisions made, and anything still open. Keep "
    "every instruction the user gave. Be complete but brief; plain text only.{focus}\n\n"
    "--- the conversation ---\n{transcript}"
)
SUMMARY_HEAD = (
    "(Summary of the earlier conversation, written when it was compacted to fit the context window.)\n"
)


class Summarising(Protocol):
    """What compaction needs of the planner (`LLMPlanner` is one)."""

    messages: list[dict[str, Any]]  # the working conversation, edited in place
    gauge: Gauge
    tally: Tally | None  # the question's rounds: a compaction is one of them
    events: EventSink | None
    ledger: Ledger  # the question's money: the cap's verdict on the summary request

    async def summarise(self, request: Sequence[dict[str, Any]]) -> Completion: ...


class Compactor:
    """Compacts one planner's conversation; what it did is in `compaction` and `markers`."""

    def __init__(self, planner: Summarising) -> None:
        self.planner = planner
        self.compaction = Compaction()
        self.markers: list[dict[str, Any]] = []  # where it compacted (`context.marker`)
        self.unsaid: set[str] = set()  # why compactions failed, once said

    async def to_fit(self) -> str:
        """Compact before a request that would pass the threshold, as a round of the question;
        the reason it did not happen (for the refusal, should the request still not fit)."""
        tally, events = self.planner.tally, self.planner.events
        if tally is not None:
            if tally.full():
                return " (no round was left to compact the conversation in)"
            tally.rounds += 1
            if events is not None:
                events(RoundStarted(tally.rounds))
        problem = await self.compact()
        if problem is None:
            return ""
        if events is not None and problem not in self.unsaid:
            self.unsaid.add(problem)  # said once a question, not before each of its requests
            events(Notice(f"not compacted: {problem}"))
        return f" (compacting did not help: {problem})"

    async def compact(self, focus: str | None = None) -> str | None:
        """Replace the older rounds with a summary the model writes in one request without
        tools. None when done; else why not, and the messages are as they were."""
        messages, gauge = self.planner.messages, self.planner.gauge
        head = leading_system(messages)
        extra = f"\nPay most attention to: {focus}" if focus else ""
        found = None
        for cut in cuts(messages):  # the most that can be summarised in one request
            old = messages[head:cut]
            request = [
                *messages[:head],
                {"role": "user", "content": SUMMARISE.format(focus=extra, transcript=transcript(old))},
            ]
            if gauge.room_for_summary(gauge.estimate(request)):
                found = cut
                break
        if found is None:
            if not cuts(messages):
                return "there are no earlier rounds to compact"
            return "even the oldest round is too long to summarise in one request"
        cut = found
        refusal = self.planner.ledger.check_cap(request, ())
        if refusal is not None:
            return refusal
        try:
            turn = await self.planner.summarise(request)
        except ModelError as error:
            return error.message
        summary = turn.text.strip()
        if turn.tool_calls or not summary:
            return "the model gave no summary"
        rounds = sum(1 for message in old if message.get("role") == "assistant")
        before = gauge.estimate(old)
        kept = {"role": "user", "content": SUMMARY_HEAD + summary}
        after = gauge.estimate([kept])
        messages[head:cut] = [kept]
        self.compaction.add(rounds, before, after)
        self.markers.append(marker(head, cut, kept, rounds, before, after))
        if self.planner.events is not None:
            self.planner.events(Notice(compacted_line(rounds, before, after)))
        return None


def transcript(messages: Sequence[dict[str, Any]]) -> str:
    """Messages as text for the summary request: it carries no tool calls of its own, so it is
    well-formed on any server, with or without tools."""
    lines = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
        if role == "tool":
            lines.append(f"[tool result {message.get('tool_call_id')}]: {text}")
            continue
        if text:
            lines.append(f"[{role}]: {text}")
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            lines.append(
                f"[assistant called {function.get('name')} ({call.get('id')})]: {function.get('arguments')}"
            )
    return "\n".join(lines)
