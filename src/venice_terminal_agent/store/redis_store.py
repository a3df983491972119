"""The Redis store: the same promises as SQLite's, for many `serve` processes sharing budgets.

Per chat (keys under `venice-agent:`):
  ledger:{chat}    sorted set, scored by time: `id|calls|deadline` per reservation; a
                   deadline means "held by a run": past it the process is taken for dead
                   and the calls are free again (so a killed process never holds them for
                   longer than `hold` seconds); a settled entry has no deadline
  chat:{chat}      hash: last_message, last_reply (only when it may be given again),
                   last_exit, created, updated
  messages:{chat}  list of `id<TAB>json`, the exchanges (the last MAX_MESSAGES kept)
  owner:{chat}     the user who created it (`serve --token-file`)

`begin_reply`, `finish_reply` and `settle` are Lua scripts, so each runs atomically in Redis: the same
check-and-reserve, record-and-settle as the SQLite transactions. A Redis that cannot be
reached is a `StoreUnavailable` (the API answers 503); nothing is reserved then.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.receipt import Receipt
from .protocol import ChatDump, StoreUnavailable, shown
from .schema import StoreError
from .sqlite import KEEP_LEDGER, Ticket

PREFIX = "venice-agent:"
MAX_MESSAGES = 1000
MAX_CONNECTIONS = 64  # per process

BEGIN = """
local now, limit, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local wanted, text, keep, hold = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - keep)
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES')
local used, live = 0, {}
for i = 1, #rows, 2 do
  local calls, deadline = string.match(rows[i], '^%d+|(%d+)|(.*)$')
  if deadline ~= '' and tonumber(deadline) <= now then
    redis.call('ZREM', KEYS[1], rows[i])  -- held by a run that never settled: its process died
  else
    used = used + tonumber(calls)
    live[#live + 1] = {tonumber(rows[i + 1]), tonumber(calls)}
  end
end
local left = math.max(0, limit - used)
local last = redis.call('HMGET', KEYS[2], 'last_message', 'last_reply', 'last_exit')
if last[1] == text and last[2] then
  return {'repeat', left, last[2], last[3] or ''}
end
if left == 0 and wanted ~= 0 then
  for _, row in ipairs(live) do  -- oldest first: when enough of them age out, a call is free
    used = used - row[2]
    if used < limit then return {'wait', 0, tostring(math.max(0, row[1] + window - now))} end
  end
  return {'wait', 0, '0'}
end
local reserved = left
if wanted >= 0 then reserved = math.min(left, wanted) end
if reserved == 0 then return {'none', left} end
local id = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[1], now, id .. '|' .. reserved .. '|' .. tostring(now + hold))
redis.call('EXPIRE', KEYS[1], math.ceil(keep))
return {'reserved', left, id, reserved}
"""

# KEYS[1] the ledger; ARGV[1] now, ARGV[2] the reservation ('' none), ARGV[3] calls spent,
# ARGV[4] how long the ledger is kept. Settling the same reservation again changes nothing.
SETTLE = """
local now, reservation, spent = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
if reservation ~= '' then
  local prefix, at = reservation .. '|', now
  local rows = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  for i = 1, #rows, 2 do
    if string.sub(rows[i], 1, #prefix) == prefix then
      redis.call('ZREM', KEYS[1], rows[i])
      at = math.max(tonumber(rows[i + 1]), now)
    end
  end
  if spent > 0 then  -- settled: counted once, whether or not the hold had run out meanwhile
    redis.call('ZADD', KEYS[1], at, reservation .. '|' .. spent .. '|')
    redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[4])))
  end
end
"""

# SETTLE, then the exchange recorded: ARGV[5] text, ARGV[6] reply, ARGV[7] '1' if the reply may
# be given again, ARGV[8] how the run ended, ARGV[9] the message's JSON, ARGV[10] messages kept.
FINISH = (
    SETTLE
    + """
redis.call('HSET', KEYS[2], 'last_message', ARGV[5], 'updated', ARGV[1])
redis.call('HSETNX', KEYS[2], 'created', ARGV[1])
if ARGV[7] == '1' then redis.call('HSET', KEYS[2], 'last_reply', ARGV[6])
else redis.call('HDEL', KEYS[2], 'last_reply') end
if ARGV[8] ~= '' then redis.call('HSET', KEYS[2], 'last_exit', ARGV[8]) end
local id = redis.call('INCR', KEYS[4])
redis.call('RPUSH', KEYS[3], id .. '\\t' .. ARGV[9])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[10]), -1)
return id
"""
)


class RedisStore:
    """A `protocol.ChatStore` on Redis (`redis://host:port/db`), used from async code."""

    def __init__(self, url: str, *, hold: float = 600.0, prefix: str = PREFIX) -> None:
        self.url = url
        self.hold = hold
        self.prefix = prefix
        self._redis: Any = None

    async def __aenter__(self) -> RedisStore:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self) -> None:
        if self._redis is not None:
            return
        import redis.asyncio as redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # One quick retry: a pooled connection that died with a restarted Redis is replaced at
        # once, and a Redis that is down is said in well under a second, not after backoffs.
        # Past MAX_CONNECTIONS busy at once, a request waits its turn instead of failing.
        pool = redis.BlockingConnectionPool.from_url(
            self.url,
            max_connections=MAX_CONNECTIONS,
            timeout=10,
            socket_connect_timeout=2,
            socket_timeout=10,
            retry=Retry(NoBackoff(), 1),
            decode_responses=True,
        )
        self._redis = redis.Redis(connection_pool=pool)
        self._begin = self._redis.register_script(BEGIN)
        self._finish = self._redis.register_script(FINISH)
        self._settle = self._redis.register_script(SETTLE)
        try:
            await self.ping()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        if self._redis is not None:
            redis, self._redis = self._redis, None
            await redis.aclose(close_connection_pool=True)

    async def ping(self) -> None:
        await self._call(self._client().ping())

    def _key(self, kind: str, chat: str = "") -> str:
        return f"{self.prefix}{kind}:{chat}" if chat else f"{self.prefix}{kind}"

    async def begin_reply(
        self, chat: str, text: str, *, now: float, limit: int, window: float, wanted: int | None
    ) -> Ticket:
        keys = [self._key("ledger", chat), self._key("chat", chat), self._key("seq")]
        keep = max(window, KEEP_LEDGER)
        args = [repr(now), limit, repr(window), -1 if wanted is None else wanted, text, repr(keep), self.hold]
        outcome = await self._call(self._begin(keys=keys, args=args))
        kind, left = outcome[0], int(outcome[1])
        if kind == "repeat":
            return Ticket(left, repeat=outcome[2], repeat_exit=outcome[3] or None)
        if kind == "wait":
            return Ticket(0, wait=float(outcome[2]))
        if kind == "reserved":
            return Ticket(left, reservation=int(outcome[2]), reserved=int(outcome[3]))
        return Ticket(left)

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
        reservation = "" if ticket is None or ticket.reservation is None else str(ticket.reservation)
        spent = 0 if receipt is None else receipt.calls
        message = {"at": now, "text": text, "reply": reply, "kind": kind}
        if receipt is not None:
            message["receipt"] = receipt.to_dict()
        exit = "" if receipt is None else str(receipt.stopped_because)
        keys = [
            self._key("ledger", chat),
            self._key("chat", chat),
            self._key("messages", chat),
            self._key("seq"),
        ]
        args = [
            repr(now), reservation, spent, repr(max(KEEP_LEDGER, self.hold)), text, reply,
            "1" if reusable else "0", exit, json.dumps(message, ensure_ascii=False), MAX_MESSAGES,
        ]  # fmt: skip
        message_id = int(await self._call(self._finish(keys=keys, args=args)))
        return message_id if receipt is not None else None

    async def settle(self, chat: str, ticket: Ticket, spent: int, *, now: float) -> None:
        if ticket.reservation is None:
            return
        args = [repr(now), str(ticket.reservation), spent, repr(max(KEEP_LEDGER, self.hold))]
        await self._call(self._settle(keys=[self._key("ledger", chat)], args=args))

    async def calls_used(self, chat: str, *, now: float, window: float) -> int:
        rows = await self._call(
            self._client().zrangebyscore(self._key("ledger", chat), f"({now - window!r}", "+inf")
        )
        used = 0
        for row in rows:
            _, calls, deadline = row.split("|")
            if not deadline or float(deadline) > now:
                used += int(calls)
        return used

    async def history(self, chat: str, limit: int = 50) -> list[dict[str, Any]]:
        rows = await self._call(self._client().lrange(self._key("messages", chat), -limit, -1))
        found = []
        for row in rows:
            number, _, data = row.partition("\t")
            message = json.loads(data)
            receipt = message.pop("receipt", None)
            found.append({"id": int(number), **message, "run": int(number) if receipt is not None else None})
        return found

    async def claim_chat(self, chat: str, user: str, *, now: float) -> bool:
        key = self._key("owner", chat)
        await self._call(self._client().set(key, user, nx=True))
        return await self.owner(chat) == user

    async def owner(self, chat: str) -> str | None:
        return await self._call(self._client().get(self._key("owner", chat)))

    # ---- `venice-agent store copy` ----

    async def export_chats(self) -> list[ChatDump]:
        """Every chat in this Redis (under the prefix), for `store copy`."""
        client, names = self._client(), set()
        for kind in ("chat", "messages", "ledger", "owner"):
            async for key in client.scan_iter(match=f"{self.prefix}{kind}:*", count=500):
                names.add(key.removeprefix(f"{self.prefix}{kind}:"))
        dumps = []
        for name in sorted(names):
            fields = await self._call(client.hgetall(self._key("chat", name)))
            dump = ChatDump(name, fields.get("last_message"), fields.get("last_reply"))
            dump.created = float(fields["created"]) if "created" in fields else None
            dump.updated = float(fields["updated"]) if "updated" in fields else None
            dump.owner = await self.owner(name)
            rows = await self._call(client.zrange(self._key("ledger", name), 0, -1, withscores=True))
            dump.ledger = [(at, int(row.split("|")[1])) for row, at in rows]
            for row in await self._call(client.lrange(self._key("messages", name), 0, -1)):
                dump.messages.append(json.loads(row.partition("\t")[2]))
            dumps.append(dump)
        return dumps

    async def import_chats(self, dumps: list[ChatDump]) -> None:
        """Write `dumps` here, refusing any chat this Redis already holds (checked first)."""
        client = self._client()
        for dump in dumps:
            keys = [self._key(kind, dump.chat) for kind in ("chat", "messages", "ledger", "owner")]
            if await self._call(client.exists(*keys)):
                raise StoreError(
                    f"the destination already holds chat {dump.chat!r}; copy into a store without it"
                )
        for dump in dumps:
            count = len(dump.ledger) + len(dump.messages)
            first = int(await self._call(client.incrby(self._key("seq"), count))) - count + 1 if count else 0
            async with client.pipeline(transaction=True) as batch:
                fields = {
                    "last_message": dump.last_message,
                    "last_reply": dump.last_reply,
                    "last_exit": dump.last_exit,
                    "created": dump.created,
                    "updated": dump.updated,
                }
                kept = {name: value for name, value in fields.items() if value is not None}
                if kept:
                    batch.hset(self._key("chat", dump.chat), mapping=kept)
                for number, message in enumerate(dump.messages, first):
                    batch.rpush(
                        self._key("messages", dump.chat),
                        f"{number}\t{json.dumps(message, ensure_ascii=False)}",
                    )
                for number, (at, calls) in enumerate(dump.ledger, first + len(dump.messages)):
                    batch.zadd(self._key("ledger", dump.chat), {f"{number}|{calls}|": at})
                if dump.owner is not None:
                    batch.set(self._key("owner", dump.chat), dump.owner)
                await self._call(batch.execute())

    def _client(self) -> Any:
        if self._redis is None:
            raise StoreError("the store is closed")
        return self._redis

    async def _call(self, pending: Any) -> Any:
        from redis.exceptions import ConnectionError, RedisError, TimeoutError

        try:
            return await pending
        except (ConnectionError, TimeoutError, OSError) as problem:
            raise StoreUnavailable(f"{shown(self.url)}: cannot reach Redis ({_one_line(problem)})") from None
        except RedisError as problem:
            raise StoreError(f"{shown(self.url)}: {_one_line(problem)}") from None


def _one_line(problem: BaseException) -> str:
    return " ".join(str(problem).split()) or type(problem).__name__
