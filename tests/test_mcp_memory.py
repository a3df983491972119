"""McpToolbox against real MCP servers running in this process (`Client(server)`)."""

import json

import pytest
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as ServerToolError
from mcp.types import ToolAnnotations

from servers.paged import build_server
from venice_terminal_agent import Answer, Call, Exit, ToolError, run_loop
from venice_terminal_agent.core.pager import Pager
from venice_terminal_agent.core.toolbox import CombinedToolbox
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.session import ToolListError
from venice_terminal_agent.mcp.toolbox import McpToolbox
from venice_terminal_agent.tools.builtin import builtin_toolbox


def weather_server() -> MCPServer:
    server = MCPServer("weather", version="0.1")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def forecast(city: str) -> dict:
        """Tomorrow's forecast."""
        if city == "Atlantis":
            raise ServerToolError("no forecast under the sea")
        return {"city": city, "temp_c": 21.5}

    @server.tool()
    def search(query: str) -> str:
        """Search the weather archive."""
        return f"found {query}"

    return server


def paged(**options) -> ServerConfig:
    return ServerConfig("paged", in_memory=build_server(**options))


async def test_tools_of_two_servers_form_one_catalogue():
    servers = [ServerConfig("weather", in_memory=weather_server(), trusted=True), paged()]
    async with McpToolbox.open(servers) as box:
        names = [spec.name for spec in box.specs()]
        # 5 echo tools over 2-tool pages: every page was followed.
        assert {f"echo_{i}" for i in range(5)} <= set(names)
        assert "forecast" in box and "search" in box
        specs = {spec.name: spec for spec in box.specs()}
        assert specs["forecast"].read_only and specs["forecast"].server == "weather"
        assert not specs["search"].read_only  # no read-only annotation: asks
        assert not specs["read_note"].read_only  # annotated, but the server is not trusted
        assert specs["forecast"].parameters["properties"]["city"]["type"] == "string"
        assert [(s.name, s.state, s.transport) for s in box.servers] == [
            ("weather", "ready", "memory"),
            ("paged", "ready", "memory"),
        ]


async def test_structured_content_comes_back_as_json_and_errors_as_tool_errors():
    async with McpToolbox.open([ServerConfig("weather", in_memory=weather_server())]) as box:
        assert json.loads(await box.call("forecast", {"city": "Prague"})) == {
            "city": "Prague",
            "temp_c": 21.5,
        }
        with pytest.raises(ToolError, match="no forecast under the sea"):
            await box.call("forecast", {"city": "Atlantis"})
        with pytest.raises(ToolError, match="city"):  # invalid arguments, said by the server
            await box.call("forecast", {"town": "Prague"})
        with pytest.raises(ToolError, match="no MCP tool named 'nope'"):
            await box.call("nope", {})


async def test_every_kind_of_content_is_described_never_dropped():
    async with McpToolbox.open([paged()]) as box:
        text = await box.call("mixed", {})
    lines = text.splitlines()
    assert lines[0] == "here is everything"
    assert lines[1].startswith("[image image/png, about ")
    assert lines[2].startswith("[audio audio/wav")
    assert lines[3] == "[resource link report <file:///tmp/report.csv> (text/csv): the report]"
    assert lines[4:6] == ["[embedded resource <note://1> (text/plain)]", "note one"]
    assert lines[6].startswith(
        "[embedded resource <blob://1> (application/zip), about 6 bytes of binary data"
    )


async def test_json_rpc_errors_and_is_error_results_both_become_tool_errors():
    async with McpToolbox.open([paged()]) as box:
        with pytest.raises(ToolError, match=r"^Invalid arguments for tool refuse: 'x' is required$"):
            await box.call("refuse", {})
        with pytest.raises(ToolError, match=r"^the database is on fire$"):
            await box.call("broken", {})


async def test_a_call_that_never_answers_ends_at_the_call_timeout():
    async with McpToolbox.open([paged()], call_timeout=0.5) as box:
        with pytest.raises(ToolError, match=r"paged did not answer the call to hang within 0.5 s"):
            await box.call("hang", {})
        assert await box.call("echo_1", {"text": "still here"}) == '{"tool": "echo_1", "text": "still here"}'


async def test_long_results_are_cut_into_pages_the_page_tool_reads():
    pager = Pager(1000)
    async with McpToolbox.open([paged()], pager=pager) as box:
        first = await box.call("big", {"lines": 500})  # 3500 characters
        assert first.startswith("000000\n") and len(first) < 1200
        assert "2500 more characters in page ids 2-4: call page(id=2)" in first
        tools = CombinedToolbox(builtin_toolbox(pager=box.pager), box)
        last = await tools.call("page", {"id": 4})
        assert last.startswith("28\n000429\n") and "000499\n\n[page 4 of 4" in last
        # The loop, paging with the same pager, does not cut an already cut result again.
        receipt = await run_loop([Call("big", {"lines": 500}), Answer("ok")], tools, budget=2, pager=pager)
        assert receipt.steps[0].result.count("[page 1 of 4") == 1
        assert len(pager) == 8


async def test_max_result_chars_sizes_the_pages_when_no_pager_is_given():
    async with McpToolbox.open([paged()], max_result_chars=2000) as box:
        text = await box.call("big", {"lines": 500})
        assert "[page 1 of 2" in text and box.pager.page_chars == 2000


async def test_a_repeated_cursor_fails_that_server_and_the_others_go_on():
    servers = [paged(repeat_cursor=True), ServerConfig("weather", in_memory=weather_server())]
    async with McpToolbox.open(servers) as box:
        assert "forecast" in box and "echo_0" not in box  # no partial list kept
        assert box.servers[0].state == "failed"
        assert box.failures == ["paged sent the tool-list cursor '2' twice; its tool list is not used"]


async def test_reload_sees_tools_added_mid_session():
    async with McpToolbox.open([paged()]) as box:
        assert "grown_0" not in box
        assert await box.call("grow", {}) == "added grown_0"
        await box.reload()
        assert "grown_0" in box
        assert box.servers[0].tools == len(box.specs())


async def test_reload_keeps_the_full_list_when_a_server_fails_to_list():
    async with McpToolbox.open([paged()]) as box:
        before = [spec.name for spec in box.specs()]
        session = box._sessions["paged"]
        session.client = _BrokenLister(session.client)
        with pytest.raises(ToolListError, match="paged: cannot list tools: listing broke"):
            await box.reload()
        assert [spec.name for spec in box.specs()] == before


class _BrokenLister:
    """A client whose tool listing breaks on the second page (calls still go through)."""

    def __init__(self, client):
        self._client = client

    async def list_tools(self, cursor=None, cache_mode="use"):
        if cursor:
            raise RuntimeError("listing broke")
        return await self._client.list_tools(cursor=cursor, cache_mode=cache_mode)


async def test_run_loop_calls_mcp_tools_and_recovers_their_errors_as_steps():
    async with McpToolbox.open([ServerConfig("weather", in_memory=weather_server())]) as box:
        plan = [Call("forecast", {"city": "Prague"}), Answer("21.5 °C")]
        receipt = await run_loop(plan, box, budget=3)
        assert receipt.stopped_because == Exit.ANSWERED
        assert json.loads(receipt.steps[0].result) == {"city": "Prague", "temp_c": 21.5}
        receipt = await run_loop([Call("forecast", {"city": "Atlantis"}), Answer("x")], box, budget=3)
        assert receipt.stopped_because == Exit.TOOL_ERROR
        assert receipt.steps[0].error == "Error executing tool forecast: no forecast under the sea"


async def test_pages_read_back_through_the_loop_are_not_cut_again():
    pager = Pager(1000)
    async with McpToolbox.open([paged()], pager=pager) as box:
        tools = CombinedToolbox(builtin_toolbox(pager=pager), box)
        plan = [Call("big", {"lines": 500}), Call("page", {"id": 2}), Answer("ok")]
        receipt = await run_loop(plan, tools, budget=3, pager=pager)
    assert receipt.steps[1].result.startswith("\n000143\n")  # character 1000 on, not a fresh cut
    assert "[page 2 of 4, id 2" in receipt.steps[1].result
    assert len(pager) == 4


async def test_an_mcp_tool_named_like_a_built_in_one_is_not_hidden_by_it():
    server = MCPServer("files")

    @server.tool()
    def page(id: int) -> str:
        """The server's own page tool."""
        return f"server page {id}"

    async with McpToolbox.open([ServerConfig("files", in_memory=server)]) as box:
        tools = CombinedToolbox(builtin_toolbox(pager=box.pager), box)
        names = [spec.name for spec in tools.specs()]
        assert names.count("page") == 1 and "files__page" in names
        assert await tools.call("files__page", {"id": 3}) == '{"result": "server page 3"}'


async def test_a_server_on_either_protocol_answers_the_health_probe_without_a_warning():
    # filterwarnings = error: the SDK's deprecated `Client.send_ping` would fail this test
    for protocol in ("2026-07-28", "2025-11-25"):
        config = ServerConfig("weather", in_memory=weather_server(), protocol=protocol)
        async with McpToolbox.open([config]) as box:
            assert await box.down(["weather"]) == {}
