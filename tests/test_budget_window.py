"""The bot's budget is a rolling hour on both stores, tested at the hour's edge.

A chat may make five tool calls in any rolling hour. A call counts while it is younger than the
window and stops counting the moment it is as old as the window, whatever the ledger still keeps
(the Redis ledger keeps a day of rows, the SQLite one as long): a store that counted every row
it keeps would refuse a chat for a day. Each case runs on the SQLite store and on a real
redis-server on loopback, through `Bot.respond` with an injected clock and through the store's
own `calls_used`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from serve_support import chat_store
from venice_terminal_agent import Bot

HOUR = 3600.0
START = 1_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


def lookups(ran: list[str]) -> dict:
    def lookup(word: str) -> str:
        ran.append(word)
        return f"{word}: found"

    return {"lookup": lookup}


async def test_a_call_counts_until_it_is_an_hour_old_and_not_a_moment_longer(
    kind: str, tmp_path: Path
) -> None:
    clock, ran = Clock(), []
    async with chat_store(kind, tmp_path) as store:
        async with Bot(lookups(ran), store=store, clock=clock, root=tmp_path) as bot:
            for n in range(5):  # the whole hour's budget, one call a minute
                assert (await bot.respond(f"lookup word=w{n}", "c")).receipt is not None
                clock.now += 60
            # Just inside the hour of the first call (made at START): still spent.
            clock.now = START + HOUR - 0.5
            refused = await bot.respond("lookup word=early", "c")
            assert refused.receipt is None and "come back in 1 second" in refused.text
            assert await bot.calls_left("c") == 0
            # The first call is an hour old: its slot is free, the other four still count.
            clock.now = START + HOUR
            assert await bot.calls_left("c") == 1
            reply = await bot.respond("lookup word=on-time", "c")
            assert reply.receipt is not None and reply.left == 0
            assert ran == [*(f"w{n}" for n in range(5)), "on-time"]
            # An hour after the last call everything is back, though the ledger keeps a day.
            clock.now = START + 2 * HOUR + 0.5
            assert await bot.calls_left("c") == 5


async def test_calls_used_counts_only_the_rolling_window(kind: str, tmp_path: Path) -> None:
    async with chat_store(kind, tmp_path) as store:
        await store.open()
        try:
            for at, text in ((START, "old"), (START + 1800, "newer")):
                ticket = await store.begin_reply("c", text, now=at, limit=5, window=HOUR, wanted=1)
                await store.settle("c", ticket, 1, now=at)
            assert await store.calls_used("c", now=START + HOUR - 0.001, window=HOUR) == 2
            assert await store.calls_used("c", now=START + HOUR, window=HOUR) == 1  # the old one aged out
            assert await store.calls_used("c", now=START + HOUR + 1800, window=HOUR) == 0
            # A shorter window counts fewer of the same rows.
            assert await store.calls_used("c", now=START + 1800, window=600) == 1
        finally:
            await store.close()
