"""The slow tier's tracing check against a real back end: Arize Phoenix (`tests/phoenix/install`),
the OTLP receiver with a UI that teams use for LLM traces, on loopback. The real command sends a
question's spans to it over OTLP/HTTP, and so does the MCP server the question calls (on the mcp
SDK, continuing the trace from `params._meta`); the spans are read back from Phoenix's REST API.
The fast tier checks the same wiring against a small receiver (servers/otlp_receiver.py).

Phoenix answers an export at once and writes its spans to its database later, in batches (every
0.1 s, a constructor argument of its bulk inserter, with no setting), and nothing it serves says
when they are stored. What it does promise: stopped (SIGTERM), it writes every span it has taken
before it exits. So the test stops it once the command has ended, starts it again on the same
folder, and reads the spans once: no polling, and nothing of ours to time."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest

from cli_support import TESTS, fake_venice, run_cli
from servers.net import free_port

pytestmark = pytest.mark.slow

PHOENIX = Path(
    os.environ.get("VENICE_AGENT_PHOENIX") or TESTS.parent / ".tools" / "phoenix" / "bin" / "phoenix"
)
START_TIMEOUT = 300  # seconds: it took 49 s on 2 cores at load 8


def require_phoenix() -> None:
    """Phoenix is installed; else the test is skipped, or fails in CI (.ci/run installs it)."""
    if not PHOENIX.exists():
        message = f"Arize Phoenix is not installed ({PHOENIX}): run tests/phoenix/install"
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(message)


@asynccontextmanager
async def phoenix(folder: Path) -> AsyncIterator[str]:
    """`phoenix serve` on a loopback port, its data in `folder`; its base URL once it listens."""
    require_phoenix()
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(folder),
        "PHOENIX_WORKING_DIR": str(folder / "phoenix"),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
    }
    process = await asyncio.create_subprocess_exec(
        str(PHOENIX), "serve", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    assert process.stdout is not None
    said = b""
    try:
        async with asyncio.timeout(START_TIMEOUT):
            while b"Uvicorn running" not in (line := await process.stdout.readline()):
                said += line
                assert line, f"phoenix exited before it listened: {said.decode()[-2000:]}"
        drain = asyncio.create_task(process.stdout.read())
        yield f"http://127.0.0.1:{port}"
    finally:
        if process.returncode is None:
            process.terminate()  # it writes the spans it has taken, then exits
        await process.wait()
    said += await drain
    # Its shutdown writes for 5 s at most and says so when spans were left unwritten.
    assert b"still pending" not in said, said.decode()[-2000:]


async def stored_spans(base: str) -> list[dict]:
    """Every span Phoenix has stored, read from its REST API."""
    async with httpx2.AsyncClient(base_url=base) as http:
        answer = await http.get("/v1/projects/default/spans", params={"limit": 1000})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


async def test_a_questions_trace_reaches_phoenix_and_adds_up_to_its_receipt(tmp_path: Path) -> None:
    usage = {"prompt_tokens": 40, "completion_tokens": 6, "prompt_tokens_details": {"cached_tokens": 12}}
    script = {
        "replies": [
            {"tool_calls": [{"name": "where", "arguments": {}}], "usage": usage},
            {
                "text": "Found.",
                "usage": {"prompt_tokens": 70, "completion_tokens": 3, "cost": {"usd": 0.001}},
            },
        ],
        "model_spec": {"pricing": {"input": {"usd": 1.0}, "output": {"usd": 2.0}}},
    }
    async with phoenix(tmp_path) as base:
        traces = f"{base}/v1/traces"
        with fake_venice(script, tmp_path) as fake:
            config = tmp_path / "mcp.json"
            server = {
                "command": sys.executable,
                "args": [str(TESTS / "servers" / "traced_mcp.py"), base],
                "trusted": True,
            }
            config.write_text(json.dumps({"mcpServers": {"traced": server}}))
            done = await asyncio.to_thread(
                run_cli, tmp_path, fake.base_url, "--json", "--mcp-config", str(config), "where?",
                OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=traces,
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        receipt = json.loads(done.stdout)
    # Stopped, Phoenix has written every span it took; started again, it serves them.
    async with phoenix(tmp_path) as base:
        spans = await stored_spans(base)
    [question] = [span for span in spans if span["name"] == "invoke_agent venice-agent"]
    trace_id = question["context"]["trace_id"]
    mine = [span for span in spans if span["context"]["trace_id"] == trace_id]
    chats = [span for span in mine if span["name"] == "chat fake-model"]
    [tool] = [span for span in mine if span["name"] == "execute_tool where"]
    # The time server's own span for the call, sent by its own process, in the same trace.
    [served] = [span for span in mine if span["name"] == "tools/call where"]
    assert served["parent_id"] != tool["context"]["span_id"]  # under the mcp SDK's client span
    assert tool["attributes"]["mcp.method.name"] == "tools/call"
    assert (
        question["status_code"] == "UNSET"
        and question["attributes"]["venice_agent.stop_reason"] == "answered"
    )
    assert (
        sum(span["attributes"]["gen_ai.usage.input_tokens"] for span in chats)
        == receipt["usage"]["prompt_tokens"]
    )
    assert (
        sum(span["attributes"]["gen_ai.usage.output_tokens"] for span in chats)
        == (receipt["usage"]["completion_tokens"])
    )
    spent = 0.0
    for span in sorted(chats, key=lambda span: span["start_time"]):
        spent += span["attributes"]["gen_ai.usage.cost.amount"]
    assert spent == receipt["cost_usd"]
    sources = sorted(span["attributes"]["gen_ai.usage.cost.source"] for span in chats)
    assert sources == ["local", "provider"]
