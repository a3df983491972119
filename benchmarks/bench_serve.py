"""Replies per second and latency of `venice-agent serve`: 1 process on SQLite (the baseline),
1 and 4 processes sharing one Redis, with the command planner and with the fake model server.

Every request is a real reply over HTTP on loopback: a new chat each time (so every reply
runs its tool call and budgets never run dry), `read_file` through the command planner, or
one streamed answer from the fake model (`venice_terminal_agent.testing.fake_venice`, one
process, the same for every configuration).

    uv run python benchmarks/bench_serve.py [--rounds 3] [--seconds 3] [--connections 32] [--rate 500]

The load at saturation comes from `wrk` (C, one epoll loop per thread; Debian:
`apt-get install wrk`): it costs a few hundredths of a millisecond of CPU a reply, a tenth of
what serve spends; first it is pointed at a trivial route on the same HTTP stack (uvicorn,
httptools, Starlette), which shows how far above serve's rate the client can go. Its threads
are spread over the serve processes, and its Lua script gives each request a new chat and
checks every reply said "stopped: answered".

Reported per configuration: replies/s in a closed loop (`--connections` requests in flight,
`--rounds` rounds of `--seconds`, the configurations taking turns so that other work on a
shared machine falls on each alike), p50 and p99 latency there (the median round), each as a
ratio against the single SQLite process measured in the same run, and the CPU each part used per reply (serve processes, redis-server,
wrk, the fake model server, and everything else on the machine: other people's work). Then an
open loop at `--rate` requests/s on 4 Redis processes with the command planner, sent on a fixed
schedule by `--senders` Python processes; each latency counts from its scheduled time.
Targets: 4 processes on Redis ≥ 2× one SQLite process (command planner); p99 < 50 ms at 500/s.
Needs redis-server and wrk (Debian: apt-get install redis-server wrk).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import socket
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from serve_open_loop import open_loop

PYTHON = sys.executable
COMMAND = str(Path(PYTHON).parent / "venice-agent")
HERE = Path(__file__).parent
TICK = os.sysconf("SC_CLK_TCK")

# wrk's script: thread N talks to serve process N mod count; each request names a new chat;
# a reply that is not a 200 with "stopped: answered" counts as bad (and fails the benchmark).
WRK_SCRIPT = """
local ports, threads, made = {PORTS}, {}, 0
function setup(thread)
  made = made + 1
  thread.addr = wrk.lookup("127.0.0.1", tostring(ports[(made - 1) % #ports + 1]))[1]
  thread:set("id", made)
  table.insert(threads, thread)
end
count, bad = 0, 0  -- globals: done() reads each thread's `bad`
local body = '{BODY}'
function request()
  count = count + 1
  local path = "/v1/chats/{RUN}-" .. id .. "-" .. count .. "/messages"
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, body)
end
function response(status, headers, text)
  if status ~= 200 or not string.find(text, "stopped: answered", 1, true) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local bads = 0
  for _, thread in ipairs(threads) do bads = bads + thread:get("bad") end
  local e = summary.errors
  io.write(string.format('{"replies": %d, "us": %d, "p50": %d, "p99": %d, "bad": %d, "errors": %d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), bads,
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def free_ports(count: int) -> list[int]:
    """`count` different free ports (the probes stay open until all are picked)."""
    probes = [socket.socket() for _ in range(count)]
    for probe in probes:
        probe.bind(("127.0.0.1", 0))
    ports = [probe.getsockname()[1] for probe in probes]
    for probe in probes:
        probe.close()
    return ports


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


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) the processes used so far, their threads included."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def machine_busy() -> float:
    """CPU seconds every core of the machine spent not idle so far (all users)."""
    fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICK


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


async def wrk(ports: list[int], seconds: float, connections: int, run: str, body: str) -> dict:
    """`seconds` of load; `run` names this run's chats (each request a new one)."""
    script = Path(tempfile.mkdtemp(prefix="bench-serve-wrk-")) / "load.lua"
    script.write_text(
        WRK_SCRIPT.replace("{PORTS}", "{" + ", ".join(map(str, ports)) + "}")
        .replace("{RUN}", run)
        .replace("{BODY}", body)
    )
    threads = len(ports) * max(1, 2 // len(ports))
    child = await asyncio.create_subprocess_exec(
        "wrk", f"-t{threads}", f"-c{connections}", f"-d{round(seconds)}s", "--timeout", "10s", "-s", str(script),
        f"http://127.0.0.1:{ports[0]}", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await child.communicate()
    shutil.rmtree(script.parent)
    line = out.decode().strip().splitlines()[-1]
    assert child.returncode == 0 and line.startswith("{"), out.decode()
    result = json.loads(line)
    assert result["bad"] == 0 and result["errors"] == 0, f"wrk saw failed replies: {out.decode()}"
    return result


def p(latencies: list[float], q: float) -> float:
    return statistics.quantiles(latencies, n=100, method="inclusive")[int(q) - 1] * 1000


class Row:
    """One configuration: its rounds added up (replies, time, CPU of each part) and each
    round's p50/p99 (the median round is reported)."""

    def __init__(self, planner: str, name: str) -> None:
        self.planner, self.name = planner, name
        self.replies: list[int] = []
        self.seconds = 0.0
        self.p50s: list[float] = []
        self.p99s: list[float] = []
        self.cpu = [0.0] * 5  # serve, redis-server, fake model, wrk, the whole machine

    async def measure(
        self,
        pids: list[int],
        others: list[int],
        ports: list[int],
        args: argparse.Namespace,
        run: str,
        body: str,
    ) -> None:
        """One round; `others`: redis-server's and the fake model's process ids."""
        redis, fake = others[:1], others[1:]
        before = (cpu_seconds(pids), cpu_seconds(redis), cpu_seconds(fake), children_cpu(), machine_busy())
        got = await wrk(ports, args.seconds, args.connections, run, body)
        after = (cpu_seconds(pids), cpu_seconds(redis), cpu_seconds(fake), children_cpu(), machine_busy())
        self.cpu = [total + b - a for total, a, b in zip(self.cpu, before, after, strict=True)]
        self.replies.append(got["replies"])
        self.seconds += got["us"] / 1e6
        self.p50s.append(got["p50"] / 1000)
        self.p99s.append(got["p99"] / 1000)

    @property
    def rate(self) -> float:
        return sum(self.replies) / self.seconds

    def p(self, which: list[float]) -> float:
        return statistics.median(which)

    def per_reply(self) -> list[float]:
        """CPU ms per reply: serve, redis-server, fake model, wrk, the rest of the machine."""
        serve, redis, fake, wrk, busy = (total / sum(self.replies) * 1000 for total in self.cpu)
        return [serve, redis, fake, wrk, busy - serve - redis - fake - wrk]

    def line(self) -> str:
        serve, redis, fake, wrk, rest = self.per_reply()
        return (
            f"{self.rate:7.0f}/s  p50 {self.p50s[-1]:6.1f} ms  p99 {self.p99s[-1]:6.1f} ms  CPU ms/reply: "
            f"serve {serve:.3f} redis {redis:.3f} fake model {fake:.3f} wrk {wrk:.3f} rest {rest:.3f}"
        )


async def main(args: argparse.Namespace) -> int:
    missing = [name for name in ("redis-server", "wrk") if shutil.which(name) is None]
    if missing:
        print(f"bench_serve: {' and '.join(missing)} needed (Debian: apt-get install {' '.join(missing)})",
              file=sys.stderr)  # fmt: skip
        return 2
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    (folder / "notes.txt").write_text("a short note\n")
    time_server = {"command": PYTHON, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"time": time_server}}))
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env.update(XDG_CONFIG_HOME=str(folder / "config"), XDG_DATA_HOME=str(folder / "data"))
    script = json.dumps({"replies": [{"text": "an answer"}], "loop": True})
    load_before = os.getloadavg()
    rows: list[Row] = []
    async with AsyncExitStack() as stack:
        redis_port, fake_port = free_ports(2)
        redis = await stack.enter_async_context(process(
            "redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            ready=b"Ready to accept connections",
        ))  # fmt: skip
        fake_url = f"http://127.0.0.1:{fake_port}/api/v1"
        fake = await stack.enter_async_context(
            process(
                PYTHON, "-m", "venice_terminal_agent.testing.fake_venice", script, "--port", str(fake_port),
                ready=b"http://",
            )
        )  # fmt: skip
        port = free_ports(1)
        async with process(PYTHON, str(HERE / "serve_floor.py"), str(port[0]), ready=b"ready") as floor:
            await wrk(port, 1, args.connections, "floor-warm", "{}")
            used = cpu_seconds([floor])
            got = await wrk(port, args.seconds, args.connections, "floor", "{}")
            floor_row = (
                got["replies"] / got["us"] * 1e6,
                (cpu_seconds([floor]) - used) / got["replies"] * 1000,
            )
        for planner in ("commands", "model"):
            extra = ["--offline"] if planner == "commands" else ["--mcp-config", str(folder / "mcp.json")]
            model_env = (
                {**env, "VENICE_API_KEY": "bench", "VENICE_BASE_URL": fake_url} if planner == "model" else env
            )
            body = json.dumps(
                {"text": "read_file path=notes.txt" if planner == "commands" else "say something"}
            )
            async with AsyncExitStack() as servers:
                configurations = []
                for name, store, count in (
                    ("SQLite, 1 process", str(folder / f"{planner}.db"), 1),
                    ("Redis, 1 process", f"redis://127.0.0.1:{redis_port}/1", 1),
                    ("Redis, 4 processes", f"redis://127.0.0.1:{redis_port}/2", 4),
                ):
                    ports = free_ports(count)
                    pids = await asyncio.gather(*(
                        servers.enter_async_context(process(
                            COMMAND, "serve", "--port", str(port), "--store", store, "--root", str(folder),
                            *extra, ready=b"venice-agent serve: http://", env=model_env,
                        ))
                        for port in ports
                    ))  # fmt: skip
                    await wrk(ports, 1, args.connections, f"warm-{planner}-{ports[0]}", body)
                    configurations.append((name, ports, pids, Row(planner, name)))
                # Rounds take turns, so the other work on a shared machine falls on every row alike.
                for turn in range(args.rounds):
                    for name, ports, pids, row in configurations:
                        run = f"{planner}-{turn}-{len(row.replies)}-{ports[0]}"
                        await row.measure(pids, [redis, fake], ports, args, run, body)
                        print(f"{planner:8} {name:20} {row.line()}", file=sys.stderr, flush=True)
                rows += [row for *_, row in configurations]
                if planner == "commands":
                    ports = configurations[-1][1]
                    ours = [pid for *_, pids, _ in configurations for pid in pids] + [redis, fake]
                    before = (machine_busy(), cpu_seconds(ours), children_cpu(), time.perf_counter())
                    opened = await open_loop(ports, args.rate, args.open_seconds, args.senders, body)
                    after = (machine_busy(), cpu_seconds(ours), children_cpu(), time.perf_counter())
                    busy, serving, senders, seconds = (b - a for a, b in zip(before, after, strict=True))
                    open_row = (p(opened, 50), p(opened, 99), len(opened), senders / len(opened) * 1000,
                                (busy - serving - senders) / seconds)  # fmt: skip
    load_after = os.getloadavg()
    shutil.rmtree(folder, ignore_errors=True)
    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; wrk, {args.connections} connections, "
          f"{args.rounds} rounds of {args.seconds:g} s per row, taking turns\n")  # fmt: skip
    print(f"wrk against a route that does nothing, on the same HTTP stack: {floor_row[0]:,.0f} replies/s "
          f"({floor_row[1]:.3f} ms of server CPU a reply)\n")  # fmt: skip
    print("| planner | serve | replies/s | × SQLite | p50 ms | p99 ms | p99 × SQLite |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        base = next(other for other in rows if other.planner == row.planner)
        print(f"| {row.planner} | {row.name} | {row.rate:,.0f} | {row.rate / base.rate:.2f} | {row.p(row.p50s):.1f} "
              f"| {row.p(row.p99s):.1f} | {row.p(row.p99s) / base.p(base.p99s):.2f} |")  # fmt: skip
    print("\nCPU per reply (ms) of each part, and the cores busy (CPU seconds a second):\n")
    print("| planner | serve | serve | redis-server | fake model | wrk | rest of the machine | serve cores "
          "| machine cores |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        parts = row.per_reply()
        print(f"| {row.planner} | {row.name} | " + " | ".join(f"{part:.3f}" for part in parts)
              + f" | {parts[0] * row.rate / 1000:.2f} | {sum(parts) * row.rate / 1000:.2f} |")  # fmt: skip
    p50, p99, sent, sender_cpu, rest = open_row
    print(f"\nOpen loop, commands, Redis, 4 processes: {args.rate:.0f} requests/s for {args.open_seconds:g} s "
          f"({sent} replies, {args.senders} senders, {sender_cpu:.2f} ms CPU a request): p50 {p50:.1f} ms, "
          f"p99 {p99:.1f} ms (target < 50 ms); others' work kept {rest:.2f} cores busy meanwhile")  # fmt: skip
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3, help="closed loop, one round of a configuration")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--open-seconds", type=float, default=4.0)
    parser.add_argument("--senders", type=int, default=2)
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments)))
