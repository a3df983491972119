"""The chat bot's commands: `chat`, `logs`, `serve` and `store copy`, added to the
`venice-agent` app by `add_bot_commands`. As in app.py, each body lives in its own module
(fronts/terminal/chat.py, logs_cmd.py, fronts/serve/serve_main.py, store_cmd.py), imported only
when its command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.defaults import CALLS_PER_WINDOW
from .common_options import (
    BaseUrlOption,
    McpConfigOption,
    ModelOption,
    NoFilesOption,
    NoMcpOption,
    OfflineOption,
    RootOption,
)
from .group import command_group


def add_bot_commands(app: typer.Typer) -> None:
    for command in (chat, logs, serve):
        app.command()(command)
    store = command_group(app, "store", "Work on the bot's store (an SQLite file or a Redis URL).")
    store.command("copy")(store_copy)


DbOption = Annotated[
    Path | None,
    typer.Option(
        help="The store (SQLite file) [env VENICE_AGENT_DB; default: venice-agent.db in the user data folder]."
    ),
]


def chat(
    chat: Annotated[
        str, typer.Option("--chat", help="The conversation's name; its budget and history are kept under it.")
    ] = "terminal",
    db: DbOption = None,
    offline: OfflineOption = False,
    calls: Annotated[
        int, typer.Option(min=0, help="Tool calls per conversation in any rolling hour.")
    ] = CALLS_PER_WINDOW,
    root: RootOption = None,
    mcp_config: Annotated[
        Path | None,
        typer.Option(help="With a model: JSON file of MCP servers (mcpServers format) instead of Apify."),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="With a model: run paid tools without asking.")
    ] = False,
    no_files: NoFilesOption = False,
    no_mcp: NoMcpOption = False,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    """Talk to the chat bot: each line is a message; a budget of tool calls per hour, kept on disk.

    Without a model (no VENICE_API_KEY, or --offline) the bot plans from commands, one per
    message: read_file path=README.md, list_files path=., page id=3, TOOL {"json": "args"},
    help. A message repeating the previous one is answered again for free. Each reply ends with
    how the run stopped and how many calls are left this hour. Ctrl+D or /quit leaves.

    \b
    venice-agent chat --chat work
    printf 'list_files\\nread_file path=README.md\\n' | venice-agent chat --chat work
    venice-agent chat --base-url http://127.0.0.1:8080/v1 --model local   # a local server

    Exit status: 0 when you leave, 2 a usage or configuration error (a store that cannot be
    used included), 7 the model server failed at start-up.
    """
    from ..fronts.terminal.chat import ChatOptions, chat_main

    options = ChatOptions(chat, db, root, offline, calls, mcp_config, yes, no_files, no_mcp, model, base_url)
    raise typer.Exit(chat_main(options))


def logs(
    count: Annotated[
        int, typer.Option("-n", "--count", min=1, help="How many of the latest runs to show.")
    ] = 10,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the runs and their receipts as JSON.")
    ] = False,
    db: DbOption = None,
) -> None:
    """List past runs, newest last: stop reason, calls, duration, question and answer.

    The chat bot records every run; the terminal agent records its questions when --db or
    VENICE_AGENT_DB is set (never otherwise).

    \b
    venice-agent logs -n 5
    venice-agent logs --json --db runs.db | jq '.[-1].receipt'

    Exit status: 0 (also when nothing is recorded yet), 2 the store cannot be read.
    """
    from .logs_cmd import logs_main

    raise typer.Exit(logs_main(count, json_output=json_output, db=db))


def serve(
    host: Annotated[
        str, typer.Option(help="Address to listen on; other than loopback only with --token-file.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free one).")] = 8080,
    store: Annotated[
        str | None,
        typer.Option(
            help="An SQLite file, or redis://HOST:PORT/DB to share budgets between processes "
            "[env VENICE_AGENT_DB; default: venice-agent.db in the user data folder]."
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(help="Lines 'USER TOKEN': every request needs 'Authorization: Bearer TOKEN'."),
    ] = None,
    calls: Annotated[
        int, typer.Option(min=0, help="Tool calls per chat in any rolling hour.")
    ] = CALLS_PER_WINDOW,
    root: RootOption = None,
    offline: OfflineOption = False,
    mcp_config: McpConfigOption = None,
    no_mcp: NoMcpOption = False,
    yes: Annotated[
        bool,
        typer.Option("--yes", "-y", help="Offer tools that may cost money (else they are left out)."),
    ] = False,
    run_timeout: Annotated[
        float, typer.Option(min=1, help="Seconds one reply may run before it is cancelled.")
    ] = 300.0,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="Also answer to this Host name (NAME at any port, or NAME:PORT), e.g. the name "
            "of a proxy in front; repeatable. Other names get 421 (DNS rebinding).",
        ),
    ] = None,
) -> None:
    """Serve the chat bot over HTTP: the API under /v1 and a chat page at /.

    POST /v1/chats/NAME/messages {"text": "..."} answers in JSON, or as server-sent events with
    'Accept: text/event-stream'; GET /v1/chats/NAME shows the exchanges and the calls left;
    GET /healthz is 503, saying why, while the store, an MCP server or the model server is
    down. The same budgets as `chat`, shared by every process on the same store. Without
    --token-file it listens on loopback only, and it answers only to its own Host names.

    \b
    venice-agent serve                                 # http://127.0.0.1:8080, the default store
    venice-agent serve --port 9000 --store bot.db --offline   # commands only, even with a key
    venice-agent serve --yes --mcp-config mcp.json     # your servers, paid tools offered too
    venice-agent serve --host 0.0.0.0 --token-file tokens     # other machines, a token each
    venice-agent serve --store redis://127.0.0.1:6379/0 --port 8081   # processes, one budget
    curl -s localhost:8080/v1/chats/work/messages --json '{"text": "help"}'

    Its limits, the tokens file and Redis: docs/bot.md, "Run the bot as a service".

    Exit status: 0 stopped (Ctrl+C or SIGTERM: running replies get 5 s, then end cancelled),
    2 a usage or configuration error (the address taken included), 7 the model server failed
    at start-up.
    """
    from ..fronts.serve.serve_main import ServeOptions, serve_main

    options = ServeOptions(
        host,
        port,
        store,
        token_file,
        calls,
        root,
        offline,
        mcp_config,
        yes,
        run_timeout,
        tuple(allowed_host or ()),
        no_mcp,
    )
    raise typer.Exit(serve_main(options))


def store_copy(
    source: Annotated[str, typer.Argument(help="The store to copy from: an SQLite file or redis://….")],
    destination: Annotated[
        str, typer.Argument(help="The store to copy into (made if it is a new SQLite file).")
    ],
) -> None:
    """Copy every chat (budget ledger, last message, exchanges, owner) into another store.

    Moves an SQLite store into Redis and back. A chat the destination already holds is
    refused, never merged.

    \b
    venice-agent store copy bot.db redis://127.0.0.1:6379/0
    venice-agent store copy redis://127.0.0.1:6379/0 bot.db

    Exit status: 0 copied, 2 a store cannot be used or already holds a chat.
    """
    from .store_cmd import copy_main

    raise typer.Exit(copy_main(source, destination))
