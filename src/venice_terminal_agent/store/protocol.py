"""What the chat bot needs from a store, which both stores give: SQLite (`sqlite.Store`, the
embedded default) and Redis (`redis_store.RedisStore`, for many processes sharing budgets).

A reply is reserved, then settled: `begin_reply` atomically answers a repeat, says how long to
wait, or reserves calls; `finish_reply` records the exchange and settles the reservation at
what the run spent. `store.open_store("redis://…")` picks Redis; anything else is an SQLite file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.errors import StoreError, StoreUnavailable
from ..core.receipt import Receipt
from .sqlite import Ticket

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class ChatStore(Protocol):
    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def ping(self) -> None:
        """Raise `StoreError` unless the store answers now."""

    async def begin_reply(
        self, chat: str, text: str, *, now: float, limit: int, window: float, wanted: int | None
    ) -> Ticket: ...

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
    ) -> int | None: ...

    async def settle(self, chat: str, ticket: Ticket, spent: int, *, now: float) -> None:
        """Settle a failed reply's reservation at the `spent` calls that really ran, recording
        nothing else; idempotent."""

    async def calls_used(self, chat: str, *, now: float, window: float) -> int: ...

    async def history(self, chat: str, limit: int = 50) -> list[dict[str, Any]]: ...

    async def claim_chat(self, chat: str, user: str, *, now: float) -> bool:
        """Make `user` the chat's owner if it has none; True if the chat is `user`'s."""
        ...

    async def owner(self, chat: str) -> str | None: ...


@dataclass
class ChatDump:
    chat: str
    last_message: str | None = None
    last_reply: str | None = None
    created: float | None = None
    updated: float | None = None
    owner: str | None = None
    ledger: list[tuple[float, int]] = field(default_factory=list)  # (at, calls), oldest first
    messages: list[dict[str, Any]] = field(default_factory=list)  # at, text, reply, kind, receipt

    @property
    def last_exit(self) -> str | None:
        """How the chat's last run ended (said again with a repeated message)."""
        for message in reversed(self.messages):
            if message["kind"] == "run" and message.get("receipt"):
                return str(message["receipt"]["stopped_because"])
        return None


def is_redis_url(spec: str | os.PathLike[str]) -> bool:
    return str(spec).startswith(REDIS_SCHEMES)


def shown(spec: str | os.PathLike[str]) -> str:
    """A store's name as said to people: a URL without its password."""
    from urllib.parse import urlsplit

    text = str(spec)
    password = urlsplit(text).password if is_redis_url(text) else None
    return text.replace(f":{password}@", ":***@", 1) if password else text


__all__ = ["ChatDump", "ChatStore", "StoreError", "StoreUnavailable", "is_redis_url", "shown"]
