"""`Ledger`: the money of one question's model requests, kept beside the planner that makes them.

What was spent: every response's usage is added up whole and costed (the server's figure, else
the prices from `/models`). A cost that cannot be known stays unknown (a server with no prices,
a response with no usage, a request that failed after reaching the model or was cancelled),
never $0.00, and counts against the cap as its worst case (`unknown_worst`). Before each request
under a cap: whether it may be made (`check_cap`, the question ends `cost_cap` otherwise), the
output limit it is sent with (unless MAX_COMPLETION_TOKENS is set, no more than the money left
can pay for) and the most it can cost (`terms`); the arithmetic is `spending.py`'s.

The planner counts each request here, hands in each one's outcome (`charge`, or `unpaid` for
one that got no answer), and tells it the output maximum a server named (`facts`); its `Report`
reads the totals. The ledger makes no request and knows nothing of the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.costs import Cap, add_usage, measured, unspent
from ..core.errors import ModelError
from .models import ModelFacts
from .spending import Spending, input_bound
from .stream import Completion


class Ledger:
    """One question's requests counted and costed, and its cap's arithmetic."""

    def __init__(
        self,
        model: str,
        facts: ModelFacts,
        cap: Cap | None = None,
        max_completion_tokens: int | None = None,
        search_usd: float = 0.0,
    ) -> None:
        self.model = model  # the model asked, named in a refusal
        # Its prices and output maximum; a maximum a server names during the question replaces it.
        self.facts = facts
        self.cap = cap
        self.max_completion_tokens = max_completion_tokens  # sent with each request when set
        self.search_usd = search_usd  # the most a request's web search can add to its cost
        self.requests = 0
        self.usage: dict[str, Any] = {}
        self.known_cost = 0.0  # USD of the requests whose cost is known
        self.cost_unknown = False  # a request's cost could not be known
        self.priced = False  # a request's cost was known (the server's figure, or the prices)
        self.unknown_worst = 0.0  # the most those requests of unknown cost could have cost
        self.unmeasured = 0  # responses that came without token counts
        self.unstreamed = 0  # responses asked for without streaming (a server that cannot stream them)

    @property
    def cost(self) -> float | None:
        """USD this question spent; None once one request's cost is unknown, and while none
        was costed on a server that publishes no prices (a question refused before its first
        request there is `cost unknown`, as the server's every cost is)."""
        if self.cost_unknown:
            return None
        return self.known_cost if self.priced else unspent(self.facts.prices)

    def charge(self, turn: Completion, worst: float | None = None) -> float | None:
        """Add the response's usage and cost to the question's (a search that brought results
        costs its price when the server sent no cost of its own); `worst`: the most it could
        cost. Its cost (None: unknown)."""
        self.usage = add_usage(self.usage, turn.usage)
        if not measured(turn.usage):
            self.unmeasured += 1
        if not turn.streamed:
            self.unstreamed += 1
        cost = self.spending.cost(turn.usage, searched=bool(turn.citations))
        self.spend(cost, worst)
        return cost

    def unpaid(self, worst: float | None, error: ModelError | None) -> float | None:
        """A request that got no answer: free, and no tokens, when the server refused it outright
        (an HTTP error status: nothing was generated; the cost is said only where prices are
        known); cost and tokens unknown otherwise (it may have been cut, or cancelled, after
        the model began)."""
        refused = error is not None and error.status is not None
        if not refused:
            self.unmeasured += 1  # the model may have begun: its tokens are not known either
        cost = unspent(self.facts.prices) if refused else None
        self.spend(cost, worst)
        return cost

    def spend(self, cost: float | None, worst: float | None) -> None:
        if cost is None:
            self.cost_unknown = True
            self.unknown_worst += worst or 0.0
        else:
            self.known_cost += cost
            self.priced = True
        if self.cap is not None:  # an unknown cost counts as the most it could have been
            self.cap.spent += cost if cost is not None else worst or 0.0

    @property
    def spending(self) -> Spending:
        """The money rules of this question's requests (`spending.py`), from the model's facts as
        they are now (a server may name the model's output maximum during the question)."""
        facts = self.facts
        return Spending(
            facts.prices, facts.max_completion_tokens, self.max_completion_tokens, self.search_usd
        )

    def bound(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
        """The request's `input_bound`, measured under a money cap only (nothing else reads it)."""
        return input_bound(messages, tools) if self.cap is not None else 0

    def check_cap(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        asked: int | None = None,
        *,
        bound: int | None = None,
    ) -> str | None:
        """Why the next request (of at most `asked` output tokens) must not be made under the
        money cap, or None (`Spending.refusal`). `bound`: its input bound, when measured."""
        if self.cap is None:
            return None
        bound = self.bound(messages, tools) if bound is None else bound
        return self.spending.refusal(self.cap, bound, asked, request=self.requests + 1, model=self.model)

    def terms(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        asked: int | None = None,
        *,
        bound: int | None = None,
    ) -> tuple[int | None, float | None]:
        """The output limit sent with the next request (None: none) and the most it can cost
        (None without a cap: nothing else needs it), as `Spending` reckons them."""
        spending = self.spending
        bound = self.bound(messages, tools) if bound is None else bound
        limit = spending.request_limit(self.cap, bound, asked)
        return limit, spending.worst(bound, limit) if self.cap is not None else None

    def cut_reason(self, turn: Completion, limit: int | None) -> str:
        """Why an answer is partial (`Spending.cut_reason`): `limit` is the one sent."""
        used = turn.usage.get("completion_tokens")
        return self.spending.cut_reason(self.cap, limit, used if isinstance(used, int) else None)


__all__ = ["Ledger"]
