"""`Report`: what one planner's model requests came to, handed to the agent in one piece.

The loop's receipt knows the steps and the exit; the planner knows the rest of a model run
(who answered, tokens, cost, context, thinking, sources, how replies came). `Report.on(receipt)`
is the receipt with that filled in. The session keeps the other half (`facts`, the costs, the
messages added and where the conversation was compacted) for the questions after it.
"""

from __future__ import annotations

from typing import Any

from ..core.receipt import Exit, Receipt
from ..core.record import Record
from .models import ModelFacts


class Report(Record):
    """A planner's requests, summed up (`LLMPlanner.report`)."""

    # For the receipt:
    requests: int  # model requests made (a round stopped before its request was not one)
    model: str  # the model the server says answered, else the one asked
    usage: dict[str, Any]  # every token count the server sent, added up
    cost_usd: float | None  # None: unknown
    balance: dict[str, str] | None  # the account's balance, as the server last said
    context_tokens: int | None  # the last request's input tokens (the server's, else estimated)
    cached_tokens: int | None  # input tokens read from the server's prompt cache; None: unknown
    compacted: dict[str, int] | None  # what compactions did (`Compaction.to_dict`)
    parsed: Any  # the answer as the JSON value that matched --schema
    unmeasured: int  # responses that came without token counts
    unstreamed: int  # responses asked for without streaming
    notes: tuple[str, ...]  # how replies came (once each)
    thinking: str | None  # the model's thinking, apart from the answers
    sources: tuple[dict[str, str], ...]  # web search results, in order
    # For the session:
    facts: ModelFacts  # an output maximum a server named is kept for the session
    known_cost: float  # USD of the requests whose cost is known
    unknown_worst: float  # the most the requests of unknown cost could have cost
    headers: dict[str, str]  # Venice's balance and deprecation headers, latest
    added: tuple[dict[str, Any], ...]  # the messages the planner added, as they were
    markers: tuple[dict[str, Any], ...]  # where it compacted (`context.marker`), for the record

    def on(self, receipt: Receipt, **more: Any) -> Receipt:
        """`receipt` (the loop's) with the model's part, and `more` fields of the caller's."""
        return receipt.replace(
            rounds=min(receipt.rounds, self.requests),  # a round stopped before its request
            model=self.model,
            usage=self.usage,
            cost_usd=self.cost_usd,
            balance=self.balance,
            context_tokens=self.context_tokens,
            cached_tokens=self.cached_tokens,
            compacted=self.compacted,
            parsed=self.parsed if receipt.stopped_because is Exit.ANSWERED else None,
            unmeasured=self.unmeasured,
            unstreamed=self.unstreamed,
            notes=self.notes,
            thinking=self.thinking,
            sources=self.sources,
            **more,
        )
