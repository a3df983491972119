"""Replies per second and latency of `venice-agent serve`: 1 process on SQLite (the baseline),
1 and 4 processes sharing one Redis, with the command planner and with the fake model server.

Every request is a real reply over HTTP on loopback: a new chat each time (so every reply
runs its tool call and budgets never run dry), `read_file` through the command planner, or
one streamed answer from the fake model (`venice_terminal_agent.testing.fake_venice`, one
process, the same for every configuration). The load comes from one client process on
keep-alive connections, spread round-robin over the serve processes.

    uv run python benchmarks/bench_serve.py [--replies 2000] [--concurrency 32] [--rate 500]

Reported per configuration: replies/s at saturation (closed loop, `--concurrency` requests in
flight), p50 and p99 latency there, and each as a ratio against the single SQLite process
measured in the same run. Then an open loop at `--rate` requests/s on 4 Redis processes with
the command planner: p50/p99 measured from each request's scheduled time.
Targets: 4 processes on Redis ≥ 2× one SQLite process (command planner); p99 < 50 ms at 500/s.
Needs redis-server (Debian: apt-get install redis-server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

PYTHON = sys.executable
COMMAND = str(Path(PYTHON).parent / "venice-agent")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@asynccontextmanager
async def process(*command: str, ready: bytes, env: dict[str, str] | None = None) -> Any:
    child = await asyncio.create_subprocess_exec(
        *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    assert child.stdout is not None
    first = b""
    async with asyncio.timeout(60):
        while ready not in (line := await child.stdout.readline()):
            assert line, f"{command[0]} exited: {first.decode()}"
            first += line
    drain = asyncio.create_task(child.stdout.read())
    try:
        yield child.pid
    finally:
        child.terminate()
        await child.wait()
        await drain


class Connection:
    """One keep-alive HTTP/1.1 connection: lighter than a client library, so the load
    generator is not what is measured."""

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

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


class Load:
    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.count = 0

    async def one(self, connection: Connection, text: str) -> float:
        self.count += 1
        started = time.perf_counter()
        status, body = await connection.post(
            f"/v1/chats/b{self.count}/messages", json.dumps({"text": text}).encode()
        )
        assert status == 200, body
        assert b"stopped: answered" in body, body
        return time.perf_counter() - started

    async def closed(self, replies: int, concurrency: int, text: str) -> tuple[float, list[float]]:
        latencies: list[float] = []
        left = [replies]

        async def worker(number: int) -> None:
            connection = Connection(self.ports[number % len(self.ports)])
            try:
                while left[0] > 0:
                    left[0] -= 1
                    latencies.append(await self.one(connection, text))
            finally:
                connection.close()

        started = time.perf_counter()
        await asyncio.gather(*(worker(number) for number in range(concurrency)))
        return replies / (time.perf_counter() - started), latencies

    async def open(self, rate: float, seconds: float, text: str) -> list[float]:
        """Requests sent on a fixed schedule; each latency counts from its scheduled time."""
        idle: list[Connection] = [Connection(self.ports[n % len(self.ports)]) for n in range(256)]
        latencies: list[float] = []

        async def at(when: float) -> None:
            await asyncio.sleep(max(0.0, when - time.perf_counter()))
            connection = idle.pop() if idle else Connection(self.ports[0])
            await self.one(connection, text)
            latencies.append(time.perf_counter() - when)
            idle.append(connection)

        start = time.perf_counter() + 0.2
        await asyncio.gather(*(at(start + n / rate) for n in range(int(rate * seconds))))
        for connection in idle:
            connection.close()
        return latencies


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) the processes used so far: what a reply costs whatever the
    machine's load, which only changes how long it waits for a core."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def p(latencies: list[float], q: float) -> float:
    return statistics.quantiles(latencies, n=100, method="inclusive")[int(q) - 1] * 1000


async def main(args: argparse.Namespace) -> int:
    redis = shutil.which("redis-server")
    if redis is None:
        print("bench_serve: redis-server is needed (apt-get install redis-server)", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    (folder / "notes.txt").write_text("a short note\n")
    time_server = {"command": PYTHON, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"time": time_server}}))
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env.update(XDG_CONFIG_HOME=str(folder / "config"), XDG_DATA_HOME=str(folder / "data"))
    script = json.dumps({"replies": [{"text": "an answer"}], "loop": True})
    load_before = os.getloadavg()
    rows: list[tuple[str, str, float, float, float, float]] = []
    async with AsyncExitStack() as stack:
        redis_port = free_port()
        await stack.enter_async_context(process(
            redis, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            ready=b"Ready to accept connections",
        ))  # fmt: skip
        fake_port = free_port()
        fake = f"http://127.0.0.1:{fake_port}/api/v1"
        await stack.enter_async_context(
            process(
                PYTHON, "-m", "venice_terminal_agent.testing.fake_venice", script, "--port", str(fake_port),
                ready=b"http://",
            )
        )  # fmt: skip
        for planner in ("commands", "model"):
            extra = ["--offline"] if planner == "commands" else ["--mcp-config", str(folder / "mcp.json")]
            model_env = (
                {**env, "VENICE_API_KEY": "bench", "VENICE_BASE_URL": fake} if planner == "model" else env
            )
            text = "read_file path=notes.txt" if planner == "commands" else "say something"
            for name, store, count in (
                ("SQLite, 1 process", str(folder / f"{planner}.db"), 1),
                ("Redis, 1 process", f"redis://127.0.0.1:{redis_port}/1", 1),
                ("Redis, 4 processes", f"redis://127.0.0.1:{redis_port}/2", 4),
            ):
                async with AsyncExitStack() as servers:
                    ports = [free_port() for _ in range(count)]
                    pids = await asyncio.gather(*(
                        servers.enter_async_context(process(
                            COMMAND, "serve", "--port", str(port), "--store", store, "--root", str(folder),
                            *extra, ready=b"venice-agent serve: http://", env=model_env,
                        ))
                        for port in ports
                    ))  # fmt: skip
                    load = Load(ports)
                    await load.closed(min(200, args.replies), args.concurrency, text)  # warm-up
                    used = cpu_seconds(pids)
                    rate, latencies = await load.closed(args.replies, args.concurrency, text)
                    cpu = (cpu_seconds(pids) - used) / args.replies * 1000
                    rows.append((planner, name, rate, p(latencies, 50), p(latencies, 99), cpu))
                    print(f"{planner:8} {name:20} {rate:7.0f}/s  p50 {rows[-1][3]:6.1f} ms  p99 {rows[-1][4]:6.1f} ms"
                          f"  {cpu:.2f} ms CPU/reply", file=sys.stderr, flush=True)  # fmt: skip
                    if planner == "commands" and count == 4:
                        opened = await load.open(args.rate, args.seconds, text)
                        open_row = (p(opened, 50), p(opened, 99), len(opened))
    load_after = os.getloadavg()
    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; {args.replies} replies per row, "
          f"{args.concurrency} in flight\n")  # fmt: skip
    print("| planner | serve | replies/s | × SQLite | p50 ms | p99 ms | p99 × SQLite | serve CPU ms/reply |")
    print("|---|---|---|---|---|---|---|---|")
    for planner, name, rate, p50, p99, cpu in rows:
        base = next(row for row in rows if row[0] == planner)
        print(
            f"| {planner} | {name} | {rate:,.0f} | {rate / base[2]:.2f} | {p50:.1f} | {p99:.1f} | {p99 / base[4]:.2f} | {cpu:.2f} |"
        )
    p50, p99, sent = open_row
    print(f"\nOpen loop, commands, Redis, 4 processes: {args.rate:.0f} requests/s for {args.seconds:g} s "
          f"({sent} replies): p50 {p50:.1f} ms, p99 {p99:.1f} ms (target < 50 ms)")  # fmt: skip
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replies", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--seconds", type=float, default=4.0)
    sys.exit(asyncio.run(main(parser.parse_args())))
