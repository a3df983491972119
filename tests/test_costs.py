"""Money: usage kept whole, prices from /models, cost on every model receipt, a cap checked
before each request (pure parts, the agent against the strict fake server, and a property)."""

from __future__ import annotations

import asyncio
import json
import math
from contextlib import asynccontextmanager

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from venice_terminal_agent import Exit
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.costs import (
    Cap,
    Prices,
    add_usage,
    cached_tokens,
    measured,
    round_cost,
    server_cost,
    spent,
    tokens,
    unspent,
    usd,
)
from venice_terminal_agent.core.errors import ConfigError
from venice_terminal_agent.core.toolbox import FunctionToolbox
from venice_terminal_agent.model import RetryPolicy, VeniceClient
from venice_terminal_agent.model.models import ModelFacts
from venice_terminal_agent.model.stream import Assembler, Completion
from venice_terminal_agent.testing import FakeVenice

PRICING = {
    "input": {"usd": 0.5, "diem": 0.5},
    "output": {"usd": 2.0, "diem": 2.0},
    "cache_input": {"usd": 0.05},
}
VENICE_USAGE = {
    "prompt_tokens": 1000,
    "completion_tokens": 200,
    "total_tokens": 1200,
    "prompt_tokens_details": {"cached_tokens": 800},
    "completion_tokens_details": {"reasoning_tokens": 150},
}


async def no_wait(_seconds: float) -> None:
    return None


def test_the_stream_keeps_every_usage_field_and_the_cost() -> None:
    assembler = Assembler()
    assembler.feed({"choices": [{"index": 0, "delta": {"content": "hi"}}]})
    assembler.feed({"choices": [], "usage": VENICE_USAGE, "cost": {"usd": 0.0031, "diem": 0}})
    usage = assembler.finish().usage
    assert usage == {**VENICE_USAGE, "cost": {"usd": 0.0031, "diem": 0}}


def test_usage_adds_up_field_by_field() -> None:
    total = add_usage(add_usage({}, VENICE_USAGE), {**VENICE_USAGE, "cost": {"usd": 0.01}})
    assert total["prompt_tokens"] == 2000 and total["total_tokens"] == 2400
    assert total["prompt_tokens_details"] == {"cached_tokens": 1600}
    assert total["completion_tokens_details"] == {"reasoning_tokens": 300}
    assert total["cost"] == {"usd": 0.01}


def test_usage_keeps_what_a_later_response_leaves_out_and_the_latest_of_the_rest() -> None:
    first = {"prompt_tokens": 10, "model": "a", "cost": 0.5, "flag": True}
    second = {"prompt_tokens": None, "model": "b", "cost": {"usd": 0.1}, "flag": True, "new": {"n": 2}}
    # A null never erases a count; text, flags and a figure that became an object are the
    # latest (a flag is not a number to add); an object seen first is kept whole.
    assert add_usage(first, second) == {
        "prompt_tokens": 10, "model": "b", "cost": {"usd": 0.1}, "flag": True, "new": {"n": 2},
    }  # fmt: skip


def test_tokens_are_counted_when_any_count_came_and_unknown_when_none_did() -> None:
    # The receipt says `tokens unknown` (never a measured-looking 0) when a response came
    # without counts: any one of the three counts is a measure, details or a NaN are not.
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        assert measured({key: 3}) and measured({key: 0})
    assert not measured({"prompt_tokens_details": {"cached_tokens": 3}})
    assert not measured({"total_tokens": math.nan, "prompt_tokens": True})
    # The server's total first, else prompt plus completion; a total that is no number is none.
    assert tokens({"total_tokens": 30, "prompt_tokens": 1, "completion_tokens": 2}) == 30
    assert tokens({"prompt_tokens": 12, "completion_tokens": 5}) == 17
    assert tokens({"total_tokens": math.nan, "prompt_tokens": 12, "completion_tokens": 5}) == 17
    assert tokens({"completion_tokens": 5}) == 5 and tokens({"prompt_tokens": 12}) == 12 and tokens({}) == 0


def test_cached_tokens_are_the_servers_count_zero_when_it_counted_and_unknown_when_it_did_not() -> None:
    assert cached_tokens({"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": 4}}) == 4
    assert cached_tokens({"prompt_tokens": 9}) == 0 and cached_tokens({}) == 0  # nothing unmeasured
    assert cached_tokens({"prompt_tokens": 9}, unmeasured=1) == 0  # some responses counted
    assert cached_tokens({}, unmeasured=1) is None  # none did: unknown, not 0
    assert cached_tokens({"prompt_tokens_details": {"cached_tokens": 4}}, unmeasured=1) == 4
    for odd in (math.nan, True, "4"):  # not a count: as if none were sent
        assert cached_tokens({"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": odd}}) == 0


def test_prices_are_the_usd_of_input_and_output_each_a_number_at_least_zero() -> None:
    assert Prices.from_pricing({"input": 0.5, "output": 2}) == Prices(0.5, 2.0)  # plain figures too
    assert Prices.from_pricing({"input": {"usd": 0}, "output": {"usd": 0}}) == Prices(0.0, 0.0)  # free
    assert Prices.from_pricing({"output": {"usd": 2}}) is None  # no input price: no prices
    assert Prices.from_pricing([0.5, 2]) is None and Prices.from_pricing(None) is None
    for odd in (-0.5, math.nan, math.inf, True, "0.5", {"diem": 0.5}):
        assert Prices.from_pricing({"input": odd, "output": 2}) is None
        assert Prices.from_pricing({"input": 0.5, "output": 2, "cache_input": odd}) == Prices(0.5, 2.0)


def test_cached_input_is_priced_at_the_cache_price_only_when_there_is_one() -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 800}}
    assert Prices(1.0, 10.0).of(usage) == pytest.approx((1000 * 1.0 + 10 * 10.0) / 1e6)  # no cache price
    assert Prices(1.0, 10.0, 0.0).of(usage) == pytest.approx((200 * 1.0 + 10 * 10.0) / 1e6)  # a free cache
    more_cached = {**usage, "prompt_tokens_details": {"cached_tokens": 5000}}  # never more than the prompt
    assert Prices(1.0, 10.0, 0.1).of(more_cached) == pytest.approx((1000 * 0.1 + 10 * 10.0) / 1e6)
    assert Prices(1.0, 10.0, 0.1).of({"completion_tokens": 10}) == pytest.approx(100 / 1e6)
    none_cached = {"prompt_tokens": 1000, "prompt_tokens_details": {"cached_tokens": 0}}  # Venice's "none"
    assert Prices(1.0, 10.0, 0.1).of(none_cached) == Prices(1.0, 10.0, 0.1).of(
        {**none_cached, "prompt_tokens_details": {}}
    )
    assert Prices(1.0, 10.0, 0.1).of(none_cached) == pytest.approx(1000 / 1e6)
    assert Prices(1.0, 10.0, 0.1).of({"prompt_tokens": 10}) == pytest.approx(10 / 1e6)
    # The worst case counts every input token fresh and every output token used.
    assert Prices(1.0, 10.0, 0.1).worst(1000, 1000) == pytest.approx(0.011)


def test_the_servers_own_figure_is_its_usd_and_nothing_else() -> None:
    assert server_cost({"cost": {"usd": 0.5, "diem": 0}}) == 0.5
    assert server_cost({"cost": 0.25}) == 0.25  # a bare figure is USD
    for odd in ({"diem": 1}, {"usd": "0.5"}, {"usd": math.nan}, math.inf, True, "0.5", None):
        assert server_cost({"cost": odd}) is None
    prices = Prices(1.0, 10.0)
    # Without a figure, a response that counted either side is priced; one that counted neither is unknown.
    assert round_cost({"completion_tokens": 10}, prices) == pytest.approx(100 / 1e6)
    assert round_cost({"prompt_tokens": 10}, prices) == pytest.approx(10 / 1e6)
    assert round_cost({"total_tokens": 10}, prices) is None and round_cost({}, prices) is None
    # A request that generated nothing: $0 where prices are known, unknown where not.
    assert unspent(prices) == 0.0 and unspent(None) is None


def test_cost_is_the_servers_figure_first_else_computed_else_unknown() -> None:
    prices = Prices.from_pricing(PRICING)
    assert prices == Prices(0.5, 2.0, 0.05)
    assert round_cost({**VENICE_USAGE, "cost": {"usd": 0.0031}}, prices) == 0.0031
    # 200 fresh prompt tokens at $0.5, 800 cached at $0.05, 200 completion at $2 (per million)
    assert round_cost(VENICE_USAGE, prices) == pytest.approx((200 * 0.5 + 800 * 0.05 + 200 * 2.0) / 1e6)
    assert round_cost(VENICE_USAGE, None) is None
    assert Prices.from_pricing({"input": {"usd": 1}}) is None  # no output price: no prices


def test_money_reads_plainly() -> None:
    amounts = (0.0031, 0.012, 0.05, 0.004, 1.25, 0, 0.00002, 0.1, 0.5, 0.099, 1234.5, 1.5e-7)
    assert [usd(x) for x in amounts] == [
        "$0.0031", "$0.012", "$0.05", "$0.004", "$1.25", "$0.00", "$0.00002", "$0.10", "$0.50", "$0.099",
        "$1,234.50", "$0.00000015",  # one token at $0.15 a million: never an exponent
    ]  # fmt: skip


def test_what_a_session_spent_is_a_floor_when_some_costs_are_unknown_and_unknown_when_all_are() -> None:
    assert spent(0.031, False) == "$0.031" and spent(0.0, False) == "$0.00"
    assert spent(0.031, True) == "at least $0.031" and spent(0.5, True) == "at least $0.50"
    assert spent(0.0, True) == "cost unknown"


def test_the_cap_refusal_says_what_the_request_could_cost_and_what_is_left() -> None:
    cap = Cap(0.05, spent=0.046)
    assert cap.refuse(0.012, 4) == (
        "stopped before model request 4: it could cost up to $0.012 and $0.004 of the $0.05 cap is left"
    )
    assert cap.refuse(0.004, 4) is None
    assert Cap(0.05).refuse(0.05, 1) is None  # exactly what is left may still be spent
    # More spent than the cap (a request of unknown cost counted at its worst): nothing is left.
    assert Cap(0.05, spent=0.07).refuse(0.001, 2) == (
        "stopped before model request 2: it could cost up to $0.001 and $0.00 of the $0.05 cap is left"
    )


# The float edges of `affordable` (found by search): a left a hair under 482 tokens' worst at
# $0.9/$10, whose estimate is 482 tokens on the nose; and a left of exactly 4,977 tokens' worst
# at $0.5/$7, whose estimate is a hair under 4,977.
UNDER_482 = math.nextafter(Prices(0.9, 10.0).worst(869, 482), 0)
EXACTLY_4977 = Prices(0.5, 7.0).worst(3545, 4977)


@example(left=UNDER_482, input_price=0.9, output_price=10.0, input_tokens=869, most=8192, extra=0.0)
@example(left=EXACTLY_4977, input_price=0.5, output_price=7.0, input_tokens=3545, most=8192, extra=0.0)
# Not even the input paid; output free, just paid and not; a price near 0; search's price too:
@example(left=0.0005, input_price=1.0, output_price=10.0, input_tokens=1000, most=100, extra=0.0)
@example(left=0.001, input_price=1.0, output_price=0.0, input_tokens=1000, most=50, extra=0.0)
@example(left=0.0009, input_price=1.0, output_price=0.0, input_tokens=1000, most=50, extra=0.0)
@example(left=0.0, input_price=1.0, output_price=2.2e-309, input_tokens=0, most=8192, extra=0.01)
@example(left=0.011, input_price=1.0, output_price=10.0, input_tokens=1000, most=8192, extra=0.01)
@given(
    left=st.floats(0.0, 1.0),
    input_price=st.floats(0.0, 50),
    output_price=st.floats(0.0, 100) | st.floats(1e-320, 1e-300) | st.just(0.0),
    input_tokens=st.integers(0, 200_000),
    most=st.integers(0, 50_000),
    extra=st.sampled_from([0.0, 0.01]),
)
def test_the_output_a_cap_allows_is_the_most_the_money_left_pays_and_no_token_more(
    left: float, input_price: float, output_price: float, input_tokens: int, most: int, extra: float
) -> None:
    # `affordable` sets each capped request's max_completion_tokens (docs/models.md, money cap):
    # at that many tokens the request's worst case is within what is left, one token more is
    # not (or it is `most`), and 0 when not even the input is paid.
    prices = Prices(input_price, output_price)
    allowed = (
        prices.affordable(left, input_tokens, most, extra)
        if extra
        else prices.affordable(left, input_tokens, most)
    )

    def worst(tokens: int) -> float:
        return prices.worst(input_tokens, tokens) + extra

    assert 0 <= allowed <= most
    assert allowed == 0 or worst(allowed) <= left
    assert allowed == most or worst(allowed + 1) > left


def test_model_facts_come_from_the_models_listing() -> None:
    listing = [
        {"id": "other", "model_spec": {}},
        {"id": "m", "model_spec": {"pricing": PRICING, "maxCompletionTokens": 4096,
                                   "capabilities": {"supportsFunctionCalling": False}}},
    ]  # fmt: skip
    assert ModelFacts.from_listing(listing, "m") == ModelFacts(Prices(0.5, 2.0, 0.05), 4096, False)
    assert ModelFacts.from_listing([{"id": "m"}], "m") == ModelFacts()  # not Venice: all unknown


def echo_tools() -> FunctionToolbox:
    def echo(text: str) -> str:
        """Say it back."""
        return text

    return FunctionToolbox({"echo": echo}, read_only={"echo"})


def echo(n: int) -> dict:
    return {"tool_calls": [{"name": "echo", "arguments": {"text": str(n)}}]}


@asynccontextmanager
async def capped(script: dict, **options):
    async with FakeVenice(script) as fake:
        policy = RetryPolicy(sleep=no_wait, jitter=lambda: 0.5)
        async with VeniceClient("k", fake.base_url, retry=policy) as client:
            facts = await client.discovery.model_facts("fake-model")
            yield fake, Agent(client, echo_tools(), AgentOptions(model="fake-model", facts=facts, **options))


async def test_every_model_receipt_has_usage_and_cost_and_the_balance() -> None:
    script = {
        "replies": [{**echo(1), "usage": {"prompt_tokens_details": {"cached_tokens": 4}}}, {"text": "1"}],
        "model_spec": {"pricing": PRICING},
        "headers": {"x-venice-balance-usd": "12.50", "x-venice-balance-diem": "3"},
    }
    async with capped(script) as (_, agent):
        receipt = await agent.ask("echo 1")
    data = receipt.to_dict()
    assert data["usage"]["prompt_tokens_details"] == {"cached_tokens": 4}
    assert data["usage"]["total_tokens"] == 30
    assert data["cost_usd"] == pytest.approx((6 * 0.5 + 4 * 0.05 + 5 * 2.0 + 10 * 0.5 + 5 * 2.0) / 1e6)
    assert data["balance"] == {"usd": "12.50", "diem": "3"}
    assert receipt.summary() == "stopped: answered · 1 call · 2 rounds · 30 tokens · $0.000028"


async def test_without_prices_the_cost_is_unknown_and_said_so() -> None:
    async with capped({"replies": [{"text": "hi"}]}) as (_, agent):
        receipt = await agent.ask("hi")
    assert receipt.to_dict()["cost_usd"] is None and receipt.summary().endswith("· 15 tokens · cost unknown")


async def test_the_cap_stops_before_the_request_that_could_pass_it() -> None:
    # Output $10 a million tokens, 1000 of them asked (MAX_COMPLETION_TOKENS, so not shortened
    # to what is left): each request could cost $0.01 more.
    spec = {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}, "maxCompletionTokens": 1000}
    replies = [{**echo(n), "usage": {"completion_tokens": 900}} for n in range(1, 5)]  # $0.009 each
    script = {"replies": replies, "model_spec": spec}
    async with capped(script, max_usd=0.025, max_completion_tokens=1000) as (fake, agent):
        before = list(agent.history)
        receipt = await agent.ask("keep echoing")
        requests = len(fake.chat_requests)
    assert receipt.stopped_because is Exit.COST_CAP and receipt.exit_status == 8
    assert receipt.refusal.startswith("stopped before model request 3: it could cost up to $0.01")
    assert receipt.refusal.endswith("of the $0.025 cap is left")
    assert requests == 2 and receipt.cost_usd <= 0.025
    assert agent.history == before  # not a partial exit: rolled back
    fake.script["replies"].clear()  # the two replies never asked for are not a failure


async def test_a_session_cap_spans_questions() -> None:
    spec = {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}, "maxCompletionTokens": 1000}
    one = {"text": "one", "usage": {"completion_tokens": 900}}  # $0.009 of the $0.015
    async with capped({"replies": [one, {"text": "two"}], "model_spec": spec},
                      session_max_usd=0.015, max_completion_tokens=1000) as (fake, agent):  # fmt: skip
        first = await agent.ask("one")
        second = await agent.ask("two")
        fake.script["replies"].clear()
    assert first.stopped_because is Exit.ANSWERED
    assert second.stopped_because is Exit.COST_CAP and "of the $0.015 session cap is left" in second.refusal


async def test_a_summary_request_whose_cost_cannot_be_known_counts_at_its_worst_on_the_session_cap() -> None:
    # /compact's summary request loses its connection (each attempt): the model may have begun,
    # so its cost is unknown and counts as the most it could have been (about $0.01 here).
    # What is left of the $0.015 is then too little for another request that could cost $0.01.
    spec = {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}, "maxCompletionTokens": 1000}
    lost = {"text": "the summary so far", "drop": True}
    replies = [{"text": "noted"}] * 6 + [lost] * 3  # six rounds, then the summary's three attempts
    async with capped(
        {"replies": replies, "model_spec": spec}, session_max_usd=0.015, max_completion_tokens=1000
    ) as (fake, agent):
        for number in range(6):
            assert (await agent.ask(f"question {number}")).stopped_because is Exit.ANSWERED
        said = await agent.compact()
        assert said.startswith("not compacted: cannot reach the model server")
        third = await agent.ask("question 6")
        sent = len(fake.chat_requests)
    assert agent.spent_unknown  # the session's spend is a floor from now on
    assert third.stopped_because is Exit.COST_CAP and "of the $0.015 session cap is left" in third.refusal
    assert sent == 9  # the last question made no request


async def test_a_cap_without_prices_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="a money cap needs the model's prices"):
        async with capped({"replies": []}, max_usd=1.0):
            pass
    # Prices without an output limit (every Venice text model) are enough: each request asks
    # for what the money left can pay.
    spec = {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}}
    async with capped({"replies": [], "model_spec": spec}, max_usd=1.0) as (_, agent):
        assert agent.cannot_cap() is None


async def test_the_limit_sent_is_bounded_by_the_models_own() -> None:
    spec = {"pricing": {"input": {"usd": 1}, "output": {"usd": 10}}, "maxCompletionTokens": 512}
    async with capped({"replies": [{"text": "hi"}], "model_spec": spec}, max_completion_tokens=8192) as (
        fake,
        agent,
    ):
        await agent.ask("hi")
    assert fake.chat_requests[0]["max_completion_tokens"] == 512


class PlausibleModel:
    """An in-process model whose usage stays within what a request can really use: prompt
    tokens no more than the request's bytes, completion tokens no more than the limit."""

    def __init__(self, draws: list[tuple[float, float, bool]], limit: int | None) -> None:
        self.draws, self.limit, self.n = draws, limit, 0

    async def complete(
        self, model, messages, tools=(), *, temperature=None, events=None, max_completion_tokens=None
    ):
        size = len(json.dumps([*messages, *tools], ensure_ascii=False).encode())
        prompt_share, completion_share, call = self.draws[self.n % len(self.draws)]
        self.n += 1
        limits = [limit for limit in (self.limit, max_completion_tokens) if limit is not None]
        most = min(limits, default=100_000)  # a model's own limit, unpublished
        usage = {
            "prompt_tokens": int(size * prompt_share),
            "completion_tokens": int(most * completion_share),
        }
        message = {"role": "assistant", "content": "done"}
        if call and tools:
            function = {"name": "echo", "arguments": json.dumps({"text": str(self.n)})}
            message = {"role": "assistant", "content": None,
                       "tool_calls": [{"id": f"c{self.n}", "type": "function", "function": function}]}  # fmt: skip
        return Completion(message, usage=usage)


@settings(max_examples=150, deadline=None)
@given(
    draws=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.booleans()), min_size=1, max_size=8),
    input_price=st.floats(0.01, 50),
    output_price=st.floats(0.01, 100),
    limit=st.none() | st.integers(1, 20_000),  # None: the model publishes none (Venice's)
    cap=st.floats(0.0001, 0.5),
)
def test_the_spend_on_receipts_never_passes_the_cap(draws, input_price, output_price, limit, cap) -> None:
    facts = ModelFacts(Prices(input_price, output_price), limit)

    async def run() -> float:
        options = AgentOptions(model="m", facts=facts, session_max_usd=cap, budget=6, max_rounds=8)
        agent = Agent(PlausibleModel(draws, limit), echo_tools(), options)
        total = 0.0
        for question in ("a", "b", "c"):
            receipt = await agent.ask(question)
            assert receipt.cost_usd is not None
            total += receipt.cost_usd
        return total

    assert asyncio.run(run()) <= cap + 1e-12
