"""Which store a spec names: a Redis URL is `store_redis.RedisStore`, anything else an SQLite
file (`store.Store`). Above both, so neither store imports the other."""

from __future__ import annotations

import os

from .protocol import ChatStore, is_redis_url
from .sqlite import Store


def open_store(spec: str | os.PathLike[str] | None, *, hold: float = 600.0) -> ChatStore:
    """The store named by `spec` (not opened yet): a Redis URL, else an SQLite file (None:
    memory). `hold`: seconds a Redis reservation outlives a process that died holding it."""
    if spec is not None and is_redis_url(spec):
        from .redis_store import RedisStore

        return RedisStore(str(spec), hold=hold)
    return Store(spec)
