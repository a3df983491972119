"""Starting several MCP servers: McpToolbox.open (concurrent) against one server at a time.

Each server is our paginating test server over stdio (a real child process, real JSON-RPC).
Both ways run alternately in the same process; medians are compared. The ratio is what the
concurrency buys a user with several servers in their config. These children spend their
start-up importing Python (CPU), so with 2 cores expect about 0.6 for 4 servers; servers
that wait on the network or on `npx` gain more.

    uv run python benchmarks/bench_mcp_start.py [--servers 4] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox

PAGED = Path(__file__).resolve().parents[1] / "tests" / "servers" / "paged.py"


def servers(count: int) -> list[ServerConfig]:
    return [ServerConfig(f"s{i}", command=sys.executable, args=(str(PAGED),)) for i in range(count)]


async def together(count: int) -> float:
    started = time.perf_counter()
    async with McpToolbox.open(servers(count)) as box:
        assert not box.failures, box.failures
        elapsed = time.perf_counter() - started
    return elapsed


async def one_by_one(count: int) -> float:
    total = 0.0
    for config in servers(count):
        started = time.perf_counter()
        async with McpToolbox.open([config]) as box:
            assert not box.failures, box.failures
            total += time.perf_counter() - started
    return total


async def main(count: int, runs: int) -> None:
    concurrent, sequential = [], []
    for _ in range(runs):
        concurrent.append(await together(count))
        sequential.append(await one_by_one(count))
    c, s = statistics.median(concurrent), statistics.median(sequential)
    print(f"{count} stdio servers, {runs} runs (medians): together {c:.2f} s, one by one {s:.2f} s")
    print(f"ratio together / one by one: {c / s:.2f} (1/{count} = {1 / count:.2f} is the ideal)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.servers, options.runs))
