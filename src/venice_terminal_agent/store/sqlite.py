"""The SQLite store: conversations, every receipt, and the budget ledger of the chat bot.

The stdlib `sqlite3` runs off the event loop, on one worker thread that owns the connection
(`worker.py`), so operations never interleave in this process; every write runs inside
a `BEGIN IMMEDIATE` transaction, so a reservation of calls is atomic across processes too.
The file is opened, checked and migrated by `schema.connect`: a file that is not ours,
is damaged, or comes from a newer version is a `StoreError`, never replaced.

The terminal agent records its runs here too, only when asked (`--db` or VENICE_AGENT_DB):

    await record_agent_run(settings.venice_agent_db, question, receipt)  # None: nothing written
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..core.receipt import Receipt
from ..core.scrub import redact, redact_all
from .schema import StoreError, connect, default_db_path, resolve_db_path
from .worker import SqliteWorker

T = TypeVar("T")
KEEP_LEDGER = 86_400.0  # ledger rows older than this (or the window, if longer) are pruned


@dataclass(frozen=True)
class Ticket:
    """The outcome of `begin_reply`: a repeat, a full window, or calls reserved for a run."""

    left: int  # calls left in the window before this reply
    repeat: str | None = None  # the previous reply, when the message repeats the previous one
    repeat_exit: str | None = None  # how the run behind that reply ended
    wait: float | None = None  # seconds until a call is free again, when none is left
    reservation: int | None = None  # ledger row holding the reserved calls
    reserved: int = 0


@dataclass(frozen=True)
class RunRecord:
    id: int
    at: float
    source: str
    chat: str | None
    question: str
    stopped_because: str
    calls: int
    duration: float | None
    model: str | None
    receipt: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Store:
    """One SQLite file (or memory, for `None` / ":memory:"), used from async code."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, create: bool = True) -> None:
        self.path = ":memory:" if path is None or str(path) == ":memory:" else os.path.expanduser(path)
        self._worker = SqliteWorker(self.path, create=create)

    async def __aenter__(self) -> Store:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self) -> None:
        """Open, check and migrate the file (a `StoreError` says why it cannot be used)."""
        if not self._worker.running:
            await self._worker.start()

    async def close(self) -> None:
        await self._worker.stop()

    # ---- the chat bot ----

    async def begin_reply(
        self, chat: str, text: str, *, now: float, limit: int, window: float, wanted: int | None
    ) -> Ticket:
        """Atomically: the previous reply if `text` repeats the previous message, else a full
        window (with the wait), else up to `wanted` (None: all) of the calls left, reserved."""

        def work(db: sqlite3.Connection) -> Ticket:
            db.execute(
                "DELETE FROM ledger WHERE chat = ? AND at <= ?", (chat, now - max(window, KEEP_LEDGER))
            )
            rows = db.execute(
                "SELECT at, calls FROM ledger WHERE chat = ? AND at > ? ORDER BY at", (chat, now - window)
            ).fetchall()
            used = sum(calls for _, calls in rows)
            left = max(0, limit - used)
            last = db.execute(
                "SELECT last_message, last_reply FROM conversations WHERE chat = ?", (chat,)
            ).fetchone()
            if last is not None and last[0] == text and last[1] is not None:
                exit = db.execute(
                    "SELECT runs.stopped_because FROM messages JOIN runs ON runs.id = messages.run"
                    " WHERE messages.chat = ? AND messages.kind = 'run' ORDER BY messages.id DESC LIMIT 1",
                    (chat,),
                ).fetchone()
                return Ticket(left, repeat=last[1], repeat_exit=exit[0] if exit else None)
            if left == 0 and wanted != 0:  # a reply that needs no call (help) still gets its answer
                return Ticket(0, wait=_wait(rows, used, limit, window, now))
            reserved = left if wanted is None else min(left, wanted)
            if reserved == 0:
                return Ticket(left)
            cursor = db.execute(
                "INSERT INTO ledger (chat, at, calls) VALUES (?, ?, ?)", (chat, now, reserved)
            )
            return Ticket(left, reservation=cursor.lastrowid, reserved=reserved)

        return await self._worker.write(work)

    async def finish_reply(
        self,
        chat: str,
        text: str,
        reply: str,
        *,
        now: float,
        kind: str,
        receipt: Receipt | None = None,
        ticket: Ticket | None = None,
        reusable: bool = True,
    ) -> int | None:
        """Record the exchange (and its receipt), settle the reservation at what the run spent
        (nothing, without a receipt), and remember `text` as the chat's previous message. Returns the run's id, if one ran."""

        def work(db: sqlite3.Connection) -> int | None:
            run_id = None if receipt is None else _insert_run(db, now, "bot", chat, text, receipt)
            if ticket is not None:
                _settle(db, ticket, 0 if receipt is None else receipt.calls, now)
            db.execute(
                "INSERT INTO conversations (chat, last_message, last_reply, created, updated)"
                " VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (chat) DO UPDATE SET"
                " last_message = ?2, last_reply = ?3, updated = ?4",
                (chat, text, reply if reusable else None, now),
            )
            db.execute(
                "INSERT INTO messages (chat, at, text, reply, kind, run) VALUES (?, ?, ?, ?, ?, ?)",
                (chat, now, text, reply, kind, run_id),
            )
            return run_id

        return await self._worker.write(work)

    async def settle(self, chat: str, ticket: Ticket, spent: int, *, now: float) -> None:
        """Settle the reservation of a reply that failed at `spent`, recording nothing else
        (the same again changes nothing, so it is safe after a `finish_reply` that may have
        been written)."""
        await self._worker.write(lambda db: _settle(db, ticket, spent, now))

    async def calls_used(self, chat: str, *, now: float, window: float) -> int:
        def work(db: sqlite3.Connection) -> int:
            row = db.execute(
                "SELECT coalesce(sum(calls), 0) FROM ledger WHERE chat = ? AND at > ?", (chat, now - window)
            )
            return int(row.fetchone()[0])

        return await self._worker.read(work)

    async def history(self, chat: str, limit: int = 50) -> list[dict[str, Any]]:
        """The chat's last `limit` exchanges, oldest first."""

        def work(db: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = db.execute(
                "SELECT id, at, text, reply, kind, run FROM messages WHERE chat = ? ORDER BY id DESC LIMIT ?",
                (chat, limit),
            )
            keys = ("id", "at", "text", "reply", "kind", "run")
            return [dict(zip(keys, row, strict=True)) for row in reversed(rows.fetchall())]

        return await self._worker.read(work)

    async def claim_chat(self, chat: str, user: str, *, now: float) -> bool:
        """Make `user` the chat's owner if it has none; True if the chat is `user`'s."""

        def work(db: sqlite3.Connection) -> bool:
            db.execute("INSERT OR IGNORE INTO owners (chat, user, at) VALUES (?, ?, ?)", (chat, user, now))
            return db.execute("SELECT user FROM owners WHERE chat = ?", (chat,)).fetchone()[0] == user

        return await self._worker.write(work)

    async def owner(self, chat: str) -> str | None:
        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT user FROM owners WHERE chat = ?", (chat,)).fetchone()
            return None if row is None else row[0]

        return await self._worker.read(work)

    async def ping(self) -> None:
        """A `StoreError` unless the file is still a usable store. The open connection would not
        tell: its pages are cached, and a file replaced or overwritten is seen only by the
        request that reads past them. So the file is opened afresh and checked as at start,
        and each table's first page is read."""

        def work(db: sqlite3.Connection) -> None:
            db.execute("SELECT 1").fetchone()
            if self.path == ":memory:":
                return
            fresh = connect(self.path, create=False)
            try:
                for table in ("conversations", "messages", "ledger", "owners", "runs"):
                    fresh.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone()
            finally:
                fresh.close()

        await self._worker.read(work)

    async def run(self, work: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        """`work(connection)` on the store's thread, inside a write transaction if `write`: for
        jobs on the whole store, such as `venice-agent store copy`."""
        return await (self._worker.write(work) if write else self._worker.read(work))

    # ---- runs, from the bot and the terminal agent ----

    async def record_run(
        self,
        question: str,
        receipt: Receipt,
        *,
        source: str = "agent",
        chat: str | None = None,
        at: float | None = None,
        secrets: Sequence[str] = (),
    ) -> int:
        """Keep one run's question and receipt (what `venice-agent logs` lists), `secrets`
        masked in both; returns its id."""
        when = time.time() if at is None else at
        return await self._worker.write(
            lambda db: _insert_run(db, when, source, chat, question, receipt, secrets)
        )

    async def runs(self, limit: int = 10) -> list[RunRecord]:
        """The last `limit` runs, oldest first."""

        def work(db: sqlite3.Connection) -> list[RunRecord]:
            rows = db.execute(
                "SELECT id, at, source, chat, question, stopped_because, calls, duration, model, receipt"
                " FROM runs ORDER BY id DESC LIMIT ?",
                (limit,),
            )
            return [_record(row) for row in reversed(rows.fetchall())]

        return await self._worker.read(work)


async def record_agent_run(
    db: str | os.PathLike[str] | None, question: str, receipt: Receipt, secrets: Sequence[str] = ()
) -> int | None:
    """Keep a terminal agent's question and receipt when the user asked for it (`--db` or
    VENICE_AGENT_DB gives `db`), `secrets` masked in both; with no `db`, nothing is written
    anywhere and None comes back. A store that cannot be used raises `StoreError` (say it, keep
    the answer's exit status)."""
    if not db:
        return None
    async with Store(db) as store:
        return await store.record_run(question, receipt, source="agent", secrets=secrets)


def _record(row: tuple[Any, ...]) -> RunRecord:
    id, at, source, chat, question, stopped_because, calls, duration, model, receipt = row
    return RunRecord(
        id, at, source, chat, question, stopped_because, calls, duration, model, json.loads(receipt)
    )


def _insert_run(
    db: sqlite3.Connection,
    at: float,
    source: str,
    chat: str | None,
    question: str,
    receipt: Receipt,
    secrets: Sequence[str] = (),
) -> int:
    data = redact_all(receipt.to_dict(), secrets)
    question = redact(question, secrets) or question
    cursor = db.execute(
        "INSERT INTO runs (at, source, chat, question, stopped_because, calls, duration, model, receipt)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            at,
            source,
            chat,
            question,
            str(receipt.stopped_because),
            receipt.calls,
            receipt.duration,
            receipt.model,
            json.dumps(data, ensure_ascii=False),
        ),
    )
    return int(cursor.lastrowid or 0)


def _settle(db: sqlite3.Connection, ticket: Ticket, spent: int, now: float) -> None:
    if ticket.reservation is None:
        return
    if spent:
        db.execute(
            "UPDATE ledger SET calls = ?, at = max(at, ?) WHERE id = ?", (spent, now, ticket.reservation)
        )
    else:
        db.execute("DELETE FROM ledger WHERE id = ?", (ticket.reservation,))


def _wait(rows: list[tuple[float, int]], used: int, limit: int, window: float, now: float) -> float:
    """Seconds until enough of the oldest calls age out for one call to be free."""
    for at, calls in rows:  # oldest first
        used -= calls
        if used < limit:
            return max(0.0, at + window - now)
    return 0.0


__all__ = [
    "RunRecord",
    "Store",
    "StoreError",
    "Ticket",
    "default_db_path",
    "record_agent_run",
    "resolve_db_path",
]
