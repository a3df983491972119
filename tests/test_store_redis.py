"""Budgets shared by many processes on a real redis-server (started on a loopback port here)."""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cli_support import clean_env, fake_venice, mcp_config
from serve_support import redis_server, served
from venice_terminal_agent import Call, run_loop
from venice_terminal_agent.bot.bot import Bot
from venice_terminal_agent.store import open_store
from venice_terminal_agent.store.protocol import ChatDump, StoreUnavailable
from venice_terminal_agent.store.redis_store import RedisStore

SSE = {"Accept": "text/event-stream"}


async def test_the_bot_on_redis_keeps_the_same_promises(tmp_path: Path) -> None:
    now = [1000.0]
    async with redis_server(tmp_path / "redis") as redis:
        store = open_store(redis.url)
        assert isinstance(store, RedisStore)
        (tmp_path / "a.txt").write_text("alpha")
        async with Bot(store=store, root=tmp_path, clock=lambda: now[0], calls_per_window=2) as bot:
            first = await bot.respond("read_file path=a.txt", "c")
            assert first.text == "alpha\nstopped: answered · 1 call · 1 left this hour"
            again = await bot.respond("read_file path=a.txt", "c")
            assert again.repeated and again.status.startswith("same message as before") and again.left == 1
            now[0] += 600
            assert (await bot.respond("list_files path=.", "c")).left == 0
            assert (await bot.respond("help", "c")).receipt is not None  # no call needed: still answered
            wait = await bot.respond("read_file path=b.txt", "c")
            assert wait.retry_after == pytest.approx(3000.0)
            assert "come back in 50 minutes" in wait.text
            now[0] += 3000.5  # the first call ages out, the second not yet
            assert await bot.calls_left("c") == 1
            kinds = [(exchange["kind"], exchange["run"] is not None) for exchange in await bot.history("c")]
            assert kinds == [("run", True), ("repeat", False), ("run", True), ("run", True), ("wait", False)]
            assert await store.claim_chat("c", "alice", now=now[0])
            assert not await store.claim_chat("c", "bob", now=now[0])
            assert await store.owner("c") == "alice"


async def test_a_reservation_of_a_dead_process_is_freed_after_its_hold_and_counted_once(
    tmp_path: Path,
) -> None:
    async with redis_server(tmp_path / "redis") as redis, RedisStore(redis.url, hold=60) as store:
        held = await store.begin_reply("c", "run", now=100.0, limit=5, window=3600, wanted=None)
        assert held.reserved == 5
        # Its process dies: nobody settles. Until the hold runs out, nothing is free.
        late = await store.begin_reply("c", "other", now=159.0, limit=5, window=3600, wanted=None)
        assert late.wait == pytest.approx(3541.0)
        assert await store.calls_used("c", now=159.0, window=3600) == 5
        assert await store.calls_used("c", now=160.0, window=3600) == 0  # the hold's end: free, as below
        freed = await store.begin_reply("c", "other", now=160.0, limit=5, window=3600, wanted=2)
        assert freed.reserved == 2 and freed.left == 5
        # A run that did settle after its hold ran out counts what it spent, once.
        await store.settle("c", held, 5, now=170.0)  # it spent all five
        assert await store.calls_used("c", now=171.0, window=3600) == 7


async def test_a_chat_copied_into_redis_keeps_its_calls_and_new_ids_never_reuse_the_copied_ones(
    tmp_path: Path,
) -> None:
    """`store copy` numbers the copied exchanges and ledger rows from the counter new ones use:
    a reservation numbered like a copied row would take it along when it is settled."""
    copied = ChatDump("c", "earlier", "done", created=10.0, updated=20.0)
    copied.messages = [{"at": 20.0, "text": "earlier", "reply": "done", "kind": "run"}]
    copied.ledger = [(20.0, 2)]
    clock = [100.0]
    (tmp_path / "a.txt").write_text("alpha")
    async with redis_server(tmp_path / "redis") as redis, RedisStore(redis.url) as store:
        await store.import_chats([copied])
        async with Bot(store=store, root=tmp_path, clock=lambda: clock[0]) as bot:
            assert await bot.calls_left("c") == 3
            again = await bot.respond("earlier", "c")  # no run behind it was copied: no exit to name
            assert again.text == "done\nsame message as before: previous answer, no call · 3 left this hour"
            for text in ("read_file path=a.txt", "list_files path=."):
                await bot.respond(text, "c")
                clock[0] += 1
            assert await bot.calls_left("c") == 1  # the two copied calls, and the two made here
            ids = [exchange["id"] for exchange in await bot.history("c")]
    assert len(ids) == 4 and ids == sorted(set(ids))


async def test_a_reply_that_fails_while_redis_is_down_is_settled_at_its_calls_once_it_is_back(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "redis"
    async with redis_server(folder) as redis:

        class StopsRedisThenBreaks:
            """One call runs, then Redis stops and the planner crashes: the reply cannot settle."""

            async def ask(self, question: str, *, events: Any = None, budget: int | None = None) -> Any:
                class Planner:
                    async def next(self, outcomes: list[Any]) -> Any:
                        if not outcomes:
                            return Call("note", {"text": question})
                        redis.process.terminate()
                        await redis.process.wait()
                        raise RuntimeError("the planner broke")

                return await run_loop(Planner(), {"note": lambda text: "noted"}, budget or 0, events=events)

        async with Bot(store=RedisStore(redis.url), agent=StopsRedisThenBreaks()) as bot:
            with pytest.raises(RuntimeError, match="the planner broke"):
                await bot.respond("take a note", "c")
            with pytest.raises(StoreUnavailable):
                await bot.calls_left("c")  # still down: refused like any request, the settling kept
            async with redis_server(folder, port=redis.port):
                assert await bot.calls_left("c") == 4  # the reservation of 5 settled at the 1 call that ran
                assert await bot.calls_left("c") == 4


@pytest.mark.slow  # the load run behind test_the_bot_on_redis_keeps_the_same_promises
async def test_four_processes_on_one_redis_spend_exactly_five_calls_per_chat(tmp_path: Path) -> None:
    for number in range(300):
        (tmp_path / f"f{number}.txt").write_text(str(number))
    async with AsyncExitStack() as stack:
        redis = await stack.enter_async_context(redis_server(tmp_path / "redis"))
        args = ("--offline", "--store", redis.url, "--root", str(tmp_path))
        servers = await asyncio.gather(
            *(stack.enter_async_context(served(tmp_path, *args)) for _ in range(4))
        )
        assert all(f"store {redis.url}" in server.line for server in servers)
        http = await stack.enter_async_context(
            httpx2.AsyncClient(limits=httpx2.Limits(max_connections=400, max_keepalive_connections=0))
        )

        async def send(number: int, chat: str) -> str:
            url = servers[number % 4].url
            response = await http.post(
                f"{url}/v1/chats/{chat}/messages", json={"text": f"read_file path=f{number}.txt"}
            )
            assert response.status_code == 200, response.text
            return response.json()["status"].split(" · ")[0]

        started = time.perf_counter()
        one_chat = Counter(await asyncio.gather(*(send(number, "shared") for number in range(200))))
        assert one_chat == {"stopped: answered": 5, "not run: no calls left this hour": 195}
        for server in servers:
            assert (await http.get(f"{server.url}/v1/chats/shared")).json()["calls_left"] == 0

        chats = [f"chat{number % 50}" for number in range(300)]
        replies = await asyncio.gather(*(send(number, chat) for number, chat in enumerate(chats)))
        by_chat = Counter((chat, status) for chat, status in zip(chats, replies, strict=True))
        print(f"requests took {time.perf_counter() - started:.2f} s")
        for chat in set(chats):
            assert by_chat[chat, "stopped: answered"] == 5
            assert by_chat[chat, "not run: no calls left this hour"] == 1


async def test_a_killed_process_holds_its_calls_no_longer_than_its_run_timeout(tmp_path: Path) -> None:
    script = [{"text": ["Looking"], "hang": True}]
    with fake_venice(script, tmp_path) as fake:
        async with AsyncExitStack() as stack:
            redis = await stack.enter_async_context(redis_server(tmp_path / "redis"))
            config = mcp_config(tmp_path, time_server=False)
            model_args = ("--store", redis.url, "--mcp-config", str(config), "--run-timeout", "60")
            env = clean_env(tmp_path, fake.base_url)
            doomed = await stack.enter_async_context(served(tmp_path, *model_args, env=env))
            other = await stack.enter_async_context(served(tmp_path, "--offline", "--store", redis.url))
            http = await stack.enter_async_context(httpx2.AsyncClient())
            async with http.stream(
                "POST", f"{doomed.url}/v1/chats/k/messages", json={"text": "hi"}, headers=SSE
            ) as live:
                async for line in live.aiter_lines():
                    if line.startswith("event: text"):
                        break  # the run is under way: its five calls are reserved
                doomed.process.send_signal(signal.SIGKILL)
                await doomed.process.wait()
            after = (await http.post(f"{other.url}/v1/chats/k/messages", json={"text": "list_files"})).json()
            assert after["status"] == "not run: no calls left this hour · 0 calls"  # still held, not lost
            async with RedisStore(redis.url) as store:
                hold = 60 + 30  # the run's timeout, and a margin for its settling
                assert await store.calls_used("k", now=time.time() + hold - 5, window=3600) == 5
                assert await store.calls_used("k", now=time.time() + hold + 1, window=3600) == 0


async def test_redis_stopped_means_503_and_nothing_spent_until_it_is_back(tmp_path: Path) -> None:
    folder = tmp_path / "redis"
    async with redis_server(folder) as redis:
        async with (
            served(tmp_path, "--offline", "--store", redis.url) as server,
            httpx2.AsyncClient() as http,
        ):
            post = f"{server.url}/v1/chats/r/messages"
            assert (await http.post(post, json={"text": "list_files"})).json()["left"] == 4
            redis.process.send_signal(signal.SIGTERM)
            await redis.process.wait()
            for response in (
                await http.post(post, json={"text": "list_files path=src"}),
                await http.post(post, json={"text": "list_files path=tests"}, headers=SSE),
                await http.get(f"{server.url}/v1/chats/r"),
                await http.get(f"{server.url}/healthz"),
            ):
                assert response.status_code == 503
                message = response.json()["error"]
                assert message.startswith(f"the store is unavailable: {redis.url}: cannot reach Redis (")
                assert "\n" not in message
            async with redis_server(folder, port=redis.port):
                assert (await http.get(f"{server.url}/healthz")).status_code == 200
                back = (await http.post(post, json={"text": "list_files path=docs"})).json()
                assert back["left"] == 3  # the refused requests spent nothing


async def test_serve_refuses_to_start_on_a_redis_nobody_runs(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match=r"^redis://127\.0\.0\.1:9/0: cannot reach Redis \("):
        await RedisStore("redis://127.0.0.1:9/0").open()


async def test_more_requests_at_once_than_connections_wait_their_turn(tmp_path: Path) -> None:
    async with redis_server(tmp_path / "redis") as redis, RedisStore(redis.url) as store:
        tickets = await asyncio.gather(*(
            store.begin_reply(f"c{number}", "hi", now=1.0, limit=5, window=3600, wanted=1) for number in range(300)
        ))  # fmt: skip
        assert {ticket.reserved for ticket in tickets} == {1}
