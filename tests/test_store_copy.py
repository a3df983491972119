"""`venice-agent store copy SRC DST`: an SQLite store into a real Redis and back, by the CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cli_support import COMMAND
from serve_support import offline_env, redis_server
from venice_terminal_agent.bot.bot import Bot
from venice_terminal_agent.core.receipt import Exit, Receipt
from venice_terminal_agent.store.copy import sqlite_export
from venice_terminal_agent.store.redis_store import RedisStore
from venice_terminal_agent.store.sqlite import Store


async def cli(folder: Path, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        COMMAND, "store", "copy", *args, env=offline_env(folder),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    return process.returncode or 0, out.decode(), err.decode()


async def test_a_sqlite_store_moves_into_redis_and_back(tmp_path: Path) -> None:
    now = [5000.0]
    (tmp_path / "a.txt").write_text("alpha")
    source = tmp_path / "bot.db"
    async with Bot(db=source, root=tmp_path, clock=lambda: now[0]) as bot:
        await bot.respond("read_file path=a.txt", "work")
        await bot.respond("list_files path=.", "work")
        await bot.respond("help", "play")
        assert await bot.store.claim_chat("work", "alice", now=now[0])
        await bot.store.record_run("a terminal question", Receipt(steps=(), stopped_because=Exit.ANSWERED))

    async with redis_server(tmp_path / "redis") as redis:
        status, out, err = await cli(tmp_path, str(source), redis.url)
        assert (status, err) == (0, "")
        assert out.splitlines() == [
            f"copied 2 chats (3 exchanges, 2 calls in the ledgers) from {source} to {redis.url}",
            "not copied: 1 run of the terminal agent (venice-agent logs); the copy moves the bot's chats",
        ]
        async with Bot(store=RedisStore(redis.url), root=tmp_path, clock=lambda: now[0]) as bot:
            assert await bot.calls_left("work") == 3
            assert [exchange["text"] for exchange in await bot.history("work")] == [
                "read_file path=a.txt",
                "list_files path=.",
            ]
            again = await bot.respond("list_files path=.", "work")  # the last message: still free
            assert again.repeated and again.status.endswith("(stopped: answered), no call · 3 left this hour")
            assert await bot.store.owner("work") == "alice"

        status, _, err = await cli(tmp_path, str(source), redis.url)
        assert status == 2
        assert err == (
            "venice-agent store copy: the destination already holds chat 'play'; copy into a store without it\n"
        )

        back = tmp_path / "back.db"
        status, out, _ = await cli(tmp_path, redis.url, str(back))
        assert status == 0 and out.startswith("copied 2 chats (4 exchanges, 2 calls in the ledgers)")

    async with Store(source) as before, Store(back) as after:
        (old, _), (new, agent_runs) = await before.run(sqlite_export), await after.run(sqlite_export)
    assert agent_runs == 0
    assert [(dump.chat, dump.owner, dump.ledger, dump.last_reply) for dump in new] == [
        (dump.chat, dump.owner, dump.ledger, dump.last_reply) for dump in old
    ]
    assert new[1].messages[:2] == old[1].messages and new[1].messages[2]["kind"] == "repeat"
