"""Start-up and tear-down around the questions: model, MCP sessions, agent, banner.

The model is resolved while the MCP servers start (they are independent and both slow), and
everything opened is closed in `finally`, whatever happened in between.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.text import Text

from ..config import ConfigError, Settings
from .approver import TerminalApprover
from .ask_cmd import Flags, cancellable, cancelled_receipt
from .render import Renderer, banner, make_console, receipt_json
from .text import safe

ANONYMOUS_APIFY = "anonymous Apify tools only (set APIFY_TOKEN for Actors and your account)"


class StartupError(Exception):
    """The model or a tool server could not be reached at start-up; said in one line."""


@dataclass
class Session:
    agent: Any  # venice_terminal_agent.agent.Agent
    mcp: Any  # the MCP toolbox: `.reload()`, `.servers`
    model: str
    apify: str  # the Apify line of the banner


def apify_mode(settings: Settings, servers: list[Any]) -> str:
    apify = [server for server in servers if getattr(server, "apify", False)]
    if not apify:
        names = ", ".join(safe(server.name) for server in servers)
        return f"not used (MCP servers: {names})"
    if settings.apify_token_value() is None:
        return ANONYMOUS_APIFY
    return "authenticated"


@asynccontextmanager
async def open_session(
    settings: Settings, flags: Flags, *, console: Console, approver: TerminalApprover
) -> AsyncIterator[Session]:
    """Resolve the model and open the MCP sessions concurrently; build the agent; close all."""
    from ..agent import Agent
    from ..tools.base import CombinedToolbox
    from ..tools.builtin import builtin_toolbox
    from ..tools.mcp_config import load_servers
    from ..tools.mcp_session import McpToolbox
    from ..tools.pager import Pager
    from ..venice.client import VeniceClient

    servers = load_servers(settings, flags.mcp_config)  # ConfigError: a bad file, said plainly
    pager = Pager(settings.max_tool_result_chars)
    client = VeniceClient(settings.require_venice_key(), base_url=settings.venice_base_url)
    try:
        async with AsyncExitStack() as stack:
            model_task = asyncio.create_task(client.resolve_model(settings.venice_model))
            try:
                mcp = await stack.enter_async_context(
                    McpToolbox.open(servers, max_result_chars=settings.max_tool_result_chars, pager=pager)
                )
            except BaseException:
                model_task.cancel()
                await asyncio.gather(model_task, return_exceptions=True)
                raise
            model = await model_task
            tools = CombinedToolbox(builtin_toolbox(pager=pager), mcp)
            agent = Agent(
                client,
                tools,
                model=model,
                max_rounds=settings.max_rounds,
                approver=approver,
                auto_approve=settings.auto_approve_tools,
                max_tool_result_chars=settings.max_tool_result_chars,
                temperature=settings.venice_temperature,
            )
            yield Session(agent, mcp, model, apify_mode(settings, servers))
    finally:
        await client.aclose()


async def run_session(settings: Settings, flags: Flags, question: str | None) -> int:
    """The whole program once settings are loaded; returns the exit status."""
    # Under --json, stdout carries the receipt alone: everything for people goes to stderr.
    console = make_console(stderr=flags.json_output)
    approver = TerminalApprover(console, auto_approve=settings.auto_approve_tools)
    async with open_session(settings, flags, console=console, approver=approver) as session:
        banner(console, model=session.model, apify=session.apify, tools=session.agent.tools.specs())
        if question is not None:
            return await one_shot(session, question, console, flags)
        from .repl import Repl, terminal_reader

        reader = terminal_reader(save_history=settings.save_history)
        await Repl(session.agent, console, reader, reload=session.mcp.reload, budget=flags.budget).run()
        return 0


async def one_shot(session: Session, question: str, console: Console, flags: Flags) -> int:
    renderer = Renderer(console)
    try:
        receipt = await cancellable(session.agent.ask(question, events=renderer, budget=flags.budget))
    except asyncio.CancelledError:
        receipt = cancelled_receipt()
        renderer.finish(receipt)
    renderer.close()
    if flags.json_output:
        sys.stdout.write(receipt_json(receipt) + "\n")
        sys.stdout.flush()
    return receipt.exit_status


def say_error(console: Console, message: str) -> None:
    console.print(Text(f"venice-agent: {safe(message)}", style="red"))


__all__ = ["ConfigError", "Session", "StartupError", "open_session", "run_session"]
