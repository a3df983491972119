"""Start-up and tear-down around the questions: model, MCP sessions, agent, banner.

The model is resolved while the MCP servers start (they are independent and both slow), and
everything opened is closed in `finally`, whatever happened in between.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ..config import Settings
from ..receipt import USAGE_ERROR_STATUS, Exit
from .approver import TerminalApprover
from .ask_cmd import Flags, cancellable, cancelled_receipt
from .login_cmd import terminal_sign_in
from .render import Renderer, banner, make_console, receipt_json
from .text import files_line, safe
from .waiting import StartupSpinner

NO_FUNCTION_CALLING = "none: /models says this model cannot call tools, so questions run without them"
ANONYMOUS_APIFY = (
    "anonymous Apify tools only (set APIFY_TOKEN or run venice-agent login apify for Actors and your account)"
)
SIGNED_IN_APIFY = "signed in with OAuth (venice-agent logout apify signs out)"


@dataclass
class Session:
    agent: Any  # venice_terminal_agent.agent.Agent
    client: Any  # its VeniceClient
    mcp: Any  # the MCP toolbox: `.reload()`, `.servers`
    model: str
    apify: str  # the Apify line of the banner
    balance: dict[str, str] | None = None  # as the model server said at start-up, if it did


def apify_mode(settings: Settings, servers: list[Any], statuses: list[Any] | None = None) -> str:
    """The banner's `apify` line, tied to the servers that really started (`statuses`)."""
    apify = [server for server in servers if getattr(server, "apify", False)]
    if not apify:
        names = ", ".join(safe(server.name) for server in servers)
        return f"not used (MCP servers: {names})"
    if statuses is not None and not uses_apify(servers, statuses):
        return "did not start: no Apify tools this session (the line above says why)"
    if settings.apify_token_value() is None:
        if any(server.oauth is not None for server in apify):
            return SIGNED_IN_APIFY
        return ANONYMOUS_APIFY
    return "authenticated"


def uses_apify(servers: list[Any], statuses: list[Any]) -> bool:
    """An Apify server is among those that started."""
    started = {status.name for status in statuses if status.state == "ready"}
    return any(getattr(server, "apify", False) and server.name in started for server in servers)


@asynccontextmanager
async def open_session(
    settings: Settings,
    servers: list[Any],
    *,
    console: Console,
    approver: TerminalApprover,
    root: Path | None = None,
    spinner: StartupSpinner | None = None,
) -> AsyncIterator[Session]:
    """Resolve the model and open the MCP sessions concurrently; build the agent; close all.

    Both SDKs take most of a second to import. Stdio servers were spawned before that
    (`head_start`) and boot meanwhile in their own processes; a stdio server that could not
    be spawned early needs mcp to start, so mcp is imported first, then openai.
    """
    from ..agent import Agent, system_prompt
    from ..consent import Consent
    from ..tools.base import CombinedToolbox
    from ..tools.builtin import builtin_toolbox
    from ..tools.mcp_session import SessionHooks
    from ..tools.mcp_toolbox import McpToolbox
    from ..tools.pager import Pager

    key = settings.require_venice_key()
    if any(server.transport == "stdio" and server.started is None for server in servers):
        import mcp.client.stdio  # spawning this server needs it: first, then openai (see above)
    pager = Pager(settings.max_tool_result_chars)
    opened: list[Any] = []

    async def discover() -> tuple[Any, str, Any]:
        from ..tools.mcp_config import all_secrets
        from ..venice.client import VeniceClient  # imports openai: by now the servers are booting

        client = VeniceClient(key, base_url=settings.venice_base_url, secrets=all_secrets(settings, servers))
        opened.append(client)
        model = await client.resolve_model(settings.venice_model)
        facts = await client.model_facts(model)  # prices, output limit: once
        if spinner is not None:
            spinner.model_found()
        return client, model, facts

    model_task = asyncio.create_task(discover())
    try:
        hooks = SessionHooks(verbose=settings.venice_agent_verbose)
        async with McpToolbox.open(
            servers,
            max_result_chars=settings.max_tool_result_chars,
            pager=pager,
            hooks=hooks,
            sign_in=terminal_sign_in(),
            on_status=spinner.server if spinner is not None else None,
            call_timeout=settings.mcp_call_timeout,
        ) as mcp:
            client, model, facts = await model_task
            if spinner is not None:
                spinner.stop()  # before anything else is printed
            # Warnings go to stderr always: `venice-agent "q" > answer.txt` holds the answer alone.
            warnings = console if console.stderr else make_console(stderr=True)
            for failure in mcp.failures:
                warnings.print(Text(f"venice-agent: {safe(failure)}", style="yellow"), soft_wrap=True)
            tools = Consent(
                CombinedToolbox(builtin_toolbox(root, pager, files=settings.file_tools), mcp),
                approver=approver,
                auto_approve=settings.auto_approve_tools,
            )
            agent = Agent(
                client,
                tools,
                model=model,
                max_rounds=settings.max_rounds,
                max_tool_result_chars=settings.max_tool_result_chars,
                temperature=settings.venice_temperature,
                pager=pager,
                facts=facts,
                max_usd=settings.max_usd,
                session_max_usd=settings.session_max_usd,
                max_completion_tokens=settings.max_completion_tokens,
                system_prompt=system_prompt(apify=uses_apify(servers, mcp.servers))
                + mcp.instructions_prompt(),
            )
            from ..venice.models import balance

            mode = apify_mode(settings, servers, mcp.servers)
            yield Session(agent, client, mcp, model, mode, balance(client.headers))
    finally:
        if not model_task.done():
            model_task.cancel()
        await asyncio.gather(model_task, return_exceptions=True)
        for client in opened:
            await client.aclose()


async def run_session(
    settings: Settings,
    flags: Flags,
    question: str | None,
    servers: list[Any],
    spinner: StartupSpinner | None = None,
) -> int:
    """The whole program once settings are loaded; returns the exit status."""
    # A question asked once keeps stdout for its answer and receipt line (`> answer.txt`), or
    # for the receipt alone under --json; the banner, tool lines and warnings go to stderr.
    console = make_console(stderr=question is not None)
    approver = TerminalApprover(console)
    root = flags.root
    async with open_session(
        settings, servers, console=console, approver=approver, root=root, spinner=spinner
    ) as session:
        if settings.venice_agent_db:  # opt-in only: without --db or VENICE_AGENT_DB nothing is kept
            from .logs_cmd import RecordingAgent

            session.agent = RecordingAgent(session.agent, settings.venice_agent_db, console)
        specs = session.agent.tools.specs() if session.agent.calls_functions else []
        banner(
            console,
            model=session.model,
            apify=session.apify,
            tools=specs,
            repl=question is None,
            balance=session.balance,
            files=files_line(settings.file_tools, root),
            no_tools=None if session.agent.calls_functions else NO_FUNCTION_CALLING,
        )
        if question is not None:
            return await one_shot(session, question, console, flags)
        from .repl import Repl, reads_a_pipe, terminal_reader

        piped = reads_a_pipe()
        reader = terminal_reader(save_history=settings.save_history)
        repl = Repl(
            session.agent, console, reader, reload=session.mcp.reload, budget=flags.budget, echo=piped
        )
        await repl.run()
        # Read from a pipe, the session ends with its last question's status, as a script would.
        return question_status(session, repl.last) if piped and repl.last is not None else 0


async def one_shot(session: Session, question: str, console: Console, flags: Flags) -> int:
    renderer = Renderer(console, console if flags.json_output else make_console())
    try:
        receipt = await cancellable(session.agent.ask(question, events=renderer, budget=flags.budget))
    except asyncio.CancelledError:
        receipt = cancelled_receipt()
        renderer.finish(receipt)
    renderer.close()
    if flags.json_output:
        sys.stdout.write(receipt_json(receipt) + "\n")
        sys.stdout.flush()
    return question_status(session, receipt)


def question_status(session: Session, receipt: Any) -> int:
    """The exit status of a question; a key refused on the first request is a setup error."""
    if receipt.stopped_because is Exit.MODEL_ERROR and session.client.key_rejected:
        return USAGE_ERROR_STATUS
    return receipt.exit_status
