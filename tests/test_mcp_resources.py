"""Resources and prompts of MCP servers: listed, read by the built-in `read_resource` tool
(paged and binary described like tool results), and fetched as questions.

server-everything (npm, over stdio) has seven text documents, text and blob resources made
from templates, and four prompts (one with an embedded resource).
"""

import json

import pytest
from mcp.server import MCPServer

from test_mcp_everything import stdio_config
from venice_terminal_agent import ToolError
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.consent import Consent, Why
from venice_terminal_agent.core.receipt import Call
from venice_terminal_agent.core.toolbox import CombinedToolbox
from venice_terminal_agent.mcp.resources import get_prompt, prompt_names
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox
from venice_terminal_agent.model import VeniceClient
from venice_terminal_agent.testing import MockVenice
from venice_terminal_agent.tools.builtin import builtin_toolbox

DOC = "demo://resource/static/document/structure.md"  # 11,920 characters


async def test_resources_of_server_everything_listed_read_paged_and_blobs_described():
    async with McpToolbox.open([stdio_config()], max_result_chars=4000) as box:
        (spec,) = [spec for spec in box.specs() if spec.name == "read_resource"]
        assert spec.read_only and spec.server == "everything"
        assert spec.parameters["properties"]["server"]["enum"] == ["everything"]

        listed, problems = await box.listed("resources")
        assert problems == [] and len(listed) == 7
        assert {entry.item.uri for entry in listed} >= {DOC}

        first = await box.call("read_resource", {"server": "everything", "uri": DOC})
        assert first.startswith(f"[resource <{DOC}> (text/markdown)]\n# Everything Server")
        assert "call page(id=2)]" in first  # cut like a long tool result, the rest in pages
        assert box.pager.get(3).endswith("this is the last page]")

        blob = await box.call(
            "read_resource", {"server": "everything", "uri": "demo://resource/dynamic/blob/1"}
        )
        assert blob.startswith("[resource <demo://resource/dynamic/blob/1> (text/plain), about ")
        assert blob.endswith(" bytes of binary data, not shown]") and "UmVz" not in blob

        index = await box.call("read_resource", {"server": "everything"})  # no uri: the list
        assert f"<{DOC}> structure.md (text/markdown): Static document file" in index
        with pytest.raises(
            ToolError, match=r"^everything could not read demo://nope: Resource demo://nope not found$"
        ):
            await box.call("read_resource", {"server": "everything", "uri": "demo://nope"})
        with pytest.raises(ToolError, match=r"^server must be one of everything$"):
            await box.call("read_resource", {"server": "time", "uri": DOC})

        prompts, problems = await box.listed("prompts")
        named = prompt_names(prompts)
        assert problems == [] and set(named) == {
            "simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"
        }  # fmt: skip
        session = box.session("everything")
        question = await get_prompt(session, "resource-prompt", {"resourceType": "Blob", "resourceId": "2"})
        assert question.startswith("This prompt includes the Blob resource with id: 2.")
        assert "[embedded resource <demo://resource/dynamic/blob/2> (text/plain), about " in question


async def test_no_read_resource_tool_when_no_server_has_resources():
    server = MCPServer("plain")  # declares resources (every MCPServer does) and has none

    @server.tool()
    def hello() -> str:
        return "hi"

    async with McpToolbox.open([ServerConfig("plain", in_memory=server)]) as box:
        assert [spec.name for spec in box.specs()] == ["hello"]
        assert "read_resource" not in box
        with pytest.raises(ToolError, match="no MCP tool named 'read_resource'"):
            await box.call("read_resource", {"server": "plain", "uri": "x://y"})


def read(uri: str) -> dict:
    return {"tool_calls": [{"name": "read_resource", "arguments": {"server": "everything", "uri": uri}}]}


async def test_the_model_reads_a_resource_without_being_asked_unless_local_data_is_in():
    asked = []

    async def approver(call, spec, why) -> bool:
        asked.append((call.tool, why))
        return False

    script = [read(DOC), {"text": "It is a Node project."}]
    async with (
        McpToolbox.open([stdio_config()]) as box,
        MockVenice(script) as fake,
        VeniceClient("k", fake.base_url, http_client=fake.http_client()) as client,
    ):
        tools = Consent(CombinedToolbox(builtin_toolbox(), box), approver=approver)
        receipt = await Agent(client, tools, AgentOptions(model="fake-model")).ask("How is the server built?")
        assert tools.why(Call("read_resource", {"server": "everything", "uri": DOC})) is None
        tools.local_data = True  # a file read earlier: what the tool sends leaves the machine
        assert tools.why(Call("read_resource", {"server": "everything", "uri": DOC})) is Why.LOCAL_DATA
    assert asked == [] and receipt.answer == "It is a Node project."
    offered = [tool["function"]["name"] for tool in fake.chat_requests[0]["tools"]]
    assert "read_resource" in offered
    (result,) = [m for m in fake.chat_requests[1]["messages"] if m["role"] == "tool"]
    assert "# Everything Server - Project Structure" in json.dumps(result["content"])
