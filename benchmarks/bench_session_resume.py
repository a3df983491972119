"""What resuming a long session adds to the start of a question, against a fresh question.

A session of 200 rounds and about 1 MB (each round: a question, a tool call, a 4.5 kB tool
result, an answer) is saved in a sessions file. Then, alternately, in the same run, against one
fake model server in its own process:

- fresh: a new `Agent` asks a question;
- resumed: the CLI's path for `-c` (`saving.open_session`: open the file, find this folder's
  latest session, claim it, load it; `saving.attach`: the agent goes on from it) and the agent
  asks a question (its conversation, 801 messages, is sent whole).

A question's start is the time until its first model request is made (the client's
`complete` is called); the whole question (until the answer and the save) is shown too.

    uv run python benchmarks/bench_session_resume.py [--questions 40]

Target: the resumed question's start is at most 50 ms later than the fresh one's (medians);
the ratio of the two is printed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_MS = 50.0
ROUNDS = 200
RESULT = "x" * 4_500  # a tool result of a size a search returns, 200 of them ≈ 1 MB
SCRIPT = {"replies": [{"text": "Done."}], "loop": True}


def conversation() -> list[dict[str, Any]]:
    from venice_terminal_agent.agent import SYSTEM_PROMPT

    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for n in range(ROUNDS):
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"key": n})},
        }
        messages += [
            {"role": "user", "content": f"question {n}: what is key {n}?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{n}", "content": f"{n}: {RESULT}"},
            {"role": "assistant", "content": f"Key {n} is {RESULT[:40]}."},
        ]
    return messages


class Timed:
    """The model client, noting when the first request of a question is made."""

    def __init__(self, client: Any) -> None:
        self.client, self.first = client, None

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        if self.first is None:
            self.first = time.perf_counter()
        return await self.client.complete(*args, **kwargs)


async def main(questions: int) -> int:
    from venice_terminal_agent.agent import Agent, AgentOptions
    from venice_terminal_agent.config import load_settings
    from venice_terminal_agent.core.toolbox import FunctionToolbox
    from venice_terminal_agent.fronts.saved_sessions import attach, open_session, sessions_path
    from venice_terminal_agent.fronts.settings_load import Flags
    from venice_terminal_agent.model import VeniceClient
    from venice_terminal_agent.store.sessions import Save, SessionStore

    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "venice_terminal_agent.testing.fake_venice", json.dumps(SCRIPT),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    base_url = (await process.stdout.readline()).decode().strip()
    settings = load_settings(venice_api_key="k", venice_base_url=base_url, venice_agent_sessions=True)
    tools = FunctionToolbox({"lookup": lambda key: f"value of {key}"}, read_only={"lookup"})
    client = VeniceClient("k", base_url)
    stored = conversation()
    size = len(json.dumps(stored).encode())
    async with SessionStore(sessions_path()) as store:
        await store.save(
            "bench", Save(stored, 0, "question 0", {}, model="fake-model", folder=str(Path.cwd().resolve()))
        )
    fresh_start, fresh_all, resumed_start, resumed_all = [], [], [], []
    try:
        for i in range(questions + 5):  # the first 5 of each warm up connections and caches
            for side in ("fresh", "resumed") if i % 2 else ("resumed", "fresh"):
                timed = Timed(client)
                begin = time.perf_counter()
                agent = Agent(timed, tools, AgentOptions(model="fake-model"))  # type: ignore[arg-type]
                if side == "fresh":
                    receipt = await agent.ask("and key 201?")
                else:
                    opened = await open_session(Flags(continue_=True), settings, [])
                    saving, _ = attach(
                        agent, agent, opened, settings, Flags(continue_=True), "fake-model", print
                    )
                    receipt = await saving.ask("and key 201?")
                    await saving.close()
                    assert len(agent.history) >= len(stored) + 2
                end = time.perf_counter()
                assert receipt.answer == "Done.", receipt.to_dict()
                if i >= 5:
                    assert timed.first is not None
                    (fresh_start if side == "fresh" else resumed_start).append(timed.first - begin)
                    (fresh_all if side == "fresh" else resumed_all).append(end - begin)
    finally:
        await client.aclose()
        process.terminate()
        await process.wait()
    ms = {
        name: statistics.median(times) * 1000
        for name, times in (
            ("fs", fresh_start),
            ("rs", resumed_start),
            ("fa", fresh_all),
            ("ra", resumed_all),
        )
    }
    added = ms["rs"] - ms["fs"]
    print(
        f"session: {ROUNDS} rounds, {len(stored)} messages, {size / 1e6:.2f} MB; {questions} questions each (medians)"
    )
    print(f"start of a question, fresh:    {ms['fs']:.2f} ms")
    print(f"start of a question, resumed:  {ms['rs']:.2f} ms  (ratio {ms['rs'] / ms['fs']:.1f}x)")
    print(
        f"whole question, fresh / resumed: {ms['fa']:.2f} ms / {ms['ra']:.2f} ms (the 1 MB request sent and saved)"
    )
    print(
        f"resuming adds {added:.2f} ms to the start (target <= {TARGET_MS:.0f} ms) -> {'ok' if added <= TARGET_MS else 'MISSED'}"
    )
    return 0 if added <= TARGET_MS else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=40)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:  # a sessions file of its own, never the user's
        os.environ["XDG_DATA_HOME"] = folder
        os.chdir(folder)
        sys.exit(asyncio.run(main(arguments.questions)))
