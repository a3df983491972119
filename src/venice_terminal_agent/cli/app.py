"""The `venice-agent` command: Typer app and the routing of its subcommands.

Each command's body lives in its own module, imported only when that command runs, so
`venice-agent --help` and `venice-agent run` never load the model or MCP libraries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..defaults import CALLS_PER_WINDOW, MAX_ROUNDS, PLAN_BUDGET, QUESTION_BUDGET
from ..receipt import USAGE_ERROR_STATUS, Exit, exit_statuses
from .group import DefaultCommandGroup
from .options import ApifyToolsOption, McpConfigOption, NoFilesOption, RootOption, TransportOption

USAGE = f"{USAGE_ERROR_STATUS} a usage or configuration error"
LOOP_EXITS = (Exit.ANSWERED, Exit.REPEATED_CALL, Exit.BUDGET, Exit.TOOL_ERROR)

app = typer.Typer(
    cls=DefaultCommandGroup,
    name="venice-agent",
    help=(
        "A terminal agent on a deterministic loop: every run stops for a named reason "
        "and prints a receipt.\n\n"
        "Asking needs VENICE_API_KEY (https://venice.ai/settings/api); Apify's anonymous tools "
        "work without a token.\n\n"
        "\b\n"
        'venice-agent "Which Actor scrapes Hacker News?"  # ask once\n'
        "venice-agent                                     # chat (Ctrl+D leaves)\n"
        'venice-agent --json "question" | jq .answer      # the receipt alone\n'
        'venice-agent --mcp-config mcp.json --yes "..."   # your servers, no asking\n'
        "venice-agent run examples/tour.json              # a plan, offline"
    ),
    epilog=(
        "Settings: a flag wins over the environment, which wins over .env, which wins over the "
        f"default (README, Configuration). Exit status: {exit_statuses()}, {USAGE}."
    ),
    subcommand_metavar="[QUESTION] | COMMAND [ARGS]...",
    no_args_is_help=False,
    add_completion=False,  # its options are ours (OWN_OPTIONS), its completion machinery Typer's
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command()
def run(
    plan: Annotated[str, typer.Argument(help="A JSON plan file, or - to read it from stdin.")],
    budget: Annotated[
        int | None,
        typer.Option(
            min=0, help=f"Most tool calls the run may make [default: the plan's, else {PLAN_BUDGET}]."
        ),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the receipt alone, as JSON, on stdout.")
    ] = False,
    root: RootOption = None,
    mcp_config: Annotated[
        Path | None,
        typer.Option(
            help="Also call the tools of these MCP servers (mcpServers JSON) [default: none, offline]."
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Run MCP tools that need consent without asking.")
    ] = False,
) -> None:
    # The help text is `run.__doc__`, below: its exit statuses come from EXIT_STATUS.
    from .run_cmd import run_plan

    raise typer.Exit(
        run_plan(plan, budget=budget, json_output=json_output, root=root, mcp_config=mcp_config, yes=yes)
    )


run.__doc__ = f"""Run a plan of tool calls on the built-in tools, offline; show each step and why it stopped.

    With --mcp-config the plan may also call MCP tools; those not known to be read-only ask
    first (or run with --yes).

    Exit status: {exit_statuses(*LOOP_EXITS)}, {USAGE_ERROR_STATUS} a bad plan.
    """


@app.command(
    hidden=True,  # `venice-agent "question"` reaches it; its options head the main help
    epilog=(
        "Flags win over the environment, which wins over .env, which wins over the defaults. "
        f"Exit status of a question: {exit_statuses()}, {USAGE}."
    ),
)
def ask(
    question: Annotated[
        str | None,
        typer.Argument(
            help="Ask this once and exit; without it, open the conversation (REPL).", show_default=False
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model id [env VENICE_MODEL; default: discovered from the API].")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(help="OpenAI-compatible API root [env VENICE_BASE_URL; default: Venice]."),
    ] = None,
    transport: TransportOption = None,
    tools: ApifyToolsOption = None,
    mcp_config: McpConfigOption = None,
    max_rounds: Annotated[
        int | None,
        typer.Option(
            min=1, max=40, help=f"Most model rounds per question [env MAX_ROUNDS; default: {MAX_ROUNDS}]."
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(min=0, help=f"Most tool calls per question [default: {QUESTION_BUDGET}]."),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option("--yes", "-y", help="Run paid tools without asking [env AUTO_APPROVE_TOOLS]."),
    ] = False,
    save_history: Annotated[
        bool,
        typer.Option("--save-history", help="Keep the REPL's prompt history on disk [env SAVE_HISTORY]."),
    ] = False,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print the receipt alone, as JSON, on stdout (needs a question)."),
    ] = False,
    db: Annotated[
        Path | None,
        typer.Option(
            help="Keep each question and its receipt in this store, for `venice-agent logs` "
            "[env VENICE_AGENT_DB; default: nothing is kept]."
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", help="Show MCP servers' log messages on stderr [env VENICE_AGENT_VERBOSE]."
        ),
    ] = False,
    max_usd: Annotated[
        float | None,
        typer.Option(
            "--max-usd",
            help="Most USD a question may spend; checked before each model request [env MAX_USD].",
        ),
    ] = None,
    session_max_usd: Annotated[
        float | None,
        typer.Option(
            "--session-max-usd",
            help="Most USD the whole conversation may spend [env SESSION_MAX_USD].",
        ),
    ] = None,
    root: RootOption = None,
    no_files: NoFilesOption = False,
) -> None:
    """Ask once (venice-agent "question"), or chat when no question is given."""
    from .ask_cmd import Flags, ask_main

    flags = Flags(
        model=model,
        base_url=base_url,
        transport=transport.value if transport else None,
        tools=tools,
        mcp_config=mcp_config,
        max_rounds=max_rounds,
        budget=budget,
        yes=yes,
        save_history=save_history,
        json_output=json_output,
        db=db,
        verbose=verbose,
        max_usd=max_usd,
        session_max_usd=session_max_usd,
        root=root,
        no_files=no_files,
    )
    raise typer.Exit(ask_main(question, flags))


@app.command()
def doctor(
    json_output: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    mcp_config: McpConfigOption = None,
    model: Annotated[str | None, typer.Option(help="Model id to check [env VENICE_MODEL].")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible API root [env VENICE_BASE_URL].")
    ] = None,
    transport: TransportOption = None,
    tools: ApifyToolsOption = None,
    db: Annotated[Path | None, typer.Option(help="The store to check [env VENICE_AGENT_DB].")] = None,
) -> None:
    """Check the setup: settings files, key, model server, model, each MCP server, Node, store.

    A checklist of ✓ and ✗, with one line of advice under each ✗. Exit status: 0 when every
    check passes, 2 otherwise.
    """
    from .ask_cmd import Flags
    from .doctor_cmd import doctor_main

    flags = Flags(
        model=model,
        base_url=base_url,
        transport=transport.value if transport else None,
        tools=tools,
        mcp_config=mcp_config,
        db=db,
    )
    raise typer.Exit(doctor_main(flags, json_output=json_output))


# --- `venice-agent tools list` / `tools call` (MCP servers; bodies in tools_cmd.py) ---


def _command_group(name: str, help: str) -> typer.Typer:
    """A command with subcommands (`tools`, `store`): alone, it shows its help."""
    group = typer.Typer(
        name=name,
        help=help,
        no_args_is_help=True,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.add_typer(group)
    return group


tools_app = _command_group(
    "tools", "See and call the MCP tools the agent would use (same servers as asking)."
)


@tools_app.command("list")
def tools_list(
    mcp_config: McpConfigOption = None,
    transport: TransportOption = None,
    apify_tools: ApifyToolsOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print servers and tools as JSON.")] = False,
) -> None:
    """List the servers, their tools, and which tools ask for consent before running.

    Exit status: 0 every server started, 2 a server failed or a configuration error.
    """
    from .tools_cmd import McpFlags, list_tools

    flags = McpFlags(mcp_config, transport.value if transport else None, apify_tools)
    raise typer.Exit(list_tools(flags, json_output=json_output))


@tools_app.command("call")
def tools_call(
    name: Annotated[str, typer.Argument(help="The tool's name, as `tools list` shows it.")],
    arguments: Annotated[
        str, typer.Argument(help='Its arguments as a JSON object, e.g. \'{"query": "news"}\'.')
    ] = "{}",
    mcp_config: McpConfigOption = None,
    transport: TransportOption = None,
    apify_tools: ApifyToolsOption = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Run it without asking, even if it may cost money.")
    ] = False,
    page: Annotated[
        int,
        typer.Option("--page", min=1, help="Which page of a long result to print (see the note on stderr)."),
    ] = 1,
    full: Annotated[bool, typer.Option("--full", help="Print the whole result, however long.")] = False,
) -> None:
    """Call one MCP tool directly and print its result.

    Exit status: 0 done, 5 the tool failed, 2 a usage or configuration error or a declined call.
    """
    from .tools_cmd import McpFlags, call_tool

    flags = McpFlags(mcp_config, transport.value if transport else None, apify_tools)
    raise typer.Exit(call_tool(flags, name, arguments, yes=yes, page=page, full=full))


# --- `venice-agent login SERVER` / `logout SERVER` (OAuth sign-in; bodies in login_cmd.py) ---

ServerArgument = Annotated[str, typer.Argument(help="The MCP server's name, as `tools list` shows it.")]


@app.command()
def login(server: ServerArgument, mcp_config: McpConfigOption = None) -> None:
    """Sign in to an MCP server with OAuth ahead of time (a browser opens; the URL is printed).

    The tokens are kept in the user data folder, readable only by you. Exit status: 0 signed
    in (or no sign-in needed), 2 the sign-in failed or a configuration error.
    """
    from .login_cmd import login_main
    from .tools_cmd import McpFlags

    raise typer.Exit(login_main(McpFlags(mcp_config), server))


@app.command()
def logout(server: ServerArgument, mcp_config: McpConfigOption = None) -> None:
    """Sign out of an MCP server: its tokens are revoked and deleted.

    Exit status: 0 signed out (or was not signed in), 2 a configuration error.
    """
    from .login_cmd import logout_main
    from .tools_cmd import McpFlags

    raise typer.Exit(logout_main(McpFlags(mcp_config), server))


# --- `venice-agent chat` and `venice-agent logs` (the chat bot and its store; chat_cmd.py, logs_cmd.py) ---

DbOption = Annotated[
    Path | None,
    typer.Option(
        help="The store (SQLite file) [env VENICE_AGENT_DB; default: venice-agent.db in the user data folder]."
    ),
]


@app.command()
def chat(
    chat: Annotated[
        str, typer.Option("--chat", help="The conversation's name; its budget and history are kept under it.")
    ] = "terminal",
    db: DbOption = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Plan from commands even when VENICE_API_KEY is set.")
    ] = False,
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
) -> None:
    """Talk to the chat bot: each line is a message; a budget of tool calls per hour, kept on disk.

    Without a model (no VENICE_API_KEY, or --offline) the bot plans from commands, one per
    message: read_file path=README.md, list_files path=., page id=3, TOOL {"json": "args"},
    help. A message repeating the previous one is answered again for free. Each reply ends with
    how the run stopped and how many calls are left this hour. Ctrl+D or /quit leaves.
    """
    from .chat_cmd import ChatOptions, chat_main

    options = ChatOptions(chat, db, root, offline, calls, mcp_config, yes, no_files)
    raise typer.Exit(chat_main(options))


@app.command()
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
    """
    from .logs_cmd import logs_main

    raise typer.Exit(logs_main(count, json_output=json_output, db=db))


@app.command()
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
    offline: Annotated[
        bool, typer.Option("--offline", help="Plan from commands even when VENICE_API_KEY is set.")
    ] = False,
    mcp_config: McpConfigOption = None,
    yes: Annotated[
        bool,
        typer.Option("--yes", "-y", help="Offer tools that may cost money (else they are left out)."),
    ] = False,
    run_timeout: Annotated[
        float, typer.Option(min=1, help="Seconds one reply may run before it is cancelled.")
    ] = 300.0,
) -> None:
    """Serve the chat bot over HTTP: the API under /v1 and a chat page at /.

    POST /v1/chats/NAME/messages {"text": "..."} answers in JSON, or as server-sent events
    with 'Accept: text/event-stream'; GET /v1/chats/NAME shows the exchanges and the calls
    left; GET /healthz says it is ready. The same budgets as `chat`: shared by every process
    on the same store.
    """
    from .serve_cmd import ServeOptions, serve_main

    options = ServeOptions(host, port, store, token_file, calls, root, offline, mcp_config, yes, run_timeout)
    raise typer.Exit(serve_main(options))


store_app = _command_group("store", "Work on the bot's store (an SQLite file or a Redis URL).")


@store_app.command("copy")
def store_copy(
    source: Annotated[str, typer.Argument(help="The store to copy from: an SQLite file or redis://….")],
    destination: Annotated[
        str, typer.Argument(help="The store to copy into (made if it is a new SQLite file).")
    ],
) -> None:
    """Copy every chat (budget ledger, last message, exchanges, owner) into another store.

    Moves an SQLite store into Redis (venice-agent store copy bot.db redis://127.0.0.1:6379/0)
    and back. A chat the destination already holds is refused, never merged.
    Exit status: 0 copied, 2 a store cannot be used or already holds a chat.
    """
    from .store_cmd import copy_main

    raise typer.Exit(copy_main(source, destination))


def main() -> None:
    """The `venice-agent` command; the last word on any error no command caught nearer."""
    try:
        app()
    except Exception as error:
        from ..errors import VeniceAgentError
        from .terminal import crash, fail

        if isinstance(error, VeniceAgentError):  # expected and explained: one line, its status
            raise SystemExit(fail(error.message, error.exit_status)) from None
        raise SystemExit(crash(error)) from None
