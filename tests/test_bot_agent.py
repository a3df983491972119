"""The bot with the real LLM agent behind it, over real HTTP against the fake Venice server."""

from __future__ import annotations

from venice_terminal_agent import Bot, Exit
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.toolbox import FunctionToolbox
from venice_terminal_agent.model import RetryPolicy, VeniceClient
from venice_terminal_agent.testing import MockVenice


async def no_wait(_seconds: float) -> None:
    return None


def lookup_calls(*words: str) -> dict:
    return {"tool_calls": [{"name": "lookup", "arguments": {"word": word}} for word in words]}


async def test_the_model_plans_within_what_is_left_and_repeats_never_reach_it() -> None:
    looked_up: list[str] = []

    def lookup(word: str) -> str:
        """Look a word up."""
        looked_up.append(word)
        return f"{word}: found"

    script = [
        lookup_calls("a", "b", "c"),  # three calls at once
        {"text": "Three words found."},
        lookup_calls("d"),
        lookup_calls("e"),
        lookup_calls("f"),  # the third call of this question: only two were left
        {"text": "d and e found; f not looked up."},  # the partial answer, without tools
    ]
    now = [10_000.0]
    async with MockVenice(script) as fake:
        policy = RetryPolicy(sleep=no_wait, jitter=lambda: 0.5)
        async with VeniceClient("k", fake.base_url, retry=policy, http_client=fake.http_client()) as client:
            tools = FunctionToolbox({"lookup": lookup}, read_only={"lookup"})
            agent = Agent(client, tools, AgentOptions(model="fake-model"))
            async with Bot(agent=agent, clock=lambda: now[0]) as bot:
                first = await bot.respond("find three words", "alice")
                again = await bot.respond("find three words", "alice")
                second = await bot.respond("find three more", "alice")
                third = await bot.respond("and more?", "alice")
        requests = len(fake.chat_requests)

    assert first.text == "Three words found.\nstopped: answered · 3 calls · 2 left this hour"
    assert again.repeated and again.receipt is None
    assert second.receipt.stopped_because is Exit.BUDGET and second.receipt.calls == 2
    assert second.status == "stopped: budget · 2 calls · 0 left this hour"
    assert second.receipt.partial
    assert second.text.startswith("d and e found; f not looked up.\n\n(partial answer: stopped before call 3")
    assert "the budget of 2 tool calls is spent" in second.text
    assert "come back in 1 hour" in third.text and third.receipt is None
    assert looked_up == ["a", "b", "c", "d", "e"]
    assert requests == 6  # the repeat and the spent window never asked the model
    assert first.receipt.model == "fake-model"


async def test_the_local_data_rule_holds_for_the_bot_across_messages(tmp_path) -> None:
    from mcp.server import MCPServer
    from mcp.types import ToolAnnotations

    from venice_terminal_agent.core.toolbox import CombinedToolbox
    from venice_terminal_agent.mcp.server_config import ServerConfig
    from venice_terminal_agent.mcp.toolbox import McpToolbox
    from venice_terminal_agent.tools.builtin import builtin_toolbox

    (tmp_path / "notes.txt").write_text("the door code is 4321", encoding="utf-8")
    server = MCPServer("web", version="0.1")
    searched: list[str] = []

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search(query: str) -> str:
        """Search the web."""
        searched.append(query)
        return "results"

    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "Your notes hold a door code."},
        {"tool_calls": [{"name": "search", "arguments": {"query": "door code 4321"}}]},
        {"text": "I may not search with that."},
    ]
    async with (
        MockVenice(script) as fake,
        McpToolbox.open([ServerConfig("web", in_memory=server, trusted=True)]) as box,
    ):
        async with VeniceClient(
            "k", fake.base_url, retry=RetryPolicy(sleep=no_wait), http_client=fake.http_client()
        ) as client:
            tools = CombinedToolbox(builtin_toolbox(tmp_path), box)
            agent = Agent(
                client, tools, AgentOptions(model="fake-model")
            )  # no approver: nobody to ask, as in a bot
            async with Bot(agent=agent) as bot:
                await bot.respond("what is in my notes?", "alice")
                reply = await bot.respond("now search the web for it", "alice")
    assert searched == []  # read-only, but the file's contents would have left the machine
    assert reply.receipt is not None and reply.receipt.steps == ()
