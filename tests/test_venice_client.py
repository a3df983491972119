"""The model client over real HTTP against the fake server: requests, errors, retries, discovery."""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest

from venice_terminal_agent.core.errors import OutputMaximumError
from venice_terminal_agent.core.events import TextDelta, TextDiscarded
from venice_terminal_agent.model import ModelError, NoModelError, RetryPolicy, VeniceClient
from venice_terminal_agent.model.errors import body_message, from_response, retry_after
from venice_terminal_agent.testing import FakeVenice, MockVenice

USER = [{"role": "user", "content": "hi"}]
TOOL = {"type": "function", "function": {"name": "echo", "parameters": {"type": "object", "properties": {}}}}


class Sleeps:
    """An injected sleep that records how long it was asked to wait, and never waits."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


@asynccontextmanager
async def served(script, *, attempts: int = 3, clock=None):
    sleeps = Sleeps()
    policy = RetryPolicy(attempts=attempts, sleep=sleeps, jitter=lambda: 0.5)
    if clock is not None:
        policy.clock = clock
    async with MockVenice(script) as fake:
        async with VeniceClient(
            "test-key", fake.base_url, retry=policy, http_client=fake.http_client()
        ) as client:
            yield fake, client, sleeps


async def test_request_has_no_nulls_tools_only_with_tools_and_venice_parameters() -> None:
    async with served([{"text": "a"}, {"text": "b"}]) as (fake, client, _):
        await client.complete("m", USER)
        await client.complete("m", USER, [TOOL], temperature=0.2)
    bare, with_tools = fake.chat_requests
    assert "tools" not in bare and "tool_choice" not in bare and "temperature" not in bare
    assert bare["venice_parameters"] == {"include_venice_system_prompt": False}
    assert bare["stream"] is True and bare["stream_options"] == {"include_usage": True}
    assert with_tools["tools"] == [TOOL] and with_tools["tool_choice"] == "auto"
    assert with_tools["temperature"] == 0.2
    assert fake.requests[0].headers["authorization"] == "Bearer test-key"


async def test_text_goes_out_as_events_while_it_streams() -> None:
    seen = []
    async with served([{"text": "one two three"}]) as (_, client, _):
        turn = await client.complete("m", USER, events=seen.append)
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["one ", "two ", "three"]
    assert turn.message == {"role": "assistant", "content": "one two three"}
    assert turn.usage["total_tokens"] == 15


async def test_venice_400_body_is_one_readable_line() -> None:
    body = {"error": "Invalid request parameters",
            "details": {"_errors": [], "max_completion_tokens": {"_errors": ["Number must be at most 4096"]}}}  # fmt: skip
    async with served([{"status": 400, "error": body}]) as (_, client, sleeps):
        with pytest.raises(ModelError) as caught:
            await client.complete("m", USER)
    message = caught.value.message
    assert message.startswith("the model server answered 400 Bad Request: Invalid request parameters")
    assert "max_completion_tokens: Number must be at most 4096" in message
    assert "[request fake-1]" in message and "\n" not in message
    assert sleeps.asked == []  # a 400 is not retried


@pytest.mark.parametrize(
    ("status", "says"),
    [(401, "rejected the API key"), (402, "balance is out")],
)
async def test_key_and_balance_errors_say_what_to_do(status: int, says: str) -> None:
    async with served([{"status": status}]) as (fake, client, sleeps):
        with pytest.raises(ModelError, match=says) as caught:
            await client.complete("m", USER)
    assert "test-key" not in caught.value.message
    assert sleeps.asked == [] and len(fake.chat_requests) == 1


async def test_429_is_retried_after_the_retry_after_it_asks_for() -> None:
    script = [{"status": 429, "headers": {"Retry-After": "2"}}, {"text": "finally"}]
    async with served(script) as (fake, client, sleeps):
        turn = await client.complete("m", USER)
    assert turn.text == "finally"
    assert sleeps.asked == [2.0]
    assert len(fake.chat_requests) == 2


async def test_5xx_backs_off_then_gives_up_with_the_count() -> None:
    script = [{"status": 503}, {"status": 500}, {"status": 502}, {"text": "never asked"}]
    async with served(script) as (fake, client, sleeps):
        with pytest.raises(ModelError, match=r"503|500|502") as caught:
            await client.complete("m", USER)
    assert "gave up after 3 attempts" in caught.value.message
    assert sleeps.asked == [0.5, 1.0]  # exponential backoff (jitter pinned to the middle)
    assert len(fake.chat_requests) == 3


async def test_no_retry_storm_past_the_failure_window() -> None:
    script = {"replies": [{"status": 500}], "loop": True}
    sleeps = Sleeps()
    policy = RetryPolicy(attempts=3, sleep=sleeps, clock=lambda: 1000.0, max_failures_in_window=4)
    async with MockVenice(script) as fake:
        async with VeniceClient("k", fake.base_url, retry=policy, http_client=fake.http_client()) as client:
            with pytest.raises(ModelError, match="gave up after 3 attempts"):
                await client.complete("m", USER)
            with pytest.raises(ModelError, match="not retrying: 5 failed requests in 30 s") as caught:
                await client.complete("m", USER)
    assert caught.value.status == 500
    assert len(fake.chat_requests) == 5  # 3 for the first question, 2 more, then it stopped


async def test_the_failure_window_belongs_to_the_client_not_to_the_shared_policy() -> None:
    policy = RetryPolicy(attempts=5, sleep=Sleeps(), clock=lambda: 1000.0, max_failures_in_window=2)
    async with MockVenice([{"status": 500}] * 3 + [{"status": 500}, {"text": "fine"}]) as fake:
        async with VeniceClient("k", fake.base_url, retry=policy, http_client=fake.http_client()) as busy:
            with pytest.raises(ModelError, match="not retrying: 3 failed requests"):
                await busy.complete("m", USER)
        async with VeniceClient("k", fake.base_url, retry=policy, http_client=fake.http_client()) as fresh:
            turn = await fresh.complete("m", USER)  # its own first failure: retried
    assert turn.text == "fine"


async def test_a_retry_after_too_long_is_not_waited_for() -> None:
    async with served([{"status": 429, "headers": {"Retry-After": "3600"}}]) as (_, client, sleeps):
        with pytest.raises(ModelError, match="asks to wait 3600 s"):
            await client.complete("m", USER)
    assert sleeps.asked == []


async def test_a_stream_cut_midway_is_retried_and_its_text_withdrawn() -> None:
    events = []
    async with served([{"text": "partial answ", "drop": True}, {"text": "whole answer"}]) as (
        _,
        client,
        sleeps,
    ):
        turn = await client.complete("m", USER, events=events.append)
    assert turn.text == "whole answer"
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("TextDiscarded") < len(kinds) - 1
    after = events[kinds.index("TextDiscarded") + 1 :]
    assert "".join(e.text for e in after if isinstance(e, TextDelta)) == "whole answer"
    assert len(sleeps.asked) == 1 and not any(isinstance(e, TextDiscarded) for e in after)


async def test_an_unreachable_server_is_named() -> None:
    async with FakeVenice([]) as fake:
        url = fake.base_url
    policy = RetryPolicy(attempts=2, sleep=Sleeps())
    async with VeniceClient("k", url, retry=policy) as client:
        with pytest.raises(
            ModelError, match=r"cannot reach the model server at http://127\.0\.0\.1:\d+/api/v1"
        ):
            await client.complete("m", USER)


async def test_model_discovery_order() -> None:
    async with served(
        {"models": ["a", "b"], "traits": {"default": "b", "function_calling_default": "a"}}
    ) as (
        _,
        client,
        _,
    ):
        assert await client.discovery.resolve_model("  b ") == "b"
        assert await client.discovery.resolve_model(None) == "a"
    async with served({"models": ["a", "b"], "traits": {"default": "b"}}) as (_, client, _):
        assert await client.discovery.resolve_model("") == "b"
    async with served({"models": ["only"], "traits": {}}) as (_, client, _):
        assert await client.discovery.resolve_model(None) == "only"
    async with served({"models": ["a", "b"], "traits": {}}) as (_, client, _):
        with pytest.raises(NoModelError, match="pass --model or set VENICE_MODEL; it serves a, b"):
            await client.discovery.resolve_model(None)


def test_error_bodies_of_every_shape() -> None:
    assert body_message({"error": {"message": "too long", "code": "context_length_exceeded"}}) == (
        "too long (context_length_exceeded)"
    )
    assert body_message({"code": "PAYLOAD_TOO_LARGE", "error": "Payload too large"}) == (
        "Payload too large (PAYLOAD_TOO_LARGE)"
    )
    assert body_message("upstream timed out\n") == "upstream timed out"


def test_a_400_naming_the_models_output_maximum_says_the_maximum() -> None:
    said = "max_completion_tokens (8192) exceeds the maximum allowed for model 'llama-3.3-70b' (4096)"
    for body in ({"error": said}, {"error": {"message": said}}, said):  # Venice's, OpenAI's, plain
        error = from_response(400, {}, body)
        assert isinstance(error, OutputMaximumError) and error.maximum == 4096
        assert not error.retryable and said in error.message
    assert not isinstance(from_response(400, {}, {"error": "Invalid request parameters"}), OutputMaximumError)
    assert not isinstance(from_response(500, {}, {"error": said}), OutputMaximumError)


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after-ms": "1500"}, 429) == 1.5
    assert retry_after({"retry-after": "Thu, 01 Jan 1970 00:00:30 GMT"}, 429, clock=lambda: 10.0) == 20.0
    assert retry_after({"x-ratelimit-reset-requests": "105"}, 429, clock=lambda: 100.0) == 5.0
    assert retry_after({"x-ratelimit-reset-requests": "105"}, 500, clock=lambda: 100.0) is None


def test_importing_the_agent_loads_no_openai() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, venice_terminal_agent.agent, venice_terminal_agent.model; print('openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"  # the CLI's --help stays fast; openai loads with a client


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ({"text": "PARTIAL answ", "cut": 3}, "the stream ended without a finish reason"),
        (
            {"text": "nothing shows", "no_choices": True},
            "the stream ended before any of it arrived (no choices, no finish reason)",
        ),
    ],
)
async def test_a_stream_that_stops_too_soon_is_retried_then_said_to_be_cut_off(reply: dict, why: str) -> None:
    events = []
    async with served([reply, {"text": "whole answer"}]) as (_, client, sleeps):
        turn = await client.complete("m", USER, events=events.append)
    assert turn.text == "whole answer" and len(sleeps.asked) == 1
    if "cut" in reply:  # what streamed before the cut is withdrawn before the retry streams
        assert [type(e).__name__ for e in events][:3] == ["TextDelta", "TextDelta", "TextDiscarded"]
    async with served([reply, reply], attempts=2) as (_, client, _):
        with pytest.raises(ModelError) as raised:
            await client.complete("m", USER)
    assert raised.value.message == f"the model's reply was cut off: {why} (gave up after 2 attempts)"


async def test_a_character_split_across_chunks_is_joined_and_a_lone_half_replaced() -> None:
    pieces = ["smile ", "\ud83d", "\ude00", " and a half ", "\ud83d", " end \ude00"]
    streamed: list = []
    async with served([{"text": pieces}, {"text": ["cut at the end \ud83d"]}]) as (fake, client, _):
        turn = await client.complete("m", USER, events=streamed.append)
        assert turn.text == "smile \U0001f600 and a half \ufffd end \ufffd"
        assert "".join(e.text for e in streamed) == turn.text  # every piece printable as it came
        for event in streamed:
            event.text.encode("utf-8")
        last = await client.complete("m", [*USER, turn.message, *USER])
        assert last.text == "cut at the end \ufffd"
    assert fake.chat_requests[1]["messages"][1]["content"] == turn.text  # sent back whole
