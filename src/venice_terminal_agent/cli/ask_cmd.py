"""`venice-agent "question"` (one answer, then exit) and bare `venice-agent` (the REPL).

Settings come from flags > environment > `.env` > defaults; a flag left at None was not
given. Any settings problem is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..config import ConfigError, Settings, load_settings
from ..errors import VeniceAgentError
from ..receipt import EXIT_STATUS, USAGE_ERROR_STATUS, Exit, Receipt

T = TypeVar("T")


@dataclass(frozen=True)
class Flags:
    """The command line as given; None (or False for switches) means not given."""

    model: str | None = None
    base_url: str | None = None
    transport: str | None = None
    tools: str | None = None
    mcp_config: Path | None = None
    max_rounds: int | None = None
    budget: int | None = None
    yes: bool = False
    save_history: bool = False
    json_output: bool = False
    db: Path | None = None  # keep questions and receipts in this store (`venice-agent logs`)
    verbose: bool = False  # MCP servers' log messages on stderr
    max_usd: float | None = None
    session_max_usd: float | None = None
    root: Path | None = None  # the folder read_file and list_files see
    no_files: bool = False  # leave the file tools out


def settings_from(flags: Flags) -> Settings:
    """Flags over the environment over `.env` over defaults; `ConfigError` for a bad value."""
    return load_settings(
        venice_model=flags.model,
        venice_base_url=flags.base_url,
        apify_mcp_transport=flags.transport,
        apify_mcp_tools=flags.tools,
        max_rounds=flags.max_rounds,
        # `or None`: a switch left off must not override AUTO_APPROVE_TOOLS=1 from the environment.
        auto_approve_tools=flags.yes or None,
        save_history=flags.save_history or None,
        venice_agent_db=str(flags.db) if flags.db is not None else None,
        venice_agent_verbose=flags.verbose or None,
        max_usd=flags.max_usd,
        session_max_usd=flags.session_max_usd,
        file_tools=False if flags.no_files else None,  # off only when asked: FILE_TOOLS=0 counts too
    )


def fail(message: str, status: int = USAGE_ERROR_STATUS) -> int:
    print(f"venice-agent: {message}", file=sys.stderr)
    return status


def ask_main(question: str | None, flags: Flags) -> int:
    """The whole command; returns the process exit status."""
    if question is not None and not question.strip():
        return fail("the question is empty; ask something, or run venice-agent alone to chat")
    if flags.json_output and question is None:
        return fail('--json needs a question: venice-agent --json "question"')
    if flags.root is not None and not flags.root.is_dir():
        return fail(f"--root {flags.root} is not a folder")
    if flags.mcp_config is not None and not flags.mcp_config.is_file():
        return fail(f"--mcp-config {flags.mcp_config}: no such file")
    try:
        settings = settings_from(flags)
        settings.require_venice_key()
        from ..tools.mcp_config import load_servers

        servers = load_servers(settings, flags.mcp_config)
    except ConfigError as error:
        return fail(str(error))

    from .head_start import head_start
    from .render import make_console
    from .waiting import StartupSpinner

    # First of all, before the servers and the SDK imports it waits for: never a blank screen.
    spinner = StartupSpinner(
        make_console(stderr=True),
        base_url=None if settings.venice_model else settings.venice_base_url,
        servers=[server.name for server in servers],
    ).start()
    servers, started = head_start(servers)  # they boot while the SDKs import below
    try:
        return _run(settings, flags, question, servers, spinner)
    finally:
        spinner.stop()
        for server in started:
            server.discard()


def _run(settings: Settings, flags: Flags, question: str | None, servers: list[Any], spinner: Any) -> int:
    from .startup import run_session

    try:
        return asyncio.run(run_session(settings, flags, question, servers, spinner))
    except VeniceAgentError as error:  # e.g. the model server failed before the first question
        return fail(error.message, error.exit_status)
    except KeyboardInterrupt:  # Ctrl+C during start-up: nothing was asked yet
        print("venice-agent: interrupted", file=sys.stderr)
        return EXIT_STATUS[Exit.CANCELLED]


async def cancellable(work: Awaitable[T]) -> T:
    """Run `work` as a task that Ctrl+C cancels (instead of killing the whole program).

    The agent absorbs the cancellation and hands back a `cancelled` receipt with the
    conversation rolled back, so the caller carries on (the REPL returns to its prompt).
    """
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)
    try:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):
        installed = False  # not the main thread, or no signals here: Ctrl+C keeps its default
    try:
        return await task
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
            signal.signal(signal.SIGINT, previous)  # asyncio.run's own handler, back in place


def cancelled_receipt() -> Receipt:
    """For a question cancelled before the agent could even start it."""
    return Receipt(steps=(), stopped_because=Exit.CANCELLED, refusal="cancelled before an answer")
