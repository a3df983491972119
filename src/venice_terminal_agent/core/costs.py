"""Money, in one pure module: usage added up, prices, what a request cost, and the cap.

- `add_usage` keeps every field a server sends (cached and reasoning tokens, a `cost`
  object), adding numbers and merging objects, so nothing Venice reports is dropped.
- `Prices` come from `/models` (`model_spec.pricing`, USD per million tokens).
- `round_cost` is the server's own figure when it sends one, else computed from the prices,
  else None (unknown, never guessed).
- `Cap` is checked before each model request with the request's worst cost, never after:
  like the budget of calls, a request that could pass it is not made.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from .record import Record

PER = 1_000_000  # prices are per million tokens


def add_usage(total: Mapping[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """`total` plus `more`: numbers add up, objects merge field by field, the rest is the latest."""
    joined = dict(total)
    for key, value in more.items():
        old = joined.get(key)
        if _number(value) and _number(old):
            joined[key] = old + value
        elif isinstance(value, Mapping) and isinstance(old, Mapping):
            joined[key] = add_usage(old, value)
        elif isinstance(value, Mapping):
            joined[key] = add_usage({}, value)
        elif value is not None:
            joined[key] = value
    return joined


def measured(usage: Mapping[str, Any]) -> bool:
    """The server said how many tokens a response took (llama-cpp-python's stream does not)."""
    return any(_number(usage.get(key)) for key in ("prompt_tokens", "completion_tokens", "total_tokens"))


def cached_tokens(usage: Mapping[str, Any], unmeasured: int = 0) -> int | None:
    """Input tokens the server read from its prompt cache (`prompt_tokens_details.cached_tokens`,
    0 when it counted the tokens and said none); None when `unmeasured` responses came and
    none of them counted anything: unknown, never a measured-looking 0."""
    details = usage.get("prompt_tokens_details")
    found = details.get("cached_tokens") if isinstance(details, Mapping) else None
    if isinstance(found, int | float) and _number(found):
        return int(found)
    return None if unmeasured and not measured(usage) else 0


def tokens(usage: Mapping[str, Any]) -> int:
    total = usage.get("total_tokens")
    if isinstance(total, int | float) and _number(total):
        return int(total)
    return int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)


class Prices(Record):
    """USD per million tokens."""

    input: float
    output: float
    cache_input: float | None = None

    @classmethod
    def from_pricing(cls, pricing: object) -> Prices | None:
        """From `model_spec.pricing` (`{"input": {"usd": 0.5}, ...}`); None without both prices."""
        if not isinstance(pricing, Mapping):
            return None
        given = {key: _usd(pricing.get(key)) for key in ("input", "output", "cache_input")}
        if given["input"] is None or given["output"] is None:
            return None
        return cls(given["input"], given["output"], given["cache_input"])

    def of(self, usage: Mapping[str, Any]) -> float:
        """What `usage` cost at these prices (cached prompt tokens at the cache price, if any)."""
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        details = usage.get("prompt_tokens_details")
        cached = int(details.get("cached_tokens") or 0) if isinstance(details, Mapping) else 0
        cached = min(cached, prompt) if self.cache_input is not None else 0
        fresh = prompt - cached
        return (fresh * self.input + cached * (self.cache_input or 0.0) + completion * self.output) / PER

    def worst(self, input_tokens: int, output_tokens: int) -> float:
        """The most a request can cost: every input token fresh, every output token used."""
        return (input_tokens * self.input + output_tokens * self.output) / PER

    def affordable(self, left: float, input_tokens: int, most: int, extra: float = 0.0) -> int:
        """The most output tokens (up to `most`) `left` USD pays for at `worst` after
        `input_tokens` and `extra` USD (0: not even the input). A bisection on `worst` itself
        (it grows with the tokens), so a float's last digit never lets the answer pass `left`
        nor leaves a token `worst` would pay for, whatever the prices (a server may publish
        1e-310 or 0)."""
        paid = bisect.bisect_right(
            range(most + 1), left, key=lambda tokens: self.worst(input_tokens, tokens) + extra
        )
        return max(0, paid - 1)


def unspent(prices: Prices | None) -> float | None:
    """What a request that generated nothing cost (never sent, or refused outright with an
    error status): $0 where the model's prices are known; unknown on a server that publishes
    none, whose costs are never said, not even $0.00."""
    return 0.0 if prices is not None else None


def server_cost(usage: Mapping[str, Any]) -> float | None:
    """The USD figure the server sent with the usage (`cost: {"usd": …}`), if any."""
    cost = usage.get("cost")
    if isinstance(cost, Mapping) and _number(cost.get("usd")):
        return float(cost["usd"])
    return float(cost) if isinstance(cost, int | float) and _number(cost) else None


def round_cost(usage: Mapping[str, Any], prices: Prices | None) -> float | None:
    """One response's cost: the server's figure first, else computed, else unknown."""
    given = server_cost(usage)
    if given is not None:
        return given
    if prices is not None and ("prompt_tokens" in usage or "completion_tokens" in usage):
        return prices.of(usage)
    return None


class Cap(Record, frozen=False):
    """A money cap for one question (what is left of it), checked before each request."""

    limit: float  # USD
    name: str = "cap"  # how the refusal names it: "cap", "session cap"
    spent: float = 0.0

    @property
    def left(self) -> float:
        return max(0.0, self.limit - self.spent)

    def refuse(self, worst: float, request: int) -> str | None:
        """Why request number `request`, costing at most `worst`, must not be made; or None."""
        if worst <= self.left:
            return None
        return (
            f"stopped before model request {request}: it could cost up to {usd(worst)} "
            f"and {usd(self.left)} of the {usd(self.limit)} {self.name} is left"
        )


def usd(amount: float) -> str:
    """Money as people read it: $0.0031, $0.012, $0.05, $1.25; never an exponent."""
    if amount >= 0.1 or amount == 0:
        return f"${amount:,.2f}"
    return f"${format(Decimal(f'{amount:.2g}'), 'f')}"


def spent(known: float, unknown: bool) -> str:
    """What a session spent: `$0.031`; `at least $0.031` when some requests' cost is unknown
    (a server without prices, a reply cut before its usage); `cost unknown` when all are."""
    if not unknown:
        return usd(known)
    return f"at least {usd(known)}" if known > 0 else "cost unknown"


def _usd(price: object) -> float | None:
    value = price.get("usd") if isinstance(price, Mapping) else price
    return float(value) if isinstance(value, int | float) and _number(value) and value >= 0 else None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
