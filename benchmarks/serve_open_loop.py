"""The open loop of `bench_serve.py`: requests sent on a fixed schedule, whatever the replies
do, by a few Python processes (this file as a command, one per sender); each latency counts
from the request's scheduled time, so a queue that builds up shows in the figures."""

from __future__ import annotations

import asyncio
import json
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


class Connection:
    """One keep-alive HTTP/1.1 connection (the open loop's senders)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return int(status_line.split()[1]), await self.reader.readexactly(length)


async def send(plan: dict, start: float) -> list[float]:
    """One sender: requests index, index + every, … of the schedule; latency from schedule."""
    ports, rate, body = plan["ports"], plan["rate"], plan["body"].encode()
    offset = time.time() - time.perf_counter()  # the shared start is wall-clock time
    idle = [Connection(ports[n % len(ports)]) for n in range(256 // plan["every"])]
    latencies: list[float] = []

    async def at(number: int) -> None:
        when = start - offset + number / rate
        await asyncio.sleep(max(0.0, when - time.perf_counter()))
        connection = idle.pop() if idle else Connection(ports[number % len(ports)])
        status, reply = await connection.post(f"/v1/chats/open-{number}/messages", body)
        assert status == 200 and b"stopped: answered" in reply, reply
        latencies.append(time.perf_counter() - when)
        idle.append(connection)

    numbers = range(plan["index"], int(rate * plan["seconds"]), plan["every"])
    await asyncio.gather(*(at(number) for number in numbers))
    return latencies


if __name__ == "__main__":
    print("ready", flush=True)
    print(json.dumps(asyncio.run(send(json.loads(sys.argv[1]), float(sys.stdin.readline())))))
