"""The `venice-agent` command: Typer app and the routing of its subcommands.

Each command's body lives in its own module, imported only when that command runs, so
`venice-agent --help` and `venice-agent run` never load the model or MCP libraries.

No `from __future__ import annotations` here: Typer reads each command's annotations when it
builds the command, and from strings it compiles and evaluates every one twice (inspect's
signature, then get_type_hints): about 5 ms of the `ask` options that `--help` and every
question build. Evaluated once as this module runs, they come from its cached bytecode.
"""

import gc
from pathlib import Path
from typing import Annotated

import typer

from ..core.defaults import CAPPED_OUTPUT_TOKENS, PLAN_BUDGET, QUESTION_BUDGET
from ..core.errors import CRASHED
from ..core.exits import USAGE_ERROR_STATUS, Exit, exit_statuses
from .batch_app import add_batch_commands
from .bot_app import add_bot_commands
from .common_options import (
    ASKING,
    MONEY_AND_CAPS,
    OUTPUT,
    SESSIONS,
    TOOLS_AND_MCP,
    ApifyToolsOption,
    BaseUrlOption,
    ContinueOption,
    Effort,
    ForkOption,
    MaxRoundsOption,
    McpConfigOption,
    ModelOption,
    NoFilesOption,
    NoMcpOption,
    PrivateOption,
    ResumeOption,
    RootOption,
    SaveOption,
    ToolSearchOption,
    TransportOption,
    WebSearch,
    yes_flag,
)
from .config_cmd import add_config_commands
from .demo_cmd import add_demo_command
from .fronts_app import add_front_commands
from .group import DefaultCommandGroup, add_crash_status, command_group, declare_lazily
from .mcp_front_app import add_mcp_front_command
from .sessions_cmd import add_sessions_commands

USAGE = f"{USAGE_ERROR_STATUS} a usage or configuration error, {CRASHED}"
MANUAL = (
    "The manual is in the repository: README.md, then docs/, a page per task; docs/cli.md has "
    "every command and option (each command's --help too)."
)
LOOP_EXITS = (Exit.ANSWERED, Exit.REPEATED_CALL, Exit.BUDGET, Exit.TOOL_ERROR)

app = typer.Typer(
    cls=DefaultCommandGroup,
    name="venice-agent",
    help=(
        "A terminal agent on a deterministic loop: every run stops for a named reason "
        "and prints a receipt.\n\n"
        "Asking needs VENICE_API_KEY (https://venice.ai/settings/api); Apify's anonymous tools "
        "work without a token. venice-agent demo tries it all without a key.\n\n"
        "\b\n"
        'venice-agent "Which Actor scrapes Hacker News?"  # ask once\n'
        "venice-agent                                     # chat (Ctrl+D leaves)\n"
        'venice-agent --json "question" | jq .answer      # the receipt alone\n'
        'venice-agent --mcp-config mcp.json --yes "..."   # your servers, no asking\n'
        'venice-agent -c "and then?"                      # go on with this folder\'s saved session\n'
        'venice-agent -a photo.png "What is in it?"       # an image (or a PDF, a CSV…) with it\n'
        'venice-agent --schema @answer.json --json "q"    # an answer that matches a JSON schema\n'
        'venice-agent --model e2ee-glm-5-1 "q"           # end-to-end encrypted, or private_failed\n'
        'venice-agent -s @style.md "review this"          # an instruction of yours, this run\n'
        'git diff | venice-agent "review this"            # piped text goes with the question\n'
        'venice-agent --web-search on "news on Venice?"   # sources listed under the answer\n'
        "venice-agent run examples/tour.json              # a plan, offline\n"
        "venice-agent demo                                # a stand-in model: no key, no network"
    ),
    epilog=(
        "Settings: a flag wins over the environment, which wins over .env, which wins over the "
        "user config (venice-agent config), which wins over the "
        f"default (docs/configuration.md). Exit status: {exit_statuses()}, {USAGE}.\n\n"
        f"{MANUAL}"
    ),
    subcommand_metavar="[QUESTION] | COMMAND [ARGS]...",
    no_args_is_help=False,
    add_completion=False,  # its options are ours (OWN_OPTIONS), its completion machinery Typer's
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

add_demo_command(app)  # first in the list of commands: the way to try it without a key


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
        bool, yes_flag("Run MCP tools that need consent without asking.")
    ] = False,
) -> None:
    # The help text is `run.__doc__`, below: its exit statuses come from EXIT_STATUS.
    from ..fronts.terminal.run import run_plan

    raise typer.Exit(
        run_plan(plan, budget=budget, json_output=json_output, root=root, mcp_config=mcp_config, yes=yes)
    )


run.__doc__ = f"""Run a plan of tool calls on the built-in tools, offline; show each step and why it stopped.

    With --mcp-config the plan may also call MCP tools; those not known to be read-only ask
    first (or run with --yes).

    \b
    venice-agent run examples/tour.json           # the README's tour
    venice-agent run examples/budget.json --json  # the receipt alone, as JSON
    echo '[{{"tool": "list_files", "arguments": {{}}}}, {{"answer": "done"}}]' | venice-agent run -

    Exit status: {exit_statuses(*LOOP_EXITS)}, {USAGE_ERROR_STATUS} a bad plan.
    """


@app.command(
    hidden=True,  # `venice-agent "question"` reaches it; its options head the main help
    epilog=(
        "Flags win over the environment, which wins over .env, which wins over the user config "
        "(venice-agent config), which wins over the defaults. "
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
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    transport: TransportOption = None,
    tools: ApifyToolsOption = None,
    mcp_config: McpConfigOption = None,
    no_mcp: NoMcpOption = False,
    max_rounds: MaxRoundsOption = None,
    budget: Annotated[
        int | None,
        typer.Option(
            min=0,
            help=f"Most tool calls per question [default: {QUESTION_BUDGET}].",
            rich_help_panel=MONEY_AND_CAPS,
        ),
    ] = None,
    yes: Annotated[
        bool,
        yes_flag("Run paid tools without asking [env AUTO_APPROVE_TOOLS].", rich_help_panel=TOOLS_AND_MCP),
    ] = False,
    save_history: Annotated[
        bool,
        typer.Option(
            "--save-history",
            help="Keep the REPL's prompt history on disk [env SAVE_HISTORY].",
            rich_help_panel=SESSIONS,
        ),
    ] = False,
    json_output: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the receipt alone, as JSON, on stdout (needs a question).",
            rich_help_panel=OUTPUT,
        ),
    ] = False,
    db: Annotated[
        Path | None,
        typer.Option(
            help="Keep each question and its receipt in this store, for `venice-agent logs` "
            "[env VENICE_AGENT_DB; default: nothing is kept].",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="Show MCP servers' log messages on stderr [env VENICE_AGENT_VERBOSE].",
            rich_help_panel=OUTPUT,
        ),
    ] = False,
    max_usd: Annotated[
        float | None,
        typer.Option(
            "--max-usd",
            help="Most USD a question may spend; checked before each model request, each asking "
            "for no more output than the money left pays (at most "
            f"{CAPPED_OUTPUT_TOKENS:,} tokens when the model publishes no limit, unless "
            "MAX_COMPLETION_TOKENS is set) [env MAX_USD].",
            rich_help_panel=MONEY_AND_CAPS,
        ),
    ] = None,
    session_max_usd: Annotated[
        float | None,
        typer.Option(
            "--session-max-usd",
            help="Most USD the whole conversation may spend [env SESSION_MAX_USD].",
            rich_help_panel=MONEY_AND_CAPS,
        ),
    ] = None,
    context_tokens: Annotated[
        int | None,
        typer.Option(
            "--context-tokens",
            min=1000,
            help="The model's context window in tokens, when the server does not say it "
            "(or to use less of it) [env CONTEXT_TOKENS].",
            rich_help_panel=MONEY_AND_CAPS,
        ),
    ] = None,
    no_compact: Annotated[
        bool,
        typer.Option(
            "--no-compact",
            help="Never summarise older rounds on its own; a question that cannot fit ends "
            "context_full (/compact still works) [env COMPACT=0].",
            rich_help_panel=MONEY_AND_CAPS,
        ),
    ] = False,
    root: RootOption = None,
    no_files: NoFilesOption = False,
    continue_: ContinueOption = False,
    resume: ResumeOption = None,
    fork: ForkOption = None,
    save: SaveOption = False,
    private: PrivateOption = False,
    e2ee: Annotated[
        bool | None,
        typer.Option(
            "--e2ee/--no-e2ee",
            help="Use the model end-to-end encrypted, or fail (private_failed); --no-e2ee: plain "
            "[default: the model's own, /models supportsE2EE]. E2EE turns off tools and attachments.",
            show_default=False,
            rich_help_panel=ASKING,
        ),
    ] = None,
    attach: Annotated[
        list[Path] | None,
        typer.Option(
            "--attach",
            "-a",
            metavar="FILE",
            help="Send this file with the question (repeatable): images to vision models, documents "
            "(PDF, DOCX, XLSX, CSV, text, code) as file parts, 25 MB each. Local data: tools then ask.",
            show_default=False,
            rich_help_panel=ASKING,
        ),
    ] = None,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema",
            metavar="JSON|@FILE",
            help="The answer must match this JSON schema (asked once more on a mismatch, then "
            "schema_mismatch); --json receipts carry it as `parsed`.",
            rich_help_panel=ASKING,
        ),
    ] = None,
    tool_search: ToolSearchOption = None,
    system: Annotated[
        str | None,
        typer.Option(
            "--system",
            "-s",
            metavar="TEXT|@FILE",
            help="Add this instruction (or FILE's text) to the system prompt, for this run.",
            rich_help_panel=ASKING,
        ),
    ] = None,
    web_search: Annotated[
        WebSearch | None,
        typer.Option(
            "--web-search",
            help="Venice's web search: on, off, or auto (the model decides); sources listed under "
            "the answer [default: off].",
            rich_help_panel=ASKING,
        ),
    ] = None,
    reasoning_effort: Annotated[
        Effort | None,
        typer.Option(
            "--reasoning-effort",
            help="How hard a reasoning model thinks; checked against the model's levels (venice-agent models).",
            rich_help_panel=ASKING,
        ),
    ] = None,
    no_thinking: Annotated[
        bool,
        typer.Option(
            "--no-thinking", help="Turn the model's thinking off, where it can be.", rich_help_panel=ASKING
        ),
    ] = False,
    quiet_thinking: Annotated[
        bool,
        typer.Option(
            "--quiet-thinking",
            help="Show one line (thought for 1.2k tokens), not the thinking.",
            rich_help_panel=OUTPUT,
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="No banner: the answer, the receipt line and warnings only.",
            rich_help_panel=OUTPUT,
        ),
    ] = False,
) -> None:
    """Ask once (venice-agent "question"), or chat when no question is given."""
    from ..fronts.terminal.ask import Flags, ask_main

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
        continue_=continue_,
        resume=resume,
        fork=fork,
        save=save,
        private=private,
        no_mcp=no_mcp,
        context_tokens=context_tokens,
        no_compact=no_compact,
        e2ee=e2ee,
        attach=tuple(attach or ()),
        schema=schema,
        tool_search=tool_search.value if tool_search else None,
        system=system,
        web_search=web_search.value if web_search else None,
        reasoning_effort=reasoning_effort.value if reasoning_effort else None,
        no_thinking=no_thinking,
        quiet_thinking=quiet_thinking,
        quiet=quiet,
    )
    raise typer.Exit(ask_main(question, flags))


@app.command()
def doctor(
    json_output: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    mcp_config: McpConfigOption = None,
    no_mcp: NoMcpOption = False,
    model: Annotated[str | None, typer.Option(help="Model id to check [env VENICE_MODEL].")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible API root [env VENICE_BASE_URL].")
    ] = None,
    transport: TransportOption = None,
    tools: ApifyToolsOption = None,
    db: Annotated[Path | None, typer.Option(help="The store to check [env VENICE_AGENT_DB].")] = None,
    probe: Annotated[
        bool,
        typer.Option(
            "--probe",
            help="Also send two tiny model requests: are tool calls and usage streamed, do the tools "
            "reach the model, is the output limit honoured.",
        ),
    ] = False,
) -> None:
    """Check the setup: settings files, key, model server, model, each MCP server, Node, store.

    A checklist of ✓ and ✗, with one line of advice under each ✗.

    \b
    venice-agent doctor
    venice-agent doctor --mcp-config mcp.json --json
    venice-agent doctor --probe --no-mcp   # what a local server does with tools

    Exit status: 0 when every check passes, 2 otherwise.
    """
    from ..fronts.terminal.ask import Flags
    from .doctor_cmd import doctor_main

    flags = Flags(
        model=model,
        base_url=base_url,
        transport=transport.value if transport else None,
        tools=tools,
        mcp_config=mcp_config,
        db=db,
        no_mcp=no_mcp,
    )
    raise typer.Exit(doctor_main(flags, json_output=json_output, probe=probe))


@app.command()
def models(
    tools: Annotated[bool, typer.Option("--tools", help="Only models that call functions (tools).")] = False,
    vision: Annotated[bool, typer.Option("--vision", help="Only models that read images.")] = False,
    reasoning: Annotated[bool, typer.Option("--reasoning", help="Only models that reason (think).")] = False,
    private: Annotated[
        bool, typer.Option("--private", help="Only end-to-end encrypted (E2EE) or TEE models.")
    ] = False,
    search: Annotated[
        str | None, typer.Option("--search", metavar="TEXT", help="Only models whose id or name has TEXT.")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the models as JSON.")] = False,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible API root [env VENICE_BASE_URL].")
    ] = None,
) -> None:
    """List the server's models: context window, USD per million tokens (input, cached input,
    output), what each supports, and deprecations with their dates and replacements.

    Needs no key where the server lists its models without one (Venice does).

    \b
    venice-agent models
    venice-agent models --tools --reasoning --search glm
    venice-agent models --private --json | jq '.[].id'

    Exit status: 0 listed (also when no model matches), 2 a configuration error or a refused
    key, 7 the model server failed.
    """
    from .models_cmd import Filters, models_main

    filters = Filters(tools=tools, vision=vision, reasoning=reasoning, private=private, search=search)
    raise typer.Exit(models_main(base_url, filters, json_output=json_output))


# --- `venice-agent tools list` / `tools call` (MCP servers; bodies in tools_cmd.py) ---


tools_app = command_group(
    app, "tools", "See and call the MCP tools the agent would use (same servers as asking)."
)


@tools_app.command("list")
def tools_list(
    mcp_config: McpConfigOption = None,
    transport: TransportOption = None,
    apify_tools: ApifyToolsOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print servers and tools as JSON.")] = False,
) -> None:
    """List the servers, their tools, and which tools ask for consent before running.

    \b
    venice-agent tools list
    venice-agent tools list --mcp-config mcp.json --json

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
        bool, yes_flag("Run it without asking, even if it may cost money.")
    ] = False,
    page: Annotated[
        int,
        typer.Option("--page", min=1, help="Which page of a long result to print (see the note on stderr)."),
    ] = 1,
    full: Annotated[bool, typer.Option("--full", help="Print the whole result, however long.")] = False,
) -> None:
    """Call one MCP tool directly and print its result.

    \b
    venice-agent tools call search-actors '{"keywords": "web scraper", "limit": 3}'
    venice-agent tools call get_current_time '{"timezone": "UTC"}' --mcp-config mcp.json --yes

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

    The tokens are kept in the user data folder, readable only by you. A token file that
    cannot be read is replaced (said on stderr).

    \b
    venice-agent login apify    # Apify's full tool set without APIFY_TOKEN
    venice-agent login corp --mcp-config mcp.json

    Exit status: 0 signed in (or no sign-in needed), 2 the sign-in failed or a configuration error.
    """
    from .login_cmd import login_main
    from .tools_cmd import McpFlags

    raise typer.Exit(login_main(McpFlags(mcp_config), server))


@app.command()
def logout(server: ServerArgument, mcp_config: McpConfigOption = None) -> None:
    """Sign out of an MCP server: its tokens are revoked and deleted.

    \b
    venice-agent logout apify   # back to Apify's anonymous tools

    Exit status: 0 signed out (or was not signed in), 2 a configuration error.
    """
    from .login_cmd import logout_main
    from .tools_cmd import McpFlags

    raise typer.Exit(logout_main(McpFlags(mcp_config), server))


add_bot_commands(app)  # chat, logs, serve, store copy
add_config_commands(app)  # config set, get, unset, list
add_sessions_commands(app)  # sessions list, show, export, import, delete
add_front_commands(app)  # acp: the agent in an editor
add_batch_commands(app)  # batch FILE, batch status, batch resume: durable, under one cap
add_mcp_front_command(app)  # mcp: the agent as an MCP server
add_crash_status(app)  # every command's "Exit status:" ends with 1, a crash
declare_lazily(app)  # each command built when it runs or shows its help, not all at start-up


def main() -> None:
    """The `venice-agent` command; the last word on any error no command caught nearer."""
    # Start-up builds hundreds of thousands of objects (classes, pydantic schemas) and frees
    # almost none, so the collector's passes over them are wasted: about 5% of a one-shot
    # question's CPU (issue 21). Off until the runtime is open (`open_runtime` turns it back on
    # and freezes what start-up built), or for the whole of a short command that opens none.
    gc.disable()
    try:
        app()
    except Exception as error:
        from ..core.errors import VeniceAgentError
        from ..fronts.failures import crash, fail

        if isinstance(error, VeniceAgentError):  # expected and explained: one line, its status
            raise SystemExit(fail(error.message, error.exit_status)) from None
        raise SystemExit(crash(error)) from None
