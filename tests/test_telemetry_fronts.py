"""Every front's runs are traced, and a front that is called from another traced program joins
its trace: `serve` from the request's `traceparent` header, the MCP front from `params._meta`.
The real commands export over OTLP/HTTP to a receiver on loopback (servers/otlp_receiver.py)."""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters

from cli_support import COMMAND, TESTS, clean_env, fake_venice, mcp_config, run_cli
from serve_support import served
from servers.otlp_receiver import otlp_receiver

TRACE_ID, PARENT_ID = secrets.token_hex(16), secrets.token_hex(8)
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
TRACED_SERVER = TESTS / "servers" / "traced_mcp.py"


async def test_serve_continues_the_callers_trace(tmp_path: Path) -> None:
    script = [{"text": "Hello."}, {"text": "Again."}]
    with otlp_receiver() as receiver, fake_venice(script, tmp_path) as fake:
        env = clean_env(tmp_path, fake.base_url, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
        args = ("--store", str(tmp_path / "bot.db"), "--no-mcp")
        async with (
            served(tmp_path, *args, env=env) as server,
            httpx2.AsyncClient(base_url=server.url) as http,
        ):
            traced = await http.post(
                "/v1/chats/m/messages", json={"text": "hi"}, headers={"traceparent": TRACEPARENT}
            )
            plain = await http.post("/v1/chats/n/messages", json={"text": "hi again"})
            assert traced.status_code == plain.status_code == 200
        # Stopped: what was buffered was sent on the way out.
        chats = [r for r in fake.requests() if r["path"].endswith("/chat/completions")]
    first, second = receiver.named("invoke_agent")
    assert (first["trace_id"], first["parent_id"]) == (TRACE_ID, PARENT_ID)
    assert second["trace_id"] != TRACE_ID and second["parent_id"] is None  # no header: a trace of its own
    assert first["service"] == "venice-agent"
    [chat] = [span for span in receiver.named("chat ") if span["trace_id"] == TRACE_ID]
    assert chat["parent_id"] == first["span_id"]
    assert chats[0]["headers"]["traceparent"] == f"00-{TRACE_ID}-{chat['span_id']}-01"
    # The metrics went to the same collector: both questions' requests and tokens.
    assert receiver.total("gen_ai.client.operation.duration", **{"gen_ai.operation.name": "chat"})[0] == 2
    assert receiver.total("gen_ai.client.token.usage", **{"gen_ai.token.type": "input"}) == (
        2,
        2 * 10,
    )  # the fake's 10 a reply
    assert "venice_agent.cost" not in receiver.metrics  # the fake lists no prices: unknown, never $0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_mcp_front_continues_the_calling_agents_trace_from_meta(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "Noon."},
    ]
    with otlp_receiver() as receiver, fake_venice(script, tmp_path) as fake:
        env = clean_env(
            tmp_path, fake.base_url, VENICE_MODEL="fake-model", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url
        )
        config = mcp_config(tmp_path, paid_server=False)
        params = StdioServerParameters(
            command=COMMAND, args=["mcp", "--mcp-config", str(config)], env=env, cwd=str(tmp_path)
        )
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            result = await client.call_tool("ask", {"question": "time?"}, meta={"traceparent": TRACEPARENT})
            assert not result.is_error
        # The front has exited with the client (stdin closed), sending what it had buffered.
    [question] = receiver.named("invoke_agent")
    assert question["trace_id"] == TRACE_ID
    # Under the mcp SDK's own server span for the call, which continued the caller's span.
    [served_call] = [span for span in receiver.named("tools/call ask") if span["trace_id"] == TRACE_ID]
    assert served_call["parent_id"] == PARENT_ID and question["parent_id"] == served_call["span_id"]
    # And on, through the agent's own MCP call, into the time server's trace context.
    [tool] = receiver.named("execute_tool get_current_time")
    assert tool["trace_id"] == TRACE_ID and tool["attributes"]["mcp.method.name"] == "tools/call"


def test_an_mcp_server_that_traces_itself_joins_the_questions_trace(tmp_path: Path) -> None:
    """The trace goes to the server in `params._meta` (the mcp SDK's client puts it there under
    the call's span); a server on the mcp SDK that exports its spans continues it."""
    script = [{"tool_calls": [{"name": "where", "arguments": {}}]}, {"text": "Found."}]
    with otlp_receiver() as receiver, fake_venice(script, tmp_path) as fake:
        config = tmp_path / "mcp.json"
        server = {"command": sys.executable, "args": [str(TRACED_SERVER), receiver.url], "trusted": True}
        config.write_text(json.dumps({"mcpServers": {"traced": server}}))
        done = run_cli(
            tmp_path,
            fake.base_url,
            "--mcp-config",
            str(config),
            "where?",
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
        )
        assert done.returncode == 0, done.stderr
        told = fake.chat_bodies()[1]["messages"][-1]["content"]  # the tool's result, to the model
    [question] = receiver.named("invoke_agent")
    [tool] = receiver.named("execute_tool where")
    [sent] = receiver.named("MCP send tools/call where")
    [answered] = [span for span in receiver.named("tools/call where") if span["service"] == "traced-mcp"]
    assert json.loads(told) == {
        "result": question["trace_id"]
    }  # the server ran the call inside the question's trace
    assert answered["trace_id"] == question["trace_id"] and answered["parent_id"] == sent["span_id"]
    assert sent["parent_id"] == tool["span_id"] and tool["parent_id"] == question["span_id"]
    assert answered["attributes"]["mcp.method.name"] == "tools/call"


async def test_acp_traces_each_prompt_and_continues_the_editors_trace_from_meta(tmp_path: Path) -> None:
    from acp import PROTOCOL_VERSION, text_block
    from acp.stdio import spawn_agent_process

    class Editor:
        async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
            pass

    with otlp_receiver() as receiver, fake_venice([{"text": "One."}, {"text": "Two."}], tmp_path) as fake:
        env = clean_env(
            tmp_path, fake.base_url, VENICE_MODEL="fake-model", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url
        )
        with (tmp_path / "acp.stderr").open("w") as log:
            async with spawn_agent_process(
                Editor(),
                COMMAND,
                "acp",
                "--no-mcp",
                env=env,
                cwd=tmp_path,
                # as in test_acp.py: time to exit on its own (and export its spans) once stdin closes
                transport_kwargs={"stderr": log.fileno(), "shutdown_timeout": 30.0},
            ) as (conn, _process):
                await conn.initialize(protocol_version=PROTOCOL_VERSION)
                session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                traced = await conn.prompt(
                    session_id=session.session_id, prompt=[text_block("one")], traceparent=TRACEPARENT
                )
                plain = await conn.prompt(session_id=session.session_id, prompt=[text_block("two")])
        assert traced.stop_reason == plain.stop_reason == "end_turn"
    first, second = sorted(receiver.named("invoke_agent"), key=lambda span: span["trace_id"] != TRACE_ID)
    assert (first["trace_id"], first["parent_id"]) == (TRACE_ID, PARENT_ID)
    assert second["trace_id"] != TRACE_ID
    assert len(receiver.named("chat fake-model")) == 2
