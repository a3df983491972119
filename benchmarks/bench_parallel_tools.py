"""Wall time of a question whose model asks for three 500 ms tools at once (100 ms model latency).

The ideal is 0.1 s (model) + 0.5 s (the three tools side by side) + 0.1 s (model) = 0.70 s;
a runner that calls tools one after another takes about 1.7 s. The agent is measured on the
fake server (a separate process, playing the two replies with a 100 ms delay each), with
the three calls streamed under one repeated index as Venice may send them, and compared
with the ideal and with a sequential runner measured in the same run.

    uv run python benchmarks/bench_parallel_tools.py [--questions 5]

Target: the agent's median ≤ 1.03× the ideal (0.70 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time

from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.toolbox import FunctionToolbox
from venice_terminal_agent.model import VeniceClient

TARGET = 1.03
MODEL_S, TOOL_S = 0.1, 0.5
IDEAL = MODEL_S + TOOL_S + MODEL_S
THREE = {
    "tool_calls": [{"name": "slow_lookup", "arguments": {"key": k}} for k in ("a", "b", "c")],
    "same_index": True,
    "delay": MODEL_S,
}
SCRIPT = {"replies": [THREE, {"text": "a, b and c", "delay": MODEL_S}], "loop": True}


async def slow_lookup(key: str) -> str:
    """A tool that takes half a second (a web request, say)."""
    await asyncio.sleep(TOOL_S)
    return f"value of {key}"


class Sequential:
    """The same toolbox, but one call at a time: what a sequential runner would do."""

    def __init__(self, box: FunctionToolbox) -> None:
        self.box, self.lock = box, asyncio.Lock()

    def __contains__(self, name: object) -> bool:
        return name in self.box

    def specs(self):
        return self.box.specs()

    async def call(self, name, arguments):
        async with self.lock:
            return await self.box.call(name, arguments)


async def main(questions: int) -> int:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "venice_terminal_agent.testing.fake_venice", json.dumps(SCRIPT),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    base_url = (await process.stdout.readline()).decode().strip()
    client = VeniceClient("k", base_url)
    box = FunctionToolbox({"slow_lookup": slow_lookup}, read_only={"slow_lookup"})
    parallel, sequential = (
        Agent(client, box, AgentOptions(model="fake-model")),
        Agent(client, Sequential(box), AgentOptions(model="fake-model")),
    )
    timings: dict[str, list[float]] = {"parallel": [], "sequential": []}
    try:
        for i in range(questions + 1):  # the first question warms the connection up
            for name, agent in (("parallel", parallel), ("sequential", sequential)):
                agent.clear()
                start = time.perf_counter()
                receipt = await agent.ask("look up a, b and c")
                elapsed = time.perf_counter() - start
                assert receipt.answer == "a, b and c" and receipt.calls == 3, receipt.to_dict()
                if i:
                    timings[name].append(elapsed)
    finally:
        await client.aclose()
        process.terminate()
        await process.wait()
    agent_s, sequential_s = statistics.median(timings["parallel"]), statistics.median(timings["sequential"])
    ratio = agent_s / IDEAL
    print(
        f"questions: {questions} (3 parallel calls of {TOOL_S * 1000:.0f} ms, model latency {MODEL_S * 1000:.0f} ms)"
    )
    print(f"ideal:             {IDEAL:.3f} s")
    print(f"venice-agent:      {agent_s:.3f} s (median)")
    print(f"sequential runner: {sequential_s:.3f} s (median, for reference)")
    print(
        f"ratio to ideal: {ratio:.3f}x (target <= {TARGET:.2f}x) -> {'ok' if ratio <= TARGET else 'MISSED'}"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5)
    sys.exit(asyncio.run(main(parser.parse_args().questions)))
