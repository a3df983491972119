"""One question end to end, as a process: `venice-agent "question"` against a hand-written
script on the raw openai and mcp SDKs.

Both talk to the same fake Venice server (0 ms latency, its own process) and start the same
stdio MCP server (mcp-server-time); the question takes 3 tool rounds and an answer. Wall time
is start to exit; peak memory is the main process's own high-water mark (VmHWM, read at exit
by a small launcher both go through, so the MCP server child is not counted on either side).
Runs alternate so drift hits both alike.

    uv run python benchmarks/bench_e2e.py [--runs 5] [--warm]

`--warm` lets Python cache bytecode (in a temporary folder) as an installed package would;
by default the environment decides (PYTHONDONTWRITEBYTECODE=1 here: every run compiles).
Target: the agent's median ≤ 1.0/1.5 of the script's, peak memory no higher.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 1.0 / 1.5
PYTHON = sys.executable
COMMAND = str(Path(PYTHON).parent / "venice-agent")
TIME_SERVER = [PYTHON, "-m", "mcp_server_time", "--local-timezone", "UTC"]
ROUNDS = [
    {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
    {"tool_calls": [{"name": "convert_time", "arguments": {
        "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}}]},
    {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "Europe/Prague"}}]},
]  # fmt: skip
SCRIPT = {"replies": [*ROUNDS, {"text": "Noon in UTC is 21:00 in Tokyo."}], "loop": True}
QUESTION = "What time is it in Tokyo when it is noon in UTC?"

# The baseline: what people write by hand from the SDKs' examples.
HAND_WRITTEN = """
import asyncio, json, sys
from openai import AsyncOpenAI
from mcp import Client, StdioServerParameters

async def main(base_url, question, server):
    client = AsyncOpenAI(api_key="test-key", base_url=base_url, max_retries=0)
    params = StdioServerParameters(command=server[0], args=server[1:])
    async with Client(params, mode="legacy") as mcp:
        listed = await mcp.list_tools()
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                  "parameters": t.input_schema}} for t in listed.tools]
        model = (await client.models.list()).data[0].id
        messages = [{"role": "user", "content": question}]
        for _ in range(12):
            stream = await client.chat.completions.create(
                model=model, messages=messages, tools=tools, stream=True)
            text, calls = "", {}
            async for chunk in stream:
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                if delta.content:
                    text += delta.content
                    print(delta.content, end="", flush=True)
                for part in delta.tool_calls or []:
                    call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] = part.id or call["id"]
                    if part.function:
                        call["name"] += part.function.name or ""
                        call["arguments"] += part.function.arguments or ""
            if not calls:
                print()
                break
            turn = {"role": "assistant", "tool_calls": [{"id": c["id"], "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls.values()]}
            if text:
                turn["content"] = text
            messages.append(turn)
            for c in calls.values():
                print(f"-> {c['name']}({c['arguments']})")
                result = await mcp.call_tool(c["name"], json.loads(c["arguments"] or "{}"))
                content = "\\n".join(b.text for b in result.content if b.type == "text")
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": content})
    await client.close()

asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
"""

# Runs a script or a console entry point and writes its own peak RSS (kB) to a file at exit.
LAUNCHER = """
import atexit, runpy, sys
out = sys.argv.pop(1)
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open(out, "w").write(line.split()[1])
atexit.register(peak)
target = sys.argv.pop(1)
sys.argv[0] = target
if target.endswith(".py"):
    runpy.run_path(target, run_name="__main__")
else:
    from venice_terminal_agent.cli.app import main
    main()
"""


def run(command: list[str], env: dict[str, str], folder: Path) -> tuple[float, float]:
    peak_file = folder / "peak"
    peak_file.unlink(missing_ok=True)
    started = time.perf_counter()
    done = subprocess.run(
        [PYTHON, str(folder / "launcher.py"), str(peak_file), *command],
        capture_output=True, text=True, env=env, cwd=folder, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or "21:00" not in done.stdout:
        sys.exit(f"run failed ({done.returncode}): {' '.join(command[:2])}\n{done.stdout}\n{done.stderr}")
    return elapsed, int(peak_file.read_text()) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warm", action="store_true", help="let Python cache bytecode between runs")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "launcher.py").write_text(LAUNCHER)
        (folder / "hand_written.py").write_text(HAND_WRITTEN)
        config = {
            "mcpServers": {"time": {"command": TIME_SERVER[0], "args": TIME_SERVER[1:], "trusted": True}}
        }
        (folder / "mcp.json").write_text(json.dumps(config))
        fake = subprocess.Popen(
            [PYTHON, "-m", "venice_terminal_agent.testing.fake_venice", json.dumps(SCRIPT)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            base_url = fake.stdout.readline().strip() if fake.stdout else ""
            env = {k: v for k, v in os.environ.items() if not k.startswith(("VENICE_", "APIFY_"))}
            env.update({"VENICE_API_KEY": "test-key", "VENICE_BASE_URL": base_url, "NO_COLOR": "1"})
            env["XDG_CONFIG_HOME"] = str(folder / "config")
            if options.warm:
                env.pop("PYTHONDONTWRITEBYTECODE", None)
                env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
            agent = ["venice-agent", "--mcp-config", str(folder / "mcp.json"), "--yes", QUESTION]
            script = [str(folder / "hand_written.py"), base_url + "", QUESTION, json.dumps(TIME_SERVER)]
            if options.warm:  # fill the bytecode cache once, untimed
                run(agent, env, folder), run(script, env, folder)
            ours, theirs = [], []
            for _ in range(options.runs):
                theirs.append(run(script, env, folder))
                ours.append(run(agent, env, folder))
        finally:
            fake.terminate()
            fake.wait(timeout=10)

    def median(samples: list[tuple[float, float]], i: int) -> float:
        return statistics.median(sample[i] for sample in samples)

    ratio = median(ours, 0) / median(theirs, 0)
    flag = os.environ.get("PYTHONDONTWRITEBYTECODE", "")
    mode = "warm bytecode cache" if options.warm else f"PYTHONDONTWRITEBYTECODE={flag}"
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"one question end to end, 3 tool rounds, {options.runs} runs each, {mode}, load average {load}")
    print(f"  hand-written openai + mcp  {median(theirs, 0):6.2f} s  peak {median(theirs, 1):6.1f} MiB")
    print(f'  venice-agent "question"    {median(ours, 0):6.2f} s  peak {median(ours, 1):6.1f} MiB')
    print(
        f"  time ratio {ratio:.2f} (target ≤ {TARGET:.2f}); memory ratio {median(ours, 1) / median(theirs, 1):.2f} (target ≤ 1.00)"
    )
    return 0 if ratio <= TARGET and median(ours, 1) <= median(theirs, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
