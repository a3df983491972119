"""What servers say besides results: their tool list changing mid-question (raw JSON-RPC server),
their log messages and instructions (server-everything), progress on the spinner line."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from rich.console import Console

from servers.node import EVERYTHING_ENV, MODULES, bin_path, node22
from venice_terminal_agent import Call, Exit
from venice_terminal_agent.agent import SYSTEM_PROMPT, Agent, AgentOptions
from venice_terminal_agent.core.events import ToolProgress, ToolStarted
from venice_terminal_agent.core.toolbox import CombinedToolbox
from venice_terminal_agent.fronts.terminal.render import Renderer
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.session import SessionHooks
from venice_terminal_agent.mcp.toolbox import McpToolbox
from venice_terminal_agent.model import VeniceClient
from venice_terminal_agent.testing import FakeVenice

RAW = ServerConfig(
    "raw", command=sys.executable, args=(str(Path(__file__).parent / "servers" / "raw_mcp.py"),)
)


def calls(name: str) -> dict:
    return {"tool_calls": [{"name": name, "arguments": {}}]}


def tool_names(request: dict) -> set[str]:
    return {tool["function"]["name"] for tool in request["tools"]}


async def ask(script: list, question: str, notices: list[str]):
    async with McpToolbox.open([RAW], hooks=SessionHooks(notice=notices.append)) as box:
        async with FakeVenice(script) as fake, VeniceClient("k", fake.base_url) as client:
            agent = Agent(client, CombinedToolbox(box), AgentOptions(model="m", auto_approve=True))
            receipt = await agent.ask(question)
            return receipt, fake.chat_requests


async def test_a_tool_added_mid_question_is_offered_at_the_next_request_with_one_line():
    notices: list[str] = []
    receipt, requests = await ask([calls("grow"), calls("extra"), {"text": "done"}], "grow", notices)
    assert receipt.stopped_because is Exit.ANSWERED, receipt.refusal
    assert "extra" not in tool_names(requests[0]) and "extra" in tool_names(requests[1])
    assert [step.result for step in receipt.steps] == ["grow done", "extra ran"]
    assert notices == ["raw: 1 tool added"]


async def test_a_tool_removed_mid_question_becomes_a_clean_refusal():
    notices: list[str] = []
    receipt, requests = await ask([calls("shrink"), calls("echo"), {"text": "ok"}], "shrink", notices)
    assert receipt.stopped_because is Exit.ANSWERED
    assert "echo" not in tool_names(requests[1])
    told = requests[2]["messages"][-1]["content"]
    assert "there is no tool named 'echo'" in told
    assert notices == ["raw: 1 tool removed"]


def everything() -> ServerConfig:
    bin_path("mcp-server-everything")
    script = MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    return ServerConfig(
        "everything", command=str(node22()), args=(str(script), "stdio"), env=EVERYTHING_ENV
    )


async def test_server_instructions_join_the_system_prompt_labelled_and_capped():
    async with McpToolbox.open([everything()]) as box:
        section = box.instructions_prompt()
    assert section.startswith("\n\nInstructions from the MCP server 'everything':\n")
    assert 100 < len(section) - len(section.split(":\n", 1)[0]) <= 2 + 2000
    prompt = SYSTEM_PROMPT + section
    assert prompt.startswith(SYSTEM_PROMPT)


async def test_log_messages_are_dropped_quietly_or_shown_with_verbose():
    for verbose in (False, True):
        notices: list[str] = []
        hooks = SessionHooks(notice=notices.append, verbose=verbose)
        async with McpToolbox.open([everything()], hooks=hooks) as box:
            await box.call("toggle-simulated-logging", {})
            # a call answered after the first log message was sent: its notification came first
            await box.call("trigger-long-running-operation", {"duration": 0.3, "steps": 1})
            await box.call("toggle-simulated-logging", {})
        if verbose:
            assert notices and all(line.startswith("everything [") for line in notices)
        else:
            assert notices == []


def spinner_after(*progress: ToolProgress) -> str:
    out = io.StringIO()
    # A terminal without a pty: rich draws the spinner line into `out` as it would on screen.
    renderer = Renderer(Console(file=out, width=120, force_terminal=True, force_interactive=True))
    renderer(ToolStarted(progress[0].call))
    for event in progress:
        renderer(event)
    renderer.close()  # the spinner's last line is drawn as it stops
    return out.getvalue()


def test_progress_shows_on_the_spinner_line():
    call = Call("trigger-long-running-operation", {})
    counted = spinner_after(ToolProgress(call, 1, 5, None), ToolProgress(call, 2, 5, None))
    assert "running trigger-long-running-operation: 2 of 5…" in counted
    task = spinner_after(ToolProgress(call, None, None, "task working: Analyzing content..."))
    assert "running trigger-long-running-operation: task working: Analyzing content...…" in task
    both = spinner_after(ToolProgress(call, 3, None, "downloading"))
    assert "running trigger-long-running-operation: downloading (3)…" in both
