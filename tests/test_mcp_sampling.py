"""MCP sampling: server-everything's `trigger-sampling-request` asks our model, over real stdio,
while a question runs on the fake Venice server (real HTTP): the person's yes first, then the
model through our client; one round of the question, its usage and cost in the receipt; never
past the round or money limits; the server's own tools offered to the model, each call the model
proposes approved before it goes back to the server."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from servers.node import EVERYTHING_ENV, bin_path
from venice_terminal_agent import Exit
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.consent import Consent, Why
from venice_terminal_agent.core.costs import Prices
from venice_terminal_agent.core.defaults import CAPPED_OUTPUT_TOKENS
from venice_terminal_agent.core.errors import ConfigError
from venice_terminal_agent.core.events import Notice
from venice_terminal_agent.mcp.features import ClientFeatures
from venice_terminal_agent.mcp.sampling import sampling
from venice_terminal_agent.mcp.sampling_model import SamplingDesk
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.servers_file import parse_servers
from venice_terminal_agent.mcp.session import SessionHooks
from venice_terminal_agent.mcp.toolbox import McpToolbox
from venice_terminal_agent.model import VeniceClient
from venice_terminal_agent.model.models import ModelFacts
from venice_terminal_agent.testing import FakeVenice

TOOL = "trigger-sampling-request"
TRIP_SERVER = Path(__file__).parent / "servers" / "trip_server.py"  # sampling with the server's own tool
PRICES = Prices(input=1.0, output=2.0)  # USD per million tokens


def everything(**options) -> ServerConfig:
    return ServerConfig(
        "everything", command=str(bin_path("mcp-server-everything")), args=("stdio",), env=EVERYTHING_ENV, **options
    )


def trigger(prompt: str, max_tokens: int = 50) -> dict:
    return {"tool_calls": [{"name": TOOL, "arguments": {"prompt": prompt, "maxTokens": max_tokens}}]}


class Person:
    """Says yes to the tool call itself and `sampling` to a sampling request; keeps what it saw."""

    def __init__(self, sampling: bool) -> None:
        self.sampling, self.asked = sampling, []

    async def __call__(self, call, spec, why) -> bool:
        self.asked.append((call, spec, why))
        return self.sampling if why is Why.SAMPLING else True

    def sampling_asked(self) -> list:
        return [(call, spec) for call, spec, why in self.asked if why is Why.SAMPLING]


@asynccontextmanager
async def question_on(script, person: Person, facts=None, **options):
    desk = SamplingDesk()
    hooks = SessionHooks(client_options=ClientFeatures(sampling=desk).client_options)
    async with FakeVenice(script) as fake, McpToolbox.open([everything()], hooks=hooks) as box:
        async with VeniceClient("k", fake.base_url) as client:
            facts = facts or ModelFacts(prices=PRICES, max_completion_tokens=1000)
            chosen = AgentOptions(model="fake-model", facts=facts, sampling=desk, **options)
            yield fake, Agent(client, Consent(box, approver=person), chosen)


async def test_approved_the_request_goes_to_our_model_and_counts_in_the_receipt():
    person = Person(sampling=True)
    script = [trigger("name a colour"), {"text": "teal", "usage": {"prompt_tokens": 7, "completion_tokens": 1}},
              {"text": "The server heard teal."}]  # fmt: skip
    async with question_on(script, person) as (fake, agent):
        receipt = await agent.ask("ask the server to sample")
    assert receipt.stopped_because is Exit.ANSWERED and receipt.answer == "The server heard teal."
    sampled = fake.chat_requests[1]
    assert sampled["messages"] == [
        {"role": "system", "content": "You are a helpful test server."},
        {"role": "user", "content": f"Resource {TOOL} context: name a colour"},
    ]
    assert "tools" not in sampled and sampled["max_completion_tokens"] == 50 and sampled["temperature"] == 0.7
    assert '"text": "teal"' in receipt.steps[0].result and '"model": "fake-model"' in receipt.steps[0].result
    [(shown, spec)] = person.sampling_asked()
    assert spec.server == "everything" and shown.arguments["max_tokens"] == 50
    assert "name a colour" in shown.arguments["request"]
    # The sampling request is a round of the question, its usage and cost are the question's.
    assert receipt.rounds == 3 and receipt.calls == 1
    assert receipt.usage == {
        "prompt_tokens": 27,
        "completion_tokens": 11,
        "total_tokens": 38,
    }  # 10+7+10, 5+1+5
    assert receipt.cost_usd == pytest.approx(PRICES.of(receipt.usage))
    assert agent.history[-1] == {"role": "assistant", "content": "The server heard teal."}
    assert all(m["content"] != "teal" for m in agent.history)  # the conversation is not touched


async def test_declined_the_server_gets_an_error_and_the_model_is_not_asked():
    person = Person(sampling=False)
    async with question_on([trigger("name a colour"), {"text": "It was declined."}], person) as (fake, agent):
        receipt = await agent.ask("ask the server to sample")
    assert len(fake.chat_requests) == 2 and len(person.sampling_asked()) == 1
    assert "everything's sampling request was declined by the user" in str(receipt.steps[0])
    assert receipt.stopped_because is Exit.ANSWERED and receipt.rounds == 2


async def test_at_its_last_round_a_question_declines_sampling_without_asking():
    person, notices = Person(sampling=True), []
    script = [trigger("name a colour"), {"text": "Partial: no sample."}]
    async with question_on(script, person, max_rounds=2) as (fake, agent):
        receipt = await agent.ask(
            "ask", events=lambda event: isinstance(event, Notice) and notices.append(event.text)
        )
    assert person.sampling_asked() == [] and len(fake.chat_requests) == 2  # round 2: the partial answer
    assert receipt.stopped_because is Exit.MAX_ROUNDS and receipt.rounds == 2 and receipt.partial
    reason = "everything's sampling request was declined: the question is at its round limit (2)"
    assert notices == [reason] and reason in str(receipt.steps[0])


async def test_a_request_that_could_pass_the_money_cap_is_declined_without_asking():
    person, notices = Person(sampling=True), []
    # The first request leaves $0.0001 of the $1 cap; the sampling request could cost more.
    spent = {"prompt_tokens": 10, "completion_tokens": 10, "cost": {"usd": 0.9999}}
    script = [{**trigger("name a colour"), "usage": spent}]
    async with question_on(script, person, max_usd=1.0) as (fake, agent):
        receipt = await agent.ask(
            "ask", events=lambda event: isinstance(event, Notice) and notices.append(event.text)
        )
    assert person.sampling_asked() == [] and len(fake.chat_requests) == 1
    assert notices[0].startswith(
        "everything's sampling request was declined: it could pass the question's money cap"
    )
    assert receipt.stopped_because is Exit.COST_CAP and receipt.cost_usd == pytest.approx(0.9999)


async def test_under_a_cap_a_sampling_request_asks_for_no_more_than_the_money_left_pays():
    # The model publishes no output limit (Venice's); the server asks for up to 10,000 tokens,
    # and $0.01 less the first request pays about 4,800 of them at $2 a million after the input.
    person = Person(sampling=True)
    script = [trigger("name a colour", 10_000), {"text": "teal"}, {"text": "The server heard teal."}]
    async with question_on(script, person, ModelFacts(prices=PRICES), max_usd=0.01) as (fake, agent):
        receipt = await agent.ask("ask the server to sample")
    assert receipt.stopped_because is Exit.ANSWERED and len(person.sampling_asked()) == 1
    first, sampled = fake.chat_requests[:2]
    left = 0.01 - (10 * PRICES.input + 5 * PRICES.output) / 1e6  # the first request's cost
    sent = json.dumps([*sampled["messages"], *sampled.get("tools", [])], ensure_ascii=False, default=str)
    pays = int((left - len(sent.encode()) * PRICES.input / 1e6) * 1e6 / PRICES.output)
    assert pays - 1 <= sampled["max_completion_tokens"] <= pays < 10_000
    assert 0 < first["max_completion_tokens"] < CAPPED_OUTPUT_TOKENS  # the question's own, capped too


@asynccontextmanager
async def trip_question(script, person: Person):
    desk = SamplingDesk()
    hooks = SessionHooks(client_options=ClientFeatures(sampling=desk).client_options)
    server = ServerConfig("trip", command=sys.executable, args=(str(TRIP_SERVER),))
    async with FakeVenice(script) as fake, McpToolbox.open([server], hooks=hooks) as box:
        async with VeniceClient("k", fake.base_url) as client:
            yield (
                fake,
                Agent(client, Consent(box, approver=person), AgentOptions(model="fake-model", sampling=desk)),
            )


def weather_call(city: str) -> dict:
    return {"tool_calls": [{"name": "weather", "arguments": {"city": city}, "id": "w1"}]}


async def test_the_servers_tools_each_call_approved_go_back_to_the_server_to_run():
    person = Person(sampling=True)
    script = [{"tool_calls": [{"name": "forecast", "arguments": {"city": "Prague"}}]}, weather_call("Prague"),
              {"text": "Sunny in Prague."}, {"text": "It will be sunny."}]  # fmt: skip
    async with trip_question(script, person) as (fake, agent):
        receipt = await agent.ask("weather?")
    assert receipt.stopped_because is Exit.ANSWERED and "Sunny in Prague." in receipt.steps[0].result
    first, second = fake.chat_requests[1], fake.chat_requests[2]
    assert [tool["function"]["name"] for tool in first["tools"]] == ["weather"]
    assert second["messages"][1:] == [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "w1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Prague"}'}}]},
        {"role": "tool", "tool_call_id": "w1", "content": "sunny in Prague"},
    ]  # fmt: skip
    asked = [(call.tool, spec.server, why) for call, spec, why in person.asked]
    assert asked == [("forecast", "trip", Why.PAID), ("sampling", "trip", Why.SAMPLING),
                     ("weather", "trip", Why.PAID), ("sampling", "trip", Why.SAMPLING)]  # fmt: skip
    assert receipt.rounds == 4  # the question's two and the two sampling requests


async def test_a_declined_call_of_the_servers_tool_refuses_the_sampling_answer():
    class NoWeather(Person):
        async def __call__(self, call, spec, why) -> bool:
            await super().__call__(call, spec, why)
            return call.tool != "weather"

    script = [{"tool_calls": [{"name": "forecast", "arguments": {"city": "Prague"}}]}, weather_call("Prague"),
              {"text": "No forecast."}]  # fmt: skip
    async with trip_question(script, NoWeather(sampling=True)) as (fake, agent):
        receipt = await agent.ask("weather?")
    assert (
        "trip's sampling request was declined: the model's call to weather was declined by the user"
        in str(receipt.steps[0])
    )
    assert len(fake.chat_requests) == 3


async def test_calls_of_the_servers_tool_count_against_the_questions_budget():
    person = Person(sampling=True)
    script = [{"tool_calls": [{"name": "forecast", "arguments": {"city": "Prague"}}]}, weather_call("Prague"),
              {"text": "No forecast."}]  # fmt: skip
    async with trip_question(script, person) as (_, agent):
        receipt = await agent.ask("weather?", budget=1)  # forecast itself is the one call
    reason = "the model proposed 1 call and 0 calls of the question's budget is left"
    assert f"trip's sampling request was declined: {reason}" in str(receipt.steps[0])
    assert [call.tool for call, _, _ in person.asked] == ["forecast", "sampling"]  # weather: never asked


async def test_images_and_requests_outside_a_question_are_refused():
    from mcp.types import CreateMessageRequestParams, ImageContent, SamplingMessage, TextContent

    answer = sampling("srv", SamplingDesk())  # no question is running
    image = SamplingMessage(
        role="user", content=ImageContent(type="image", data="AA==", mime_type="image/png")
    )
    with_image = await answer(None, CreateMessageRequestParams(messages=[image], max_tokens=10))
    assert (with_image.code, with_image.message) == (
        -1,
        "venice-agent samples text only; the request holds image content",
    )
    text = SamplingMessage(role="user", content=TextContent(type="text", text="hi"))
    nobody = await answer(None, CreateMessageRequestParams(messages=[text], max_tokens=10))
    assert nobody.message.startswith("srv's sampling request was declined: no question is running")


async def test_a_server_marked_sampling_false_is_not_offered_it(monkeypatch):
    hooks = SessionHooks(client_options=ClientFeatures(sampling=SamplingDesk()).client_options)
    async with McpToolbox.open([everything(sampling=False)], hooks=hooks) as box:
        assert TOOL not in box and "get-sum" in box  # server-everything lists it only to a sampling client
    entry = {"command": "x", "sampling": False}
    monkeypatch.delenv("APIFY_TOKEN", raising=False)
    from venice_terminal_agent.config import load_settings

    [server] = parse_servers({"mcpServers": {"s": entry}}, "mcp.json", load_settings(), {})
    assert server.sampling is False
    with pytest.raises(ConfigError, match="'sampling' is true or false"):
        parse_servers(
            {"mcpServers": {"s": {"command": "x", "sampling": "no"}}}, "mcp.json", load_settings(), {}
        )
