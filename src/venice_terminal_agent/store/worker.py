"""One thread that owns one SQLite connection, fed from the event loop (stdlib `sqlite3` is
blocking, so it never runs on the loop).

Jobs run one after another in the order they were queued, so no two ever interleave. Writes
waiting together share one `BEGIN IMMEDIATE` transaction (a group commit: many concurrent
replies, one commit), each in its own savepoint, so a failing job rolls back alone. The
results go back to the loop in one wake-up per batch.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .schema import Schema, StoreError, connect

MAX_BATCH = 128


@dataclass
class _Job:
    kind: str  # "read", "write" or "close"
    work: Callable[[sqlite3.Connection], Any] | None
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    result: Any = None
    error: BaseException | None = None


class SqliteWorker:
    def __init__(self, path: str, *, create: bool = True, schema: Schema | None = None) -> None:
        self.path = path
        self.create = create
        self.schema = schema
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    async def start(self) -> None:
        """Open, check and migrate the file on the worker thread; a `StoreError` if it cannot."""
        loop = asyncio.get_running_loop()
        opened: asyncio.Future[None] = loop.create_future()
        self._thread = threading.Thread(
            target=self._serve, args=(loop, opened), name="venice-agent-store", daemon=True
        )
        self._thread.start()
        try:
            await opened
        except BaseException:
            self._thread = None
            raise

    async def read(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        return await self._submit("read", work)

    async def write(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        return await self._submit("write", work)

    async def stop(self) -> None:
        if self._thread is not None:
            try:
                await self._submit("close", None)
            finally:
                self._thread = None

    async def _submit(self, kind: str, work: Callable[[sqlite3.Connection], Any] | None) -> Any:
        if self._thread is None:
            raise StoreError("the store is closed")
        loop = asyncio.get_running_loop()
        job = _Job(kind, work, loop, loop.create_future())
        self._jobs.put(job)
        return await job.future

    # ---- on the worker thread ----

    def _serve(self, loop: asyncio.AbstractEventLoop, opened: asyncio.Future[None]) -> None:
        try:
            db = connect(self.path, create=self.create, schema=self.schema)
        except BaseException as error:
            loop.call_soon_threadsafe(_settle_open, opened, error)
            return
        loop.call_soon_threadsafe(_settle_open, opened, None)
        try:
            while True:
                batch = [self._jobs.get()]
                while len(batch) < MAX_BATCH and batch[-1].kind != "close":
                    try:
                        batch.append(self._jobs.get_nowait())
                    except queue.Empty:
                        break
                self._run_batch(db, batch)
                if batch[-1].kind == "close":
                    # Closed before anyone hears it is: the WAL is folded into the file, so a
                    # copy taken right after `close()` holds every write.
                    db.close()
                    _send_back(batch)
                    return
                _send_back(batch)
        finally:
            db.close()

    def _run_batch(self, db: sqlite3.Connection, batch: list[_Job]) -> None:
        writes = [job for job in batch if job.kind == "write"]
        try:
            if writes:
                db.execute("BEGIN IMMEDIATE")
            for number, job in enumerate(batch):
                if job.work is None:
                    continue
                if job.kind == "write":
                    self._run_in_savepoint(db, job, number)
                else:
                    self._run_job(db, job)
            if writes:
                db.execute("COMMIT")
        except sqlite3.Error as error:  # the transaction itself failed: every write in it did
            if db.in_transaction:
                db.execute("ROLLBACK")
            for job in writes:
                job.result, job.error = None, StoreError(f"{self.path}: {error}")

    def _run_in_savepoint(self, db: sqlite3.Connection, job: _Job, number: int) -> None:
        db.execute(f"SAVEPOINT job{number}")
        self._run_job(db, job)
        if job.error is not None:
            db.execute(f"ROLLBACK TO job{number}")
        db.execute(f"RELEASE job{number}")

    def _run_job(self, db: sqlite3.Connection, job: _Job) -> None:
        assert job.work is not None
        try:
            job.result = job.work(db)
        except sqlite3.DatabaseError as error:
            job.error = StoreError(f"{self.path}: {error}")
        except Exception as error:
            job.error = error


def _send_back(batch: list[_Job]) -> None:
    by_loop: dict[asyncio.AbstractEventLoop, list[_Job]] = {}
    for job in batch:
        by_loop.setdefault(job.loop, []).append(job)
    for loop, jobs in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, jobs)
        except RuntimeError:
            pass  # that loop is closed: nobody is waiting any more


def _settle(jobs: list[_Job]) -> None:
    for job in jobs:
        if job.future.done():
            continue  # the caller was cancelled
        if job.error is not None:
            job.future.set_exception(job.error)
        else:
            job.future.set_result(job.result)


def _settle_open(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
