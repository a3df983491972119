"""`venice-agent chat --chat NAME`: talk to the chat bot from the terminal.

Each line typed (or piped in) is one message of conversation NAME; the bot's reply ends with
how its run ended and how many calls are left this hour. Budgets, last messages and history
live in the store (`--db`, else VENICE_AGENT_DB, else the user data folder), so they carry
over from one session to the next. With a Venice key the model plans; without one, or with
`--offline`, the bot plans from commands (`help` lists them).
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.defaults import CALLS_PER_WINDOW
from ...core.errors import VeniceAgentError
from ..failures import fail, path_problem
from ..settings_load import Flags, settings_from
from ..text import files_line, safe, tool_line
from .console_io import ReadLine, cancellable, quiet_type_ahead

if TYPE_CHECKING:
    from ...config import Settings

CHAT = "venice-agent chat"

QUIT_WORDS = frozenset({"/quit", "/exit", "quit", "exit"})
MCP_COMMANDS = frozenset({"/resources", "/prompts", "/prompt"})  # with a model and MCP servers


@dataclass(frozen=True)
class ChatOptions:
    chat: str
    db: Path | None = None
    root: Path | None = None
    offline: bool = False
    calls: int = CALLS_PER_WINDOW
    mcp_config: Path | None = None
    yes: bool = False
    no_files: bool = False
    no_mcp: bool = False
    model: str | None = None  # as ask's --model and --base-url
    base_url: str | None = None


def chat_main(options: ChatOptions) -> int:
    """The whole command; returns the process exit status."""
    from ...store.schema import resolve_db_path

    if not options.chat.strip():
        return fail("--chat needs a name, e.g. --chat work", command=CHAT)
    if problem := path_problem(options.root):
        return fail(problem, command=CHAT)
    flags = Flags(
        mcp_config=options.mcp_config,
        yes=options.yes,
        db=options.db,
        root=options.root,
        no_files=options.no_files,
        model=options.model,
        base_url=options.base_url,
    )
    try:
        settings = settings_from(flags)
        chosen = settings.venice_agent_db  # --db, else VENICE_AGENT_DB (environment or .env)
        path = resolve_db_path(chosen)
        if chosen is None:
            path.parent.mkdir(parents=True, exist_ok=True)  # the default folder is ours to make
        key = settings.venice_key_value() or ""
        use_model = bool(key) and not options.offline
        with quiet_type_ahead():  # keys typed while it starts are read by the first prompt, once
            return asyncio.run(_session(options, path, settings if use_model else None, settings.file_tools))
    except VeniceAgentError as error:
        return fail(error.message, error.exit_status, command=CHAT)
    except KeyboardInterrupt:
        return 0


async def _session(options: ChatOptions, path: Path, settings: Settings | None, files: bool = True) -> int:
    from ...bot.bot import Bot
    from .console_io import piped_reader, terminal_reader

    interactive = sys.stdin.isatty()
    read_line = terminal_reader(save_history=False) if interactive else piped_reader()
    if settings is None:
        async with Bot(db=path, root=options.root, calls_per_window=options.calls, files=files) as bot:
            from ..gc_pause import started

            started()  # a conversation of any length: the collector back on
            if interactive:
                _banner(options, path, "commands (no model: type help)", files)
            await _converse(bot, options.chat, read_line, interactive)
        return 0

    from ...mcp.servers_file import load_servers
    from ..runtime import NO_MCP, Opening, open_runtime
    from .person import TerminalPerson
    from .render import make_console
    from .startup_spinner import StartupSpinner

    console = make_console(stderr=True)
    # A ConfigError is said in one line by chat_main.
    servers = load_servers(settings, options.mcp_config, no_mcp=options.no_mcp)
    spinner = StartupSpinner(
        console,
        base_url=None if settings.venice_model else settings.venice_base_url,
        servers=[server.name for server in servers],
    ).start()
    try:
        person = TerminalPerson(console)
        async with open_runtime(settings, servers, person, Opening(root=options.root, watch=spinner)) as runtime:
            for failure in runtime.mcp.failures:
                print(f"venice-agent chat: {safe(failure)}", file=sys.stderr)
            agent = runtime.agent(runtime.consented())
            secrets = settings.secrets(servers)  # masked in what the bot's store keeps
            async with Bot(db=path, agent=agent, calls_per_window=options.calls, secrets=secrets) as bot:
                if interactive:
                    planner = f"the model {safe(runtime.model or '')}" + ("" if servers else f", {NO_MCP}")
                    _banner(options, path, planner, settings.file_tools)
                await _converse(bot, options.chat, read_line, interactive, runtime.mcp)
    finally:
        spinner.stop()
    return 0


async def _converse(bot: Any, chat: str, read_line: ReadLine, interactive: bool, mcp: Any = None) -> None:
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
        if mcp is not None and text.split()[0].lower() in MCP_COMMANDS:
            asked = await _mcp_command(text.strip(), mcp)
            if asked is None:
                continue
            text = asked
        try:
            reply = await cancellable(bot.respond(text, chat, events=show_calls))
        except asyncio.CancelledError:
            print("(cancelled)", flush=True)
            continue
        print(safe(reply.text), flush=True)


async def _mcp_command(line: str, mcp: Any) -> str | None:
    """/resources and /prompts print their tables; /prompt gives the message to send (None:
    nothing to send), as in the REPL (repl_mcp.py)."""
    from .render import make_console
    from .repl_mcp import prompt_question, show_prompts, show_resources

    console = make_console()
    name, _, rest = line.partition(" ")
    if name.lower() != "/prompt":
        await (show_resources if name.lower() == "/resources" else show_prompts)(console, mcp)
        return None
    try:
        text = await prompt_question(mcp, rest)
    except VeniceAgentError as error:
        print(safe(error.message), file=sys.stderr, flush=True)
        return None
    print(f"› {safe(text)}", flush=True)
    return text


def _show_calls(event: Any) -> None:
    from ...core.events import ToolStarted

    if isinstance(event, ToolStarted):
        print(tool_line(event.call.tool, event.call.arguments), file=sys.stderr, flush=True)


def _banner(options: ChatOptions, path: Path, planner: str, files: bool) -> None:
    print(
        f"chat {safe(options.chat)!r} · planned by {planner} · {options.calls} tool calls an hour\n"
        f"files {files_line(files, options.root)}\n"
        f"store {safe(str(path))} · Ctrl+D or /quit to leave",
        file=sys.stderr,
    )


