"""How much of each model request repeats the request before it, byte for byte: what a
provider's prompt cache (Venice's: up to 90% off cached input) can reuse.

The real command, a REPL session of 10 questions read from a pipe, with tools: the built-in
tools and the `time` MCP server (mcp-server-time, a real stdio server). Each question calls
`get_current_time`, then answers; the fake model server on 127.0.0.1 records every request (20).

Each request is read as a chat template lays it out: the tools first (in the system header),
then the messages, as compact JSON. For every request after the first: the bytes its start
shares with the previous request, over its size. Printed: that share over the whole session
(bytes-weighted), its lowest value, and how many times the system prompt and the tool list
changed between requests.

    uv run --group test python benchmarks/bench_prompt_prefix.py

Goal: at least 95% of the bytes repeat the previous request's prefix; zero changes to the
system-and-tools prefix.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

QUESTIONS = 10
GOAL = 0.95


def laid_out(body: dict[str, Any]) -> bytes:
    return json.dumps(
        [body.get("tools", []), body["messages"]], ensure_ascii=False, separators=(",", ":")
    ).encode()


def shared(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="bench-prefix-"))
    record = folder / "requests.jsonl"
    replies = [
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "Noted."},
    ]
    script = {"replies": replies * QUESTIONS}
    fake = subprocess.Popen(
        [sys.executable, "-m", "venice_terminal_agent.testing.fake_venice", json.dumps(script), "--record", str(record)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert fake.stdout is not None
        base_url = fake.stdout.readline().strip()
        servers = folder / "mcp.json"
        time_server = {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        }
        servers.write_text(json.dumps({"mcpServers": {"time": {**time_server, "trusted": True}}}))
        env = {
            **{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")},
            "VENICE_API_KEY": "bench-key",
            "VENICE_BASE_URL": base_url,
            "VENICE_MODEL": "fake-model",
            "XDG_CONFIG_HOME": str(folder / "config"),
            "XDG_DATA_HOME": str(folder / "data"),
        }
        questions = "".join(
            f"question {n}: what time is it in UTC, and what did I ask before?\n" for n in range(QUESTIONS)
        )
        command = str(Path(sys.executable).parent / "venice-agent")
        done = subprocess.run(
            [command, "--mcp-config", str(servers)], input=questions, capture_output=True, text=True,
            env=env, cwd=folder, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        fake.terminate()
        fake.wait(timeout=10)
    seen = [json.loads(line) for line in record.read_text().splitlines()]
    bodies = [s["body"] for s in seen if s["path"].endswith("/chat/completions")]
    assert len(bodies) == 2 * QUESTIONS, len(bodies)
    prompts = [laid_out(body) for body in bodies]
    pairs = list(itertools.pairwise(prompts))
    common = [shared(before, after) for before, after in pairs]
    total = sum(len(after) for _, after in pairs)
    share = sum(common) / total
    shares = [c / len(after) for c, (_, after) in zip(common, pairs, strict=True)]
    lowest = min(shares)
    at = shares.index(lowest) + 2  # the request number (the first has no previous one)
    heads = [json.dumps([body.get("tools", []), body["messages"][0]]) for body in bodies]
    changes = sum(1 for a, b in itertools.pairwise(heads) if a != b)
    keys = {body.get("prompt_cache_key") for body in bodies}
    print(
        f"{len(bodies)} requests, {len(prompts[0]):,} to {len(prompts[-1]):,} bytes each (tools + messages)"
    )
    print(
        f"bytes repeating the previous request's prefix: {share:.1%} (lowest {lowest:.1%}, request {at}); goal ≥ {GOAL:.0%}"
    )
    print(f"changes to the system prompt and tool list: {changes}; goal 0")
    print(f"prompt_cache_key: {len(keys)} for the session ({', '.join(sorted(map(str, keys)))})")
    return 0 if share >= GOAL and changes == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
