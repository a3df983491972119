"""`venice-agent store copy SRC DST`: the bot's chats from one store to another (SQLite ⇄ Redis).

What a chat is, whichever store holds it (`ChatDump`): its last message and reply (for the
free repeat), every exchange with its receipt, the calls in its ledger, and its owner. A
reservation still held by a run is copied as spent (the run may yet spend it). Chats are
copied only into a store that does not hold them yet: nothing is merged or overwritten.
The terminal agent's own runs (`logs`) stay in SQLite: Redis keeps the bot's chats only.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from ..core.errors import StoreError
from .protocol import ChatDump


@dataclass(frozen=True)
class Copied:
    chats: int
    exchanges: int
    calls: int
    agent_runs_left: int  # terminal agent runs not copied (Redis keeps chats only)


async def copy_store(source: str, destination: str) -> Copied:
    """Copy every chat of `source` into `destination` (each an SQLite file or a Redis URL)."""
    from . import open_store
    from .protocol import is_redis_url
    from .sqlite import Store

    if source == destination:
        raise StoreError("the source and the destination are the same store")
    reader = open_store(source) if is_redis_url(source) else Store(source, create=False)
    writer = open_store(destination)
    async with _opened(reader), _opened(writer):
        agent_runs = 0
        if isinstance(reader, Store):
            dumps, agent_runs = await reader.run(sqlite_export)
        else:
            dumps = await reader.export_chats()  # type: ignore[attr-defined]
        if isinstance(writer, Store):
            await writer.run(lambda db: sqlite_import(db, dumps), write=True)
        else:
            await writer.import_chats(dumps)  # type: ignore[attr-defined]
    calls = sum(calls for dump in dumps for _, calls in dump.ledger)
    exchanges = sum(len(dump.messages) for dump in dumps)
    return Copied(len(dumps), exchanges, calls, agent_runs)


class _opened:
    def __init__(self, store: Any) -> None:
        self.store = store

    async def __aenter__(self) -> Any:
        await self.store.open()
        return self.store

    async def __aexit__(self, *exc: object) -> None:
        await self.store.close()


def sqlite_export(db: sqlite3.Connection) -> tuple[list[ChatDump], int]:
    """Every chat in an SQLite store, and how many terminal agent runs it also holds."""
    names = [row[0] for row in db.execute(
        "SELECT chat FROM conversations UNION SELECT chat FROM messages UNION SELECT chat FROM ledger"
        " UNION SELECT chat FROM owners ORDER BY 1"
    )]  # fmt: skip
    dumps = []
    for name in names:
        dump = ChatDump(name)
        row = db.execute(
            "SELECT last_message, last_reply, created, updated FROM conversations WHERE chat = ?", (name,)
        ).fetchone()
        if row is not None:
            dump.last_message, dump.last_reply, dump.created, dump.updated = row
        owner = db.execute("SELECT user FROM owners WHERE chat = ?", (name,)).fetchone()
        dump.owner = owner[0] if owner else None
        dump.ledger = [
            (at, calls)
            for at, calls in db.execute(
                "SELECT at, calls FROM ledger WHERE chat = ? ORDER BY at, id", (name,)
            )
        ]
        for at, text, reply, kind, receipt in db.execute(
            "SELECT messages.at, text, reply, kind, runs.receipt FROM messages"
            " LEFT JOIN runs ON runs.id = messages.run WHERE messages.chat = ? ORDER BY messages.id",
            (name,),
        ):
            message = {"at": at, "text": text, "reply": reply, "kind": kind}
            if receipt is not None:
                message["receipt"] = json.loads(receipt)
            dump.messages.append(message)
        dumps.append(dump)
    agent_runs = db.execute("SELECT count(*) FROM runs WHERE source != 'bot'").fetchone()[0]
    return dumps, int(agent_runs)


def sqlite_import(db: sqlite3.Connection, dumps: list[ChatDump]) -> None:
    """Write `dumps` into an SQLite store (one transaction: all of them or none)."""
    for dump in dumps:
        taken = db.execute(
            "SELECT 1 FROM conversations WHERE chat = ?1 UNION SELECT 1 FROM messages WHERE chat = ?1"
            " UNION SELECT 1 FROM ledger WHERE chat = ?1 UNION SELECT 1 FROM owners WHERE chat = ?1",
            (dump.chat,),
        ).fetchone()
        if taken:
            raise StoreError(
                f"the destination already holds chat {dump.chat!r}; copy into a store without it"
            )
        if dump.last_message is not None or dump.messages:
            at = dump.messages[-1]["at"] if dump.messages else 0.0
            db.execute(
                "INSERT INTO conversations (chat, last_message, last_reply, created, updated) VALUES (?, ?, ?, ?, ?)",
                (dump.chat, dump.last_message, dump.last_reply, dump.created or at, dump.updated or at),
            )
        for message in dump.messages:
            run = None
            if message.get("receipt"):
                receipt = message["receipt"]
                run = db.execute(
                    "INSERT INTO runs (at, source, chat, question, stopped_because, calls, duration, model,"
                    " receipt) VALUES (?, 'bot', ?, ?, ?, ?, ?, ?, ?)",
                    (
                        message["at"], dump.chat, message["text"], receipt["stopped_because"],
                        receipt.get("calls", 0), receipt.get("duration"), receipt.get("model"),
                        json.dumps(receipt, ensure_ascii=False),
                    ),
                ).lastrowid  # fmt: skip
            db.execute(
                "INSERT INTO messages (chat, at, text, reply, kind, run) VALUES (?, ?, ?, ?, ?, ?)",
                (dump.chat, message["at"], message["text"], message["reply"], message["kind"], run),
            )
        db.executemany(
            "INSERT INTO ledger (chat, at, calls) VALUES (?, ?, ?)",
            [(dump.chat, at, calls) for at, calls in dump.ledger],
        )
        if dump.owner is not None:
            db.execute(
                "INSERT INTO owners (chat, user, at) VALUES (?, ?, ?)",
                (dump.chat, dump.owner, dump.created or 0.0),
            )
