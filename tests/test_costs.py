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
from venice_terminal_agent.core.costs import Cap, Prices, add_usage, round_cost, usd
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


def test_cost_is_the_servers_figure_first_else_computed_else_unknown() -> None:
    prices = Prices.from_pricing(PRICING)
    assert prices == Prices(0.5, 2.0, 0.05)
    assert round_cost({**VENICE_USAGE, "cost": {"usd": 0.0031}}, prices) == 0.0031
    # 200 fresh prompt tokens at $0.5, 800 cached at $0.05, 200 completion at $2 (per million)
    assert round_cost(VENICE_USAGE, prices) == pytest.approx((200 * 0.5 + 800 * 0.05 + 200 * 2.0) / 1e6)
    assert round_cost(VENICE_USAGE, None) is None
    assert Prices.from_pricing({"input": {"usd": 1}}) is None  # no output price: no prices


def test_money_reads_plainly() -> None:
    assert [usd(x) for x in (0.0031, 0.012, 0.05, 0.004, 1.25, 0, 0.00002)] == [
        "$0.0031", "$0.012", "$0.05", "$0.004", "$1.25", "$0.00", "$0.00002",
    ]  # fmt: skip


def test_the_cap_refusal_says_what_the_request_could_cost_and_what_is_left() -> None:
    cap = Cap(0.05, spent=0.046)
    assert cap.refuse(0.012, 4) == (
        "stopped before model request 4: it could cost up to $0.012 and $0.004 of the $0.05 cap is left"
    )
    assert cap.refuse(0.004, 4) is None  # exactly what is left may still be spent


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
