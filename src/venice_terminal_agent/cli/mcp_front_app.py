"""`venice-agent mcp`: the agent as an MCP server, added to the app by `add_mcp_front_command`.
The body is fronts/mcp_server/mcp_main.py, imported only when the command runs (the mcp SDK is heavy)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.defaults import QUESTION_BUDGET
from .common_options import McpConfigOption, NoFilesOption, NoMcpOption, RootOption

TOKEN_ENV = "VENICE_AGENT_MCP_TOKEN"


def front_line(settings: Any) -> str:
    """What `venice-agent mcp` would expose with these settings (doctor's line)."""
    money = f"max_usd<={settings.max_usd:g}" if settings.max_usd is not None else "no money cap"
    paid = (
        "run without asking (--yes)"
        if settings.auto_approve_tools
        else "ask the client's person (elicitation; on 2026-07-28 the input-required round trip)"
    )
    return (
        f"venice-agent mcp would expose ask(question, budget<={QUESTION_BUDGET}, "
        f"max_rounds<={settings.max_rounds}, {money}, conversation) · paid calls {paid}"
    )


def add_mcp_front_command(app: typer.Typer) -> None:
    app.command("mcp")(mcp_front)


def mcp_front(
    http: Annotated[
        bool, typer.Option("--http", help="Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
    ] = False,
    host: Annotated[
        str,
        typer.Option(help="With --http: the address to listen on; other than loopback only with a token."),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="With --http: the port (0: any free one).")
    ] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            help=f"With --http: every request needs 'Authorization: Bearer TOKEN' [env {TOKEN_ENV}]."
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model id [env VENICE_MODEL].")] = None,
    mcp_config: McpConfigOption = None,
    max_rounds: Annotated[
        int | None,
        typer.Option(min=1, max=40, help="Most model rounds per question; a client may ask fewer."),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            min=0, help=f"Most tool calls per question [default: {QUESTION_BUDGET}]; a client may ask fewer."
        ),
    ] = None,
    max_usd: Annotated[
        float | None,
        typer.Option(min=0, help="Most USD per question [env MAX_USD]; a client may ask less, never more."),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Run paid tools without asking the client's person [env AUTO_APPROVE_TOOLS]."
        ),
    ] = False,
    root: RootOption = None,
    no_files: NoFilesOption = False,
    no_mcp: NoMcpOption = False,
) -> None:
    """Serve the agent as an MCP server with one tool, ask(question, budget?, max_usd?,
    max_rounds?, conversation?): other agents and editors (Claude Desktop, Cursor, VS Code) call it.

    The result is the answer as text and the receipt as structured content. The caps the
    server starts with are the most a client gets: a higher value is lowered to them, and the
    result says so. A paid call asks the client's person through MCP elicitation (on the
    2026-07-28 protocol, the input-required round trip: the call returns the question and the
    client's retry answers it; no retry in 10 minutes is a no); a client that cannot be asked
    gets the call declined (unless --yes). Progress notifications report rounds
    and calls; a client's cancellation ends the question cancelled. The same conversation id
    continues a conversation while the server runs; with sessions on, every conversation is a
    saved session whose id the result gives: it outlives the server, and venice-agent --resume
    ID goes on with it in the terminal. Over HTTP, without a token only loopback.

    \b
    venice-agent mcp --mcp-config mcp.json --max-usd 0.50
    venice-agent mcp --http --port 8765
    VENICE_AGENT_MCP_TOKEN=s3cret venice-agent mcp --http --host 0.0.0.0

    A setting no question can start with (no key, a money cap that cannot be kept) does not stop
    it: each ask is a tool error with the line that says why.

    Exit status: 0 when the client disconnects (stdio) or on Ctrl+C / SIGTERM (HTTP), 2 a usage
    error (a bad option, a port already taken), 7 the model server failed at start-up.
    """
    import os

    from ..fronts.mcp_server.mcp_main import FrontOptions, mcp_front_main

    options = FrontOptions(
        http=http,
        host=host,
        port=port,
        token=token or os.environ.get(TOKEN_ENV) or None,
        model=model,
        mcp_config=Path(mcp_config) if mcp_config is not None else None,
        max_rounds=max_rounds,
        budget=budget,
        max_usd=max_usd,
        yes=yes,
        root=root,
        no_files=no_files,
        no_mcp=no_mcp,
    )
    raise typer.Exit(mcp_front_main(options))
