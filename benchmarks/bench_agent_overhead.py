"""Per-question overhead of the agent against a hand-written loop, on the same fake server.

A question is 3 tool rounds and an answer (4 streamed model requests), with a 0 ms model
and 0 ms tools, so what is measured is everything around them: the loop, its checks and
receipt, consent, events, stream assembly, history and rollback, and cost tracking on: the
model's prices come from /models, every response is costed, and a money cap is checked before
each request (its worst-case estimate included). The baseline is the loop
people write by hand on the raw openai SDK (streaming, tool calls joined by index, tools
called directly). Both talk to one fake server, run as a separate process (as a real server
would be), and alternate question by question so drift hits both alike.

    uv run python benchmarks/bench_agent_overhead.py [--questions 400]

Target: the agent's median question ≤ 1.10× the hand-written loop's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time

from openai import AsyncOpenAI

from venice_terminal_agent.agent import SYSTEM_PROMPT, Agent, AgentOptions
from venice_terminal_agent.core.toolbox import FunctionToolbox
from venice_terminal_agent.model import VeniceClient

TARGET = 1.10
ROUNDS = [{"tool_calls": [{"name": "lookup", "arguments": {"key": f"k{n}"}}]} for n in (1, 2, 3)]
PRICED = {"pricing": {"input": {"usd": 0.5}, "output": {"usd": 2.0}}, "maxCompletionTokens": 4096}
SCRIPT = {"replies": [*ROUNDS, {"text": "The answer is 42."}], "loop": True, "model_spec": PRICED}


def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


TOOLBOX = FunctionToolbox({"lookup": lookup}, read_only={"lookup"})
TOOLS = [spec.openai_function() for spec in TOOLBOX.specs()]  # the same request body on both sides


async def hand_written(client: AsyncOpenAI, question: str) -> str:
    """The baseline: a loop on the raw SDK, as in the SDK's and Venice's examples."""
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": question},
    ]
    for _ in range(12):
        stream = await client.chat.completions.create(
            model="fake-model", messages=messages, tools=TOOLS, tool_choice="auto", stream=True,
            stream_options={"include_usage": True},
            extra_body={"venice_parameters": {"include_venice_system_prompt": False}},
        )  # fmt: skip
        text, calls = "", {}
        async for chunk in stream:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for part in delta.tool_calls or ():
                call = calls.setdefault(part.index, {"id": part.id, "name": "", "arguments": ""})
                call["name"] += part.function.name or ""
                call["arguments"] += part.function.arguments or ""
        if not calls:
            messages.append({"role": "assistant", "content": text})
            return text
        tool_calls = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls.values()
        ]
        messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
        for c in calls.values():
            result = lookup(**json.loads(c["arguments"]))
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": result})
    raise RuntimeError("no answer")


async def start_server() -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "venice_terminal_agent.testing.fake_venice", json.dumps(SCRIPT),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    return process, (await process.stdout.readline()).decode().strip()


async def main(questions: int) -> int:
    process, base_url = await start_server()
    raw = AsyncOpenAI(api_key="k", base_url=base_url, max_retries=0)
    client = VeniceClient("k", base_url)
    facts = await client.discovery.model_facts("fake-model")  # once, as a session does
    agent = Agent(client, TOOLBOX, AgentOptions(model="fake-model", facts=facts, max_usd=100.0))
    agent_times, raw_times = [], []
    try:
        for i in range(questions + 10):  # the first 10 of each warm up connections and caches
            for side in ("raw", "agent") if i % 2 else ("agent", "raw"):  # neither always goes first
                start = time.perf_counter()
                if side == "raw":
                    assert (await hand_written(raw, "what is k?")) == "The answer is 42."
                else:
                    agent.clear()
                    receipt = await agent.ask("what is k?")
                    assert receipt.answer == "The answer is 42." and receipt.calls == 3, receipt.to_dict()
                    assert receipt.cost_usd is not None, receipt.to_dict()
                if i >= 10:
                    (raw_times if side == "raw" else agent_times).append(time.perf_counter() - start)
    finally:
        await raw.close()
        await client.aclose()
        process.terminate()
        await process.wait()
    raw_ms, agent_ms = statistics.median(raw_times) * 1000, statistics.median(agent_times) * 1000
    ratio = agent_ms / raw_ms
    print(f"questions: {questions} (3 tool rounds + answer = 4 model requests each, 0 ms model and tools)")
    print(f"hand-written loop (raw openai SDK): {raw_ms:.2f} ms per question (median)")
    print(f"venice-agent Agent.ask:             {agent_ms:.2f} ms per question (median)")
    print(f"ratio: {ratio:.3f}x (target <= {TARGET:.2f}x) -> {'ok' if ratio <= TARGET else 'MISSED'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=400)
    sys.exit(asyncio.run(main(parser.parse_args().questions)))
