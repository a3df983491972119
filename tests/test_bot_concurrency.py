"""Replies racing in one chat never spend more than the window allows.

The tool holds every call that reaches it until five are in flight, so all the replies are
truly concurrent: a reservation that was not atomic would let a sixth call through.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from venice_terminal_agent import Answer, Bot, Call, Receipt, run_loop


class GatedTool:
    def __init__(self, open_at: int) -> None:
        self.open_at = open_at
        self.started = 0
        self.gate = asyncio.Event()

    async def slow(self, n: int) -> str:
        self.started += 1
        if self.started >= self.open_at:
            self.gate.set()
        await self.gate.wait()
        return f"done {n}"


async def race(bot: Bot, texts: list[str], chat: str = "crowd") -> list:
    async with asyncio.timeout(30):  # a safety net against a deadlock, not a timing assertion
        return await asyncio.gather(*(bot.respond(text, chat) for text in texts))


@pytest.mark.parametrize("db", ["memory", "file"])
async def test_fifty_concurrent_replies_in_one_chat_spend_five_calls(tmp_path: Path, db: str) -> None:
    tool = GatedTool(open_at=5)
    path = None if db == "memory" else tmp_path / "bot.db"
    async with Bot({"slow": tool.slow}, db=path, clock=lambda: 5000.0) as bot:
        replies = await race(bot, [f"slow n={n}" for n in range(50)])
        assert tool.started == 5
        ran = [r for r in replies if r.receipt is not None]
        assert len(ran) == 5 and sum(r.receipt.calls for r in ran) == 5
        assert sum("come back in 1 hour" in r.text for r in replies) == 45
        assert await bot.calls_left("crowd") == 0


class GreedyAgent:
    """Plans one call after another until its budget stops it (the LLM agent's `ask`)."""

    def __init__(self, tool: GatedTool) -> None:
        self.tool = tool
        self.budgets: list[int | None] = []

    async def ask(self, question: str, *, events=None, budget: int | None = None) -> Receipt:
        self.budgets.append(budget)
        plan = [Call("slow", {"n": n}) for n in range(10)] + [Answer("done")]
        return await run_loop(plan, {"slow": self.tool.slow}, budget or 0, events=events)


async def test_fifty_concurrent_agent_replies_in_one_chat_spend_five_calls() -> None:
    tool = GatedTool(open_at=1)  # the agent calls one at a time: no gate
    agents: list[GreedyAgent] = []

    def factory(chat: str) -> GreedyAgent:
        agents.append(GreedyAgent(tool))
        return agents[-1]

    async with Bot(agent=factory, clock=lambda: 5000.0) as bot:
        replies = await race(bot, [f"question {n}" for n in range(50)])
    assert tool.started == 5
    assert sum(r.receipt.calls for r in replies if r.receipt is not None) == 5
    assert agents[0].budgets == [5]  # one run held the whole window, the rest waited


async def test_two_bots_on_one_file_share_the_budget_atomically(tmp_path: Path) -> None:
    """Two stores, two connections, two threads, one file: the reservation is still atomic."""
    tool = GatedTool(open_at=5)
    path = tmp_path / "shared.db"
    async with (
        Bot({"slow": tool.slow}, db=path, clock=lambda: 5000.0) as first,
        Bot({"slow": tool.slow}, db=path, clock=lambda: 5000.0) as second,
    ):
        replies = await asyncio.gather(
            race(first, [f"slow n={n}" for n in range(25)]),
            race(second, [f"slow n={n}" for n in range(25, 50)]),
        )
    flat = replies[0] + replies[1]
    assert tool.started == 5
    assert sum(r.receipt.calls for r in flat if r.receipt is not None) == 5
