"""Reading one large MCP result over stdio: this agent's transport against the SDK's `stdio_client`.

The server is tests/servers/raw_mcp.py (a real child process writing one JSON-RPC line); its
`big` tool answers `size` bytes of text. Both transports run alternately in the same process,
each behind the same `mcp.Client` (legacy handshake), timing one `tools/call`; medians are
compared. mcp 2.3's `stdio_client` rebuilds its buffer on every 64 KiB chunk, so its time grows
with the square of the size; ours reads lines with asyncio's buffered reader (linear).

    uv run python benchmarks/bench_mcp_result_size.py [--sizes 1,5,10,20] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from venice_terminal_agent.mcp.stdio import spawn

RAW = Path(__file__).resolve().parents[1] / "tests" / "servers" / "raw_mcp.py"
MB = 1_000_000


def sdk_transport():
    errlog = tempfile.TemporaryFile("w+")
    return stdio_client(StdioServerParameters(command=sys.executable, args=[str(RAW)]), errlog=errlog)


def our_transport():
    return spawn("raw", sys.executable, [str(RAW)], {}, None)


async def one_call(transport, size: int) -> float:
    async with Client(transport, mode="legacy", read_timeout_seconds=300) as client:
        started = time.perf_counter()
        result = await client.call_tool("big", {"size": size})
        elapsed = time.perf_counter() - started
    assert len(result.content[0].text) == size
    return elapsed


async def main(sizes: list[int], runs: int) -> None:
    print(f"one tools/call result over stdio, medians of {runs} runs; load {os.getloadavg()[0]:.2f}")
    print(f"{'size':>6}  {'SDK stdio_client':>16}  {'this agent':>10}  {'ratio ours/SDK':>14}")
    for megabytes in sizes:
        ours, sdk = [], []
        for _ in range(runs):
            ours.append(await one_call(our_transport(), megabytes * MB))
            sdk.append(await one_call(sdk_transport(), megabytes * MB))
        o, s = statistics.median(ours), statistics.median(sdk)
        print(f"{megabytes:>4} MB  {s:>14.3f} s  {o:>8.3f} s  {o / s:>14.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,5,10,20")
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main([int(part) for part in options.sizes.split(",")], options.runs))
