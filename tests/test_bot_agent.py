"""The bot with the real LLM agent behind it, over real HTTP against the fake Venice server."""

from __future__ import annotations

from venice_terminal_agent import Bot, Exit
from venice_terminal_agent.agent import Agent
from venice_terminal_agent.testing import MockVenice
from venice_terminal_agent.tools.base import FunctionToolbox
from venice_terminal_agent.venice import RetryPolicy, VeniceClient


async def no_wait(_seconds: float) -> None:
    return None


def lookup_calls(*words: str) -> dict:
    return {"tool_calls": [{"name": "lookup", "arguments": {"word": word}} for word in words]}


async def test_the_model_plans_within_what_is_left_and_repeats_never_reach_it() -> None:
    looked_up: list[str] = []

    def lookup(word: str) -> str:
        """Look a word up."""
        looked_up.append(word)
        return f"{word}: found"

    script = [
        lookup_calls("a", "b", "c"),  # three calls at once
        {"text": "Three words found."},
        lookup_calls("d"),
        lookup_calls("e"),
        lookup_calls("f"),  # the third call of this question: only two were left
        {"text": "d and e found; f not looked up."},  # the partial answer, without tools
    ]
    now = [10_000.0]
    async with MockVenice(script) as fake:
        policy = RetryPolicy(sleep=no_wait, jitter=lambda: 0.5)
        async with VeniceClient("k", fake.base_url, retry=policy, http_client=fake.http_client()) as client:
            tools = FunctionToolbox({"lookup": lookup}, read_only={"lookup"})
            agent = Agent(client, tools, model="fake-model")
            async with Bot(agent=agent, clock=lambda: now[0]) as bot:
                first = await bot.respond("find three words", "alice")
                again = await bot.respond("find three words", "alice")
                second = await bot.respond("find three more", "alice")
                third = await bot.respond("and more?", "alice")
        requests = len(fake.chat_requests)

    assert first.text == "Three words found.\nstopped: answered · 3 calls · 2 left this hour"
    assert again.repeated and again.receipt is None
    assert second.receipt.stopped_because is Exit.BUDGET and second.receipt.calls == 2
    assert second.status == "stopped: budget · 2 calls · 0 left this hour"
    assert second.receipt.partial
    assert second.text.startswith("d and e found; f not looked up.\n\n(partial answer: stopped before call 3")
    assert "the budget of 2 tool calls is spent" in second.text
    assert "come back in 1 hour" in third.text and third.receipt is None
    assert looked_up == ["a", "b", "c", "d", "e"]
    assert requests == 6  # the repeat and the spent window never asked the model
    assert first.receipt.model == "fake-model"
