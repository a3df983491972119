"""The store's two promises under concurrency, shown on a real file with SQLite's own trace:
queued writes share one commit (group commit), and a reservation reads the ledger only once it
holds the write lock (`BEGIN IMMEDIATE`), so it waits for another process's writer."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from venice_terminal_agent import Answer, run_loop
from venice_terminal_agent.store.sqlite import Store, StoreError

LIMIT, WINDOW, NOW = 5, 3600.0, 10_000.0


async def trace(store: Store, seen: list[str], *, busy_ms: int | None = None) -> None:
    """Record every statement the store's own connection runs from now on."""

    def install(db: sqlite3.Connection) -> None:
        db.set_trace_callback(seen.append)
        if busy_ms is not None:
            db.execute(f"PRAGMA busy_timeout = {busy_ms}")

    await store._worker.write(install)


async def test_writes_queued_while_the_store_is_busy_share_one_commit(tmp_path: Path) -> None:
    receipt = await run_loop([Answer("ok")], {})
    running, release = threading.Event(), threading.Event()
    seen: list[str] = []
    async with Store(tmp_path / "bot.db") as store:

        def busy(db: sqlite3.Connection) -> None:  # holds the worker while the others queue up
            db.set_trace_callback(seen.append)
            running.set()
            release.wait(30)

        holding = asyncio.ensure_future(store._worker.write(busy))
        await asyncio.to_thread(running.wait, 30)
        writes = [asyncio.ensure_future(store.record_run(f"q{n}", receipt, at=n)) for n in range(10)]
        await asyncio.sleep(0)  # one turn of the loop: every write is in the queue
        release.set()
        await asyncio.gather(holding, *writes)
        assert len(await store.runs(100)) == 10
    commits = [statement for statement in seen if statement.strip().upper() == "COMMIT"]
    assert len(commits) == 2  # the busy job's batch, then the ten queued writes together


async def test_a_reservation_waits_for_another_writer_and_sees_what_it_spent(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    seen: list[str] = []
    began = threading.Event()

    def watch(statement: str) -> None:
        seen.append(statement)
        if statement.upper().startswith("BEGIN"):
            began.set()

    async with Store(path) as store:
        await store._worker.write(lambda db: db.set_trace_callback(watch))
        began.clear()  # that job's own BEGIN
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")  # another process's writer holds the lock
        other.execute("INSERT INTO ledger (chat, at, calls) VALUES ('alice', ?, ?)", (NOW - 1, LIMIT))
        reservation = asyncio.ensure_future(
            store.begin_reply("alice", "hi", now=NOW, limit=LIMIT, window=WINDOW, wanted=None)
        )
        await asyncio.to_thread(began.wait, 30)
        other.execute("COMMIT")  # only now may the reservation read the ledger
        other.close()
        ticket = await reservation
    assert ticket.reserved == 0 and ticket.wait is not None  # it saw the five calls spent meanwhile


async def test_a_reservation_reads_nothing_before_it_holds_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    seen: list[str] = []
    async with Store(path) as store:
        await trace(store, seen, busy_ms=0)  # a lock it cannot get fails at once, no waiting
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            del seen[:]
            with pytest.raises(StoreError, match="locked"):
                await store.begin_reply("alice", "hi", now=NOW, limit=LIMIT, window=WINDOW, wanted=None)
        finally:
            other.execute("ROLLBACK")
            other.close()
    assert any(statement.upper() == "BEGIN IMMEDIATE" for statement in seen)
    assert not [statement for statement in seen if "ledger" in statement]  # no stale read
