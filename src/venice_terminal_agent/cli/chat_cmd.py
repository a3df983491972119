"""`venice-agent chat --chat NAME`: talk to the chat bot from the terminal.

Each line typed (or piped in) is one message of conversation NAME; the bot's reply ends with
how its run ended and how many calls are left this hour. Budgets, last messages and history
live in the store (`--db`, else VENICE_AGENT_DB, else the user data folder), so they carry
over from one session to the next. With a Venice key the model plans; without one, or with
`--offline`, the bot plans from commands (`help` lists them).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ConfigError, load_settings
from ..receipt import USAGE_ERROR_STATUS
from .text import files_line, preview, safe

ReadLine = Callable[[], Awaitable[str]]  # raises EOFError at the end of the input
QUIT_WORDS = frozenset({"/quit", "/exit", "quit", "exit"})


@dataclass(frozen=True)
class ChatOptions:
    chat: str
    db: Path | None = None
    root: Path | None = None
    offline: bool = False
    calls: int = 5
    mcp_config: Path | None = None
    yes: bool = False
    no_files: bool = False


def chat_main(options: ChatOptions) -> int:
    """The whole command; returns the process exit status."""
    from ..store_schema import StoreError, resolve_db_path

    if not options.chat.strip():
        return _fail("--chat needs a name, e.g. --chat work")
    if options.root is not None and not options.root.is_dir():
        return _fail(f"--root {options.root} is not a folder")
    try:
        settings = load_settings(
            auto_approve_tools=options.yes or None, file_tools=False if options.no_files else None
        )
    except ConfigError as error:
        return _fail(str(error))
    chosen = options.db or settings.venice_agent_db  # --db, else VENICE_AGENT_DB (environment or .env)
    path = resolve_db_path(chosen)
    if chosen is None:
        path.parent.mkdir(parents=True, exist_ok=True)  # the default folder is ours to make
    key = settings.venice_api_key.get_secret_value().strip() if settings.venice_api_key else ""
    use_model = bool(key) and not options.offline
    try:
        return asyncio.run(_session(options, path, settings if use_model else None, settings.file_tools))
    except StoreError as error:
        return _fail(str(error))
    except ConfigError as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        return 0


async def _session(options: ChatOptions, path: Path, settings: Any, files: bool = True) -> int:
    from ..bot import Bot

    interactive = sys.stdin.isatty()
    read_line = await _reader(interactive)
    if settings is None:
        async with Bot(db=path, root=options.root, calls_per_window=options.calls, files=files) as bot:
            if interactive:
                _banner(options, path, "commands (no model: type help)", files)
            await _converse(bot, options.chat, read_line, interactive)
        return 0

    from ..tools.mcp_config import load_servers
    from ..venice.errors import ModelError
    from .approver import TerminalApprover
    from .render import make_console
    from .startup import open_session

    console = make_console(stderr=True)
    approver = TerminalApprover(console)
    servers = load_servers(settings, options.mcp_config)  # ConfigError: said in one line by chat_main
    try:
        async with open_session(
            settings, servers, console=console, approver=approver, root=options.root
        ) as session:
            async with Bot(db=path, agent=session.agent, calls_per_window=options.calls) as bot:
                if interactive:
                    _banner(options, path, f"the model {safe(session.model)}", settings.file_tools)
                await _converse(bot, options.chat, read_line, interactive)
    except ModelError as error:  # the model server failed before the first message
        return _fail(error.message)
    return 0


async def _converse(bot: Any, chat: str, read_line: ReadLine, interactive: bool) -> None:
    from .ask_cmd import cancellable

    show_calls = _show_calls if interactive else None
    while True:
        try:
            text = await read_line()
        except (EOFError, KeyboardInterrupt):
            return
        if not text.strip():
            continue
        if text.strip().lower() in QUIT_WORDS:
            return
        try:
            reply = await cancellable(bot.respond(text, chat, events=show_calls))
        except asyncio.CancelledError:
            print("(cancelled)", flush=True)
            continue
        print(safe(reply.text), flush=True)


def _show_calls(event: Any) -> None:
    from ..events import ToolStarted

    if isinstance(event, ToolStarted):
        print(f"→ {safe(event.call.tool)}({preview(event.call.arguments, 200)})", file=sys.stderr, flush=True)


async def _reader(interactive: bool) -> ReadLine:
    """The prompt with line editing on a terminal; plain lines from a pipe or a file."""
    if interactive:
        from .repl import terminal_reader

        return terminal_reader(save_history=False)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    pipe = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)  # the transport closes its copy
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    except (ValueError, OSError):  # a regular file: reading it never blocks
        pipe.close()
        lines = iter(sys.stdin.readline, "")

        async def from_file() -> str:
            line = next(lines, None)
            if line is None:
                raise EOFError
            return line.rstrip("\n")

        return from_file

    async def from_pipe() -> str:
        line = await reader.readline()
        if not line:
            raise EOFError
        return line.decode("utf-8", errors="replace").rstrip("\r\n")

    return from_pipe


def _banner(options: ChatOptions, path: Path, planner: str, files: bool) -> None:
    print(
        f"chat {safe(options.chat)!r} · planned by {planner} · {options.calls} tool calls an hour\n"
        f"files {files_line(files, options.root)}\n"
        f"store {safe(str(path))} · Ctrl+D or /quit to leave",
        file=sys.stderr,
    )


def _fail(message: str) -> int:
    print(f"venice-agent chat: {message}", file=sys.stderr)
    return USAGE_ERROR_STATUS
