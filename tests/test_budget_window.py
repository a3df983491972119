"""The bot's budget is a rolling hour on both stores, tested at the hour's edge.

A chat may make five tool calls in any rolling hour. A call counts while it is younger than the
window and stops counting the moment it is as old as the window, whatever the ledger still keeps
(the Redis ledger keeps a day of rows, the SQLite one as long): a store that counted every row
it keeps would refuse a chat for a day. Each case runs on the SQLite store and on a real
redis-server on loopback, through `Bot.respond` with an injected clock and through the store's
own methods (`begin_reply`, `settle`, `calls_used`): what is reserved, what a failed or long
run spends and from when, the exact wait, the free repeat. The Redis store's arithmetic is in
Lua scripts, which the mutation run cannot mutate (tests/mutation/equivalent.md): these tests
are what checks it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from serve_support import chat_store
from venice_terminal_agent import Answer, Bot, Call, run_loop

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


@asynccontextmanager
async def chat_bot(kind: str, folder: Path, clock: Clock, ran: list[str]) -> AsyncIterator[Bot]:
    """A bot with the `lookup` tool (each word it looks up added to `ran`) on a store of `kind`."""
    async with (
        chat_store(kind, folder) as store,
        Bot(lookups(ran), store=store, clock=clock, root=folder) as bot,
    ):
        yield bot


async def test_a_call_counts_until_it_is_an_hour_old_and_not_a_moment_longer(
    kind: str, tmp_path: Path
) -> None:
    clock, ran = Clock(), []
    async with chat_bot(kind, tmp_path, clock, ran) as bot:
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


async def test_both_stores_give_the_same_tickets_at_the_window_s_edge(kind: str, tmp_path: Path) -> None:
    """What `begin_reply` answers (the store protocol the bot is written against), the same on
    each store: calls reserved up to what is wanted, a full window with its exact wait and
    nothing reserved, a reply that needs no call still let through."""
    plan = [Call("echo", {"text": "a"}), Call("echo", {"text": "b"}), Answer("ok")]
    two_calls = await run_loop(plan, {"echo": lambda text: text})
    assert two_calls.calls == 2
    async with chat_store(kind, tmp_path) as store:

        async def begin(text: str, at: float, wanted: int | None) -> Any:
            return await store.begin_reply("c", text, now=at, limit=3, window=HOUR, wanted=wanted)

        await store.open()
        try:
            first = await begin("two", START, 2)
            assert (first.left, first.reserved, first.wait, first.repeat) == (3, 2, None, None)
            assert first.reservation is not None
            run = await store.finish_reply(
                "c", "two", "ok", now=START, kind="run", receipt=two_calls, ticket=first
            )
            assert run is not None
            # A reply that needs no call (help) holds none while it runs.
            help = await begin("help", START + 30, 0)
            assert (help.left, help.reserved, help.reservation, help.wait) == (1, 0, None, None)
            rest = await begin("all", START + 60, None)
            assert (rest.left, rest.reserved, rest.wait) == (1, 1, None)
            await store.settle("c", rest, 1, now=START + 60)
            # Just inside the hour of the first two calls: spent, and free in half a second.
            full = await begin("more", START + HOUR - 0.5, 1)
            assert (full.left, full.wait, full.reservation, full.reserved) == (0, 0.5, None, 0)
            free = await begin("help", START + HOUR - 0.5, 0)
            assert (free.left, free.wait, free.reservation) == (0, None, None)
            # At the edge the first two calls are an hour old: two free, the third still counts.
            edge = await begin("more", START + HOUR, None)
            assert (edge.left, edge.reserved, edge.wait) == (2, 2, None)
            # An exchange recorded with no run behind it (in a chat with no run yet) spends none
            # of its reservation, and is given again for a repeat with no exit to name.
            held = await store.begin_reply("d", "hi", now=START, limit=3, window=HOUR, wanted=None)
            assert held.reserved == 3
            no_run = await store.finish_reply("d", "hi", "nothing ran", now=START, kind="run", ticket=held)
            assert no_run is None
            assert await store.calls_used("d", now=START, window=HOUR) == 0
            again = await store.begin_reply("d", "hi", now=START, limit=3, window=HOUR, wanted=None)
            assert (again.repeat, again.repeat_exit, again.left) == ("nothing ran", None, 3)
            assert again.reservation is None
            # What `GET /v1/chats/{chat}` shows: each exchange, the run's id where one ran.
            exchanges = [
                {k: e[k] for k in ("at", "text", "reply", "kind", "run")} for e in await store.history("c")
            ]
            assert exchanges == [{"at": START, "text": "two", "reply": "ok", "kind": "run", "run": run}]
        finally:
            await store.close()


class BreaksAfterOneCall:
    """An agent whose planner crashes (a bug of ours) after one tool call really ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def ask(self, question: str, *, events: Any = None, budget: int | None = None) -> Any:
        ran = self.ran

        class Planner:
            async def next(self, outcomes: list[Any]) -> Any:
                if not outcomes:
                    return Call("note", {"text": question})
                raise RuntimeError("the planner broke")

        def note(text: str) -> str:
            ran.append(text)
            return "noted"

        return await run_loop(Planner(), {"note": note}, budget or 0, events=events)


async def test_a_reply_that_crashes_settles_at_the_calls_that_ran(kind: str, tmp_path: Path) -> None:
    agent = BreaksAfterOneCall()
    async with chat_store(kind, tmp_path) as store, Bot(store=store, agent=agent) as bot:
        with pytest.raises(RuntimeError, match="the planner broke"):
            await bot.respond("take a note", "c")
        assert agent.ran == ["take a note"]
        assert await bot.calls_left("c") == 4  # one call ran: the other four of the reservation are free
        assert [(e["kind"], e["reply"]) for e in await bot.history("c")] == [("error", "(the run failed)")]
        with pytest.raises(RuntimeError):
            await bot.respond("take a note", "c")  # a failed reply is never given again as a repeat
        assert await bot.calls_left("c") == 3


async def test_a_repeat_is_free_and_says_how_the_run_behind_it_ended_each_time(
    kind: str, tmp_path: Path
) -> None:
    clock, ran = Clock(), []
    async with chat_bot(kind, tmp_path, clock, ran) as bot:
        await bot.respond("lookup word=a", "c")
        for _ in range(2):  # the second repeat follows a repeat, not the run
            clock.now += 60
            again = await bot.respond("lookup word=a", "c")
            assert again.repeated and again.receipt is None and again.text.startswith("a: found\n")
            assert again.status == (
                "same message as before: previous answer (stopped: answered), no call · 4 left this hour"
            )
        assert ran == ["a"]


async def test_a_lower_budget_after_a_restart_waits_until_enough_calls_age_out(
    kind: str, tmp_path: Path
) -> None:
    """Calls spent under a larger budget all count: with two in the hour and one allowed, a
    call is free when the newer one ages out, not the older."""
    clock, ran = Clock(), []
    async with chat_store(kind, tmp_path) as store:
        async with Bot(lookups(ran), store=store, clock=clock, root=tmp_path, calls_per_window=3) as bot:
            await bot.respond("lookup word=a", "c")
            clock.now += 600
            await bot.respond("lookup word=b", "c")
        clock.now += 600
        async with Bot(lookups(ran), store=store, clock=clock, root=tmp_path, calls_per_window=1) as bot:
            refused = await bot.respond("lookup word=c", "c")
            assert refused.retry_after == 3000.0 and "come back in 50 minutes" in refused.text
            clock.now = START + 600 + HOUR
            assert (await bot.respond("lookup word=c", "c")).receipt is not None
    assert ran == ["a", "b", "c"]


async def test_calls_count_from_the_end_of_their_run_and_never_age_out_early(
    kind: str, tmp_path: Path
) -> None:
    """The ledger cannot know when within a run each call was made: its calls count from the
    run's end, so none stops counting less than an hour after it was made."""
    async with chat_store(kind, tmp_path) as store:
        await store.open()
        try:
            ticket = await store.begin_reply("c", "long", now=START, limit=5, window=HOUR, wanted=None)
            await store.settle("c", ticket, 2, now=START + 300)  # its calls ran during those 5 minutes
            assert await store.calls_used("c", now=START + HOUR + 299, window=HOUR) == 2
            assert await store.calls_used("c", now=START + HOUR + 300, window=HOUR) == 0
        finally:
            await store.close()


async def test_a_window_made_longer_after_a_restart_still_counts_the_calls_made_before(
    kind: str, tmp_path: Path
) -> None:
    """The ledger keeps a day of calls, not just the window's: replies under a one-hour window
    prune it, and a bot restarted with a two-hour window still counts an older call."""
    clock, ran = Clock(), []
    async with chat_store(kind, tmp_path) as store:
        async with Bot(lookups(ran), store=store, clock=clock, root=tmp_path, calls_per_window=2) as bot:
            await bot.respond("lookup word=a", "c")
            clock.now += HOUR + 60
            await bot.respond("lookup word=b", "c")  # the first call is out of this window
        clock.now += 60
        async with Bot(
            lookups(ran), store=store, clock=clock, root=tmp_path, calls_per_window=2, window=2 * HOUR
        ) as bot:
            assert await bot.calls_left("c") == 0
            assert "come back in 58 minutes" in (await bot.respond("lookup word=c", "c")).text
    assert ran == ["a", "b"]
