"""@modelcontextprotocol/server-everything (npm), the reference server, over stdio and over
Streamable HTTP on a loopback port. Installed by `.ci/run` into `.tools/node`."""

import json
import os
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from servers.net import free_port, serving
from servers.node import EVERYTHING_ENV, MODULES, bin_path, node22
from venice_terminal_agent import ToolError
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox

LOOPBACK_PRELOAD = Path(__file__).parent / "servers" / "loopback.cjs"
TOOLS = {
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
}


def everything_script() -> str:
    bin_path("mcp-server-everything")
    return str(MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js")


def stdio_config() -> ServerConfig:
    return ServerConfig(
        "everything", command=str(node22()), args=(everything_script(), "stdio"), env=EVERYTHING_ENV
    )


async def check_the_reference_tools(box: McpToolbox) -> None:
    assert {spec.name for spec in box.specs()} == TOOLS | {"read_resource"}  # it has resources
    assert await box.call("get-sum", {"a": 2, "b": 3}) == "The sum of 2 and 3 is 5."
    # This server reports bad arguments as an is_error result carrying a JSON-RPC message.
    with pytest.raises(ToolError) as caught:
        await box.call("get-sum", {"a": "x", "b": 3})
    assert caught.value.message.startswith("Input validation error: Invalid arguments for tool get-sum")
    image = await box.call("get-tiny-image", {})
    assert "[image image/png, about " in image
    links = (await box.call("get-resource-links", {"count": 2})).splitlines()
    assert sum(line.startswith("[resource link ") for line in links) == 2
    structured = json.loads(await box.call("get-structured-content", {"location": "New York"}))
    assert "temperature" in structured


async def test_server_everything_over_stdio(monkeypatch):
    monkeypatch.setenv("VENICE_API_KEY", "sk-venice-secret")
    async with McpToolbox.open([stdio_config()]) as box:
        await check_the_reference_tools(box)
        environment = await box.call("get-env", {})
        assert "sk-venice-secret" not in environment and "VENICE_API_KEY" not in environment


@asynccontextmanager
async def everything_over_http():
    port = free_port()
    command = [str(node22()), "-r", str(LOOPBACK_PRELOAD), everything_script(), "streamableHttp"]
    env = {"PATH": os.environ.get("PATH", ""), "PORT": str(port)}
    async with serving(command, b"listening on port", env=env):
        yield f"http://127.0.0.1:{port}/mcp"


async def test_server_everything_over_streamable_http():
    async with everything_over_http() as url:
        config = ServerConfig("everything", url=url, headers={"Authorization": "Bearer not-a-secret"})
        async with McpToolbox.open([config]) as box:
            assert box.servers[0].transport == "http" and box.servers[0].where == url
            await check_the_reference_tools(box)


async def test_an_unreachable_url_is_a_readable_start_up_error():
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    async with McpToolbox.open([ServerConfig("gone", url=url)], startup_timeout=20) as box:
        (reason,) = box.failures
    assert reason.startswith("gone did not start (")
    assert reason.endswith("check the URL, that the server is running, and its token or headers")


async def test_the_node_check_looks_at_the_node_that_will_run(monkeypatch):
    # `node` on this PATH is the system's (v20 on the test machines, or none): the check must
    # look at the Node 22 binary the config names, not at `node` on PATH.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    config = ServerConfig(
        "everything", command=str(node22()), args=(everything_script(), "stdio"), needs_node=22
    )
    async with McpToolbox.open([config]) as box:
        assert box.failures == []
        assert await box.call("get-sum", {"a": 1, "b": 2}) == "The sum of 1 and 2 is 3."
    from venice_terminal_agent.mcp.apify import node_problem

    env = {"PATH": f"{node22().parent}:/usr/bin:/bin"}
    assert await node_problem("npx", env) is None  # npx runs the node first on the child's PATH
    assert await node_problem(str(node22()), {"PATH": "/nowhere"}) is None


async def test_a_cancelled_task_call_cancels_the_task_on_the_server():
    import asyncio

    import mcp_types as types

    from venice_terminal_agent.core.events import tool_progress

    async with McpToolbox.open([stdio_config()]) as box:
        started = asyncio.Event()
        tool_progress.set(lambda progress, total, message: started.set())
        call = asyncio.create_task(box.call("simulate-research-query", {"topic": "bees"}))
        await started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        session = box._sessions["everything"].client.session
        listed = await session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        assert [task.status for task in listed.tasks] == ["cancelled"]
        assert await box.call("get-sum", {"a": 1, "b": 1}) == "The sum of 1 and 1 is 2."


async def test_one_session_runs_every_tool_of_server_everything_and_stays_usable():
    import base64

    text = base64.b64encode(b"hello " * 1000).decode()
    arguments = {
        "echo": {"message": "hi"},
        "get-annotated-message": {"messageType": "success", "includeImage": True},
        "get-env": {},
        "get-resource-links": {"count": 2},
        "get-resource-reference": {},
        "get-structured-content": {"location": "New York"},
        "get-sum": {"a": 2, "b": 3},
        "get-tiny-image": {},
        "gzip-file-as-resource": {"data": f"data:text/plain;base64,{text}", "outputType": "resource"},
        "toggle-simulated-logging": {},
        "toggle-subscriber-updates": {},
        "trigger-long-running-operation": {"duration": 0.2, "steps": 2},
        "simulate-research-query": {"topic": "bees"},
    }
    assert set(arguments) == TOOLS
    from venice_terminal_agent import Answer, Call, run_loop
    from venice_terminal_agent.core.events import ToolProgress

    events = []
    plan = [*(Call(name, given) for name, given in arguments.items()), Call("get-sum", {"a": 1, "b": 1})]
    async with McpToolbox.open([stdio_config()]) as box:
        receipt = await run_loop([*plan, Answer("done")], box, budget=20, events=events.append)
        assert box.servers[0].state == "ready"
    assert receipt.stopped_because.value == "answered", receipt.refusal
    results = {step.tool: step.result for step in receipt.steps}
    assert all(step.error is None for step in receipt.steps), [s.error for s in receipt.steps]
    assert results["echo"] == "Echo: hi" and results["get-sum"] == "The sum of 1 and 1 is 2."
    assert results["gzip-file-as-resource"] == (
        "[embedded resource <demo://resource/session/README.md.gz> (application/gzip), "
        "about 54 bytes of binary data, not shown]"
    )
    assert max(len(result) for result in results.values()) < 5000  # no base64 anywhere
    assert results["trigger-long-running-operation"].startswith("Long running operation completed")
    assert results["simulate-research-query"].startswith("# Research Report: bees")  # a task
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert [(e.progress, e.total) for e in progress if e.call.tool.startswith("trigger")] == [(1, 2), (2, 2)]
    statuses = [e.message for e in progress if e.call.tool == "simulate-research-query"]
    assert statuses[0] == "task working: Gathering sources..."
