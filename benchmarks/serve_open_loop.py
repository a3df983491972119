"""The open loop of `bench_serve.py`: requests sent on a fixed schedule, whatever the replies
do, by a few Python processes (this file as a command, one per sender); each latency counts
from the request's scheduled time, so a queue that builds up shows in the figures."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time


async def open_loop(ports: list[int], rate: float, seconds: float, senders: int, body: str) -> list[float]:
    """`senders` Python processes (this file as a command) share `rate` on one schedule, which
    starts once every one of them is ready (a late start would be a burst)."""
    children = []
    for index in range(senders):
        plan = {
            "ports": ports,
            "rate": rate,
            "seconds": seconds,
            "index": index,
            "every": senders,
            "body": body,
        }
        children.append(
            await asyncio.create_subprocess_exec(
                sys.executable, __file__, json.dumps(plan), stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
        )  # fmt: skip
    for child in children:
        assert child.stdout is not None and await child.stdout.readline() == b"ready\n"
    start = f"{time.time() + 0.2!r}\n".encode()
    for child in children:  # all of them, before waiting for any
        assert child.stdin is not None
        child.stdin.write(start)
        await child.stdin.drain()
    latencies: list[float] = []
    for child in children:
        out, _ = await child.communicate()
        assert child.returncode == 0, "a sender failed"
        latencies += json.loads(out)
    return latencies


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection, as a protocol (streams cost the sender more CPU)."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.reply: asyncio.Future[tuple[int, bytes]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        head, found, rest = self.buffer.partition(b"\r\n\r\n")
        length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head) if found else None
        if length is None or len(rest) < int(length[1]) or self.reply is None or self.reply.done():
            return
        self.buffer = bytearray()
        self.reply.set_result((int(head.split(None, 2)[1]), bytes(rest)))

    def connection_lost(self, exc: Exception | None) -> None:
        if self.reply is not None and not self.reply.done():
            self.reply.set_exception(exc or ConnectionError("the server closed the connection"))

    async def post(self, request: bytes) -> tuple[int, bytes]:
        assert self.transport is not None
        self.reply = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return await self.reply


async def send(plan: dict, start: float) -> list[float]:
    """One sender: requests index, index + every, … of the schedule, request N to serve process
    N mod count (round robin, as a load balancer would); latency from the scheduled time."""
    ports, rate, body = plan["ports"], plan["rate"], plan["body"].encode()
    loop = asyncio.get_running_loop()
    offset = time.time() - time.perf_counter()  # the shared start is wall-clock time
    idle: dict[int, list[Connection]] = {port: [] for port in ports}
    latencies: list[float] = []

    async def at(number: int) -> None:
        when = start - offset + number / rate
        port = ports[number % len(ports)]
        request = (
            f"POST /v1/chats/open-{number}/messages HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body  # serve answers only to the Host it listens as, port included
        await asyncio.sleep(max(0.0, when - time.perf_counter()))
        if idle[port]:
            connection = idle[port].pop()
        else:
            _, connection = await loop.create_connection(Connection, "127.0.0.1", port)
        status, reply = await connection.post(request)
        assert status == 200 and b"stopped: answered" in reply, reply
        latencies.append(time.perf_counter() - when)
        idle[port].append(connection)

    numbers = range(plan["index"], int(rate * plan["seconds"]), plan["every"])
    await asyncio.gather(*(at(number) for number in numbers))
    return latencies


if __name__ == "__main__":
    print("ready", flush=True)
    print(json.dumps(asyncio.run(send(json.loads(sys.argv[1]), float(sys.stdin.readline())))))
