"""One pluralising helper for every count a person reads, on every path that shows one."""

from __future__ import annotations

from pathlib import Path

from venice_terminal_agent import Answer, Bot, Call, run_loop
from venice_terminal_agent.core.wording import all_of, plural, verb


def test_plural_agrees_with_the_count() -> None:
    assert [plural(n, "call") for n in (0, 1, 2)] == ["0 calls", "1 call", "2 calls"]
    assert plural(2, "entry", "entries") == "2 entries"
    assert all_of(1, "tool call") == "The 1 tool call" and all_of(5, "tool call") == "All 5 tool calls"
    assert (verb(1, "is", "are"), verb(2, "is", "are")) == ("is", "are")


async def test_a_bot_with_one_call_an_hour_says_the_one_call_is_spent(tmp_path: Path) -> None:
    clock = lambda: 1_000_000.0  # noqa: E731 - time stands still: the window never frees the call
    async with Bot({"lookup": lambda word: word}, clock=clock, root=tmp_path, calls_per_window=1) as bot:
        first = await bot.respond("lookup word=a", "alice")
        refused = await bot.respond("lookup word=b", "alice")
    assert first.text.endswith("stopped: answered · 1 call · 0 left this hour")
    assert refused.text.startswith("The 1 tool call this hour is spent; come back in 1 hour.")


async def test_a_budget_of_one_call_reads_as_one_call() -> None:
    plan = [Call("lookup", {"word": "a"}), Call("lookup", {"word": "b"}), Answer("done")]
    receipt = await run_loop(plan, {"lookup": lambda word: word}, budget=1)
    assert receipt.refusal == "stopped before call 2: the budget of 1 tool call is spent"
    assert receipt.summary() == "stopped: budget · 1 call · 2 rounds"
