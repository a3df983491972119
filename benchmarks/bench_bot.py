"""Replies per second of the chat bot: command planner, built-in tools, SQLite store on a file.

Every reply is a real one: the budget is checked and calls reserved in the store (one
`BEGIN IMMEDIATE` transaction), the command runs on the built-in tools through `run_loop`,
then the receipt, the exchange and the settled ledger are written (a second transaction).
Messages alternate between `read_file` and `list_files`, so no reply is a free repeat; the
injected clock moves on 400 s at each reading, so no chat runs out of calls and every reply
runs its tool (a spent window is cheaper: nothing runs).

Baselines measured in the same run: the same command plans on bare `run_loop` (no bot, no
store), and the bot on an in-memory store. The ratios say what the bot and the file cost.

    uv run python benchmarks/bench_bot.py [--replies 4000]

Target: at least 1,000 replies a second from one process, for 1 and for 50 chats.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import tempfile
import time
from pathlib import Path

from venice_terminal_agent import Bot, run_loop
from venice_terminal_agent.bot.commands import CommandPlanner
from venice_terminal_agent.tools.builtin import builtin_toolbox

TARGET = 1_000.0
MESSAGES = ["read_file path=notes.txt", "list_files path=."]


class Clock:
    """Moves on 400 s at each reading: windows roll, budgets never run dry."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 400.0
        return self.now


async def bare_loop(root: Path, replies: int) -> float:
    tools = builtin_toolbox(root)
    names = [spec.name for spec in tools.specs()]
    started = time.perf_counter()
    for n in range(replies):
        planner = CommandPlanner(MESSAGES[n % 2], names, "help")
        receipt = await run_loop(planner, tools, 5)
        assert receipt.calls == 1
    return replies / (time.perf_counter() - started)


async def bot_rate(root: Path, db: Path | None, replies: int, chats: int) -> float:
    async with Bot(db=db, clock=Clock(), root=root) as bot:
        await bot.respond("help", "warm-up")
        per_chat = replies // chats

        async def talk(chat: str) -> None:
            for n in range(per_chat):
                reply = await bot.respond(MESSAGES[n % 2], chat)
                assert reply.receipt is not None and reply.receipt.calls == 1, reply.text

        started = time.perf_counter()
        await asyncio.gather(*(talk(f"chat-{c}") for c in range(chats)))
        return per_chat * chats / (time.perf_counter() - started)


async def main(replies: int) -> int:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "notes.txt").write_text("buy milk\n" * 20)
        (root / "docs").mkdir()
        counter = itertools.count()

        def db_file() -> Path:
            return root / f"bench-{next(counter)}.db"

        bare = await bare_loop(root, replies)
        rows = [("bare run_loop (no bot, no store)", bare, None)]
        for chats in (1, 50):
            memory = await bot_rate(root, None, replies, chats)
            on_file = await bot_rate(root, db_file(), replies, chats)
            rows.append((f"bot, {chats} chat{'s' if chats > 1 else ''}, in-memory store", memory, None))
            rows.append((f"bot, {chats} chat{'s' if chats > 1 else ''}, SQLite file (WAL)", on_file, chats))

    print(f"{replies} replies per row; Python {sys.version.split()[0]}")
    print(f"{'':48} {'replies/s':>10} {'× bare loop':>12}")
    ok = True
    for name, rate, chats in rows:
        print(f"{name:48} {rate:10,.0f} {rate / bare:11.2f}×")
        if chats is not None and rate < TARGET:
            ok = False
    print(
        f"target: ≥ {TARGET:,.0f} replies/s on the SQLite file for 1 and 50 chats: {'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replies", type=int, default=4000)
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main(args.replies)))
