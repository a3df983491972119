"""What one model request may spend under a money cap: the arithmetic, pure, in one place.

Before each request the planner's ledger (ledger.py) measures what is sent once (`input_bound`)
and asks a `Spending` (the model's prices and output limit, MAX_COMPLETION_TOKENS, the most a web
search adds) three things, with what is left of the `Cap`:
- `refusal`: why the request must not be made (the question ends `cost_cap`), or None;
- `request_limit`: the output limit to send with it (under a cap without MAX_COMPLETION_TOKENS,
  what the money left can pay for after the worst-case input: `capped`);
- `worst`: the most it can cost, counted against the cap when its real cost cannot be known;
and of the response, `cost`: what it did cost.
When an answer is cut at the limit sent, `cut_reason` says why, naming the cap when it was the
cap's. Prices do the sums (`Prices.worst`, and `Prices.affordable` that inverts it); nothing
here keeps state, sends anything or reads a clock, so anyone reserving money before a request
(a batch of questions under one cap) asks the same questions of the same record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.context import sent_bytes
from ..core.costs import Cap, Prices, round_cost, server_cost
from ..core.defaults import CAPPED_OUTPUT_MIN, CAPPED_OUTPUT_TOKENS
from ..core.record import Record
from ..core.tokens import IMAGE_MOST_TOKENS


def input_bound(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
    """At least as many input tokens as the request can have: a token is at least one byte of
    what is sent, and the JSON around each message outweighs a template's few tokens; an image
    is not its bytes but at most `IMAGE_MOST_TOKENS` (core/tokens.py)."""
    return sent_bytes(messages, tools, lambda url: IMAGE_MOST_TOKENS)


class Spending(Record):
    """The money rules of one model's requests (a question's `Ledger` makes one from its facts)."""

    prices: Prices | None  # USD per million tokens; None: the server publishes none
    model_limit: int | None = None  # the model's output maximum (/models, or the one a server named)
    setting_limit: int | None = None  # MAX_COMPLETION_TOKENS, sent with every request when set
    search_usd: float = 0.0  # the most a request's web search adds to its cost

    def output_limit(self, asked: int | None = None) -> int | None:
        """The most output tokens a request may take: the setting's and the model's limit, and
        `asked` (a sampling request's); None when none is known."""
        limits = [self.setting_limit, self.model_limit, asked]
        return min((limit for limit in limits if limit is not None), default=None)

    def capped(self, cap: Cap | None) -> bool:
        """Each request's output limit is the money cap's (`request_limit`): a cap and the
        model's prices are known, and MAX_COMPLETION_TOKENS does not fix the limit."""
        return self._capping(cap) is not None

    def _capping(self, cap: Cap | None) -> Prices | None:
        """The prices a capped request's limit is reckoned at; None when it is not `capped`."""
        return self.prices if cap is not None and self.setting_limit is None else None

    def worst(self, bound: int, limit: int | None = None) -> float | None:
        """The most a request of `bound` input tokens and at most `limit` output tokens (else
        the output limit) can cost, its web search included; None when the prices or the
        output limit are unknown."""
        limit = self.output_limit() if limit is None else limit
        if self.prices is None or limit is None:
            return None
        return self.prices.worst(bound, limit) + self.search_usd

    def cost(self, usage: Mapping[str, Any], *, searched: bool = False) -> float | None:
        """What a response cost: the server's figure, else its tokens at the prices, and the
        web search's price when it brought results (`searched`) and the server sent no figure
        of its own; None: unknown (no prices, no usage)."""
        cost = round_cost(usage, self.prices)
        if cost is not None and searched and server_cost(usage) is None:
            cost += self.search_usd
        return cost

    def request_limit(self, cap: Cap | None, bound: int, asked: int | None = None) -> int | None:
        """The output limit to send with a request of `bound` input tokens (None: none). Under
        `capped`: what the money left can pay for, at most the model's own limit, else
        `CAPPED_OUTPUT_TOKENS`, and at most `asked`. Otherwise MAX_COMPLETION_TOKENS and `asked`,
        as the model's limit bounds them."""
        prices = self._capping(cap)
        if cap is not None and prices is not None:
            most = self.output_limit(asked) or CAPPED_OUTPUT_TOKENS
            return prices.affordable(cap.left, bound, most, self.search_usd)
        if self.setting_limit is None and asked is None:
            return None
        return self.output_limit(asked)

    def refusal(
        self,
        cap: Cap | None,
        bound: int,
        asked: int | None = None,
        *,
        request: int = 1,
        model: str = "the model",
    ) -> str | None:
        """Why model request number `request` (`bound` input tokens, at most `asked` output
        tokens) must not be made under `cap`, or None. Under `capped` it is made when the money
        left pays its worst-case input and a short answer (`CAPPED_OUTPUT_MIN` tokens, or fewer
        when fewer are asked); otherwise when it pays the request's worst at the output limit."""
        if cap is None:
            return None
        prices = self._capping(cap)
        if prices is not None:
            most = self.output_limit(asked) or CAPPED_OUTPUT_TOKENS
            short = min(CAPPED_OUTPUT_MIN, most)
            if prices.affordable(cap.left, bound, most, self.search_usd) >= short:
                return None
            worst = self.worst(bound, short)
        else:
            worst = self.worst(bound, self.output_limit(asked))
        if worst is None:  # refused up front as a setting error (`Agent.cannot_cap`); a safety net
            return f"stopped before model request {request}: no price or output limit is known for {model}"
        return cap.refuse(worst, request)

    def cut_reason(self, cap: Cap | None, limit: int | None, used: int | None = None) -> str:
        """Why an answer cut at the output limit is partial: the limit `cap` left for its
        request, the ceiling of a capped request, or the output limit (`limit`, the one sent,
        else `used`, the output tokens the server counted)."""
        if limit is not None and self.capped(cap):
            model_limit = self.output_limit()
            if limit < (model_limit or CAPPED_OUTPUT_TOKENS):
                return capped_cut(limit, cap)
            if model_limit is None:  # the ceiling of a capped request, the model's limit unknown
                return output_cut(limit, True, ceiling=True)
        limit = limit or (used if used is not None and used > 0 else None)
        return output_cut(limit, self.setting_limit is not None)


def output_cut(limit: int | None, ours: bool, *, ceiling: bool = False) -> str:
    """Why an answer is partial when the output limit cut it; `ours`: the limit is the setting's;
    `ceiling`: it is `CAPPED_OUTPUT_TOKENS`, asked under a money cap for a model that publishes none."""
    if limit is None:
        return "the answer was cut at the model's output limit"
    if ceiling:
        return (
            f"the answer was cut at {limit:,} tokens, the most a request under a money cap asks for "
            "when the model publishes no output limit (set MAX_COMPLETION_TOKENS for a longer one)"
        )
    line = f"the answer was cut at the model's output limit of {limit:,} tokens"
    return line + " (raise MAX_COMPLETION_TOKENS for a longer one)" if ours else line


def capped_cut(limit: int, cap: Cap | None) -> str:
    """Why an answer is partial when the limit the money cap set for its request cut it."""
    flag = "--session-max-usd" if cap is not None and cap.name == "session cap" else "--max-usd"
    return (
        f"the money cap shortened the answer: it was cut at {limit:,} tokens, the output limit "
        f"the cap left for this request (raise {flag}, or set MAX_COMPLETION_TOKENS)"
    )
