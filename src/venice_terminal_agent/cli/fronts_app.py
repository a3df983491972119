"""The commands that let other programs drive the agent: `acp` (an editor). Declarations
only; the body is fronts/acp/acp_main.py."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.exits import USAGE_ERROR_STATUS
from .common_options import (
    BaseUrlOption,
    MaxRoundsOption,
    McpConfigOption,
    ModelOption,
    NoFilesOption,
    NoMcpOption,
    RootOption,
    yes_flag,
)


def add_front_commands(app: typer.Typer) -> None:
    app.command(name="acp")(acp)


def acp(
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    mcp_config: McpConfigOption = None,
    no_mcp: NoMcpOption = False,
    max_rounds: MaxRoundsOption = None,
    yes: Annotated[
        bool,
        yes_flag("Run paid tools without asking the editor [env AUTO_APPROVE_TOOLS]."),
    ] = False,
    max_usd: Annotated[
        float | None,
        typer.Option("--max-usd", help="Most USD a question may spend [env MAX_USD]."),
    ] = None,
    session_max_usd: Annotated[
        float | None,
        typer.Option(
            "--session-max-usd", help="Most USD one editor session may spend [env SESSION_MAX_USD]."
        ),
    ] = None,
    root: RootOption = None,
    no_files: NoFilesOption = False,
    db: Annotated[
        Path | None,
        typer.Option(help="Keep each question and its receipt in this store [env VENICE_AGENT_DB]."),
    ] = None,
) -> None:
    """Be the agent in an editor: speak the Agent Client Protocol (ACP) on stdin and stdout.

    The editor starts this command (Zed: "agent_servers" in settings.json; see
    docs/editor.md). Each editor session is one conversation with the same caps, consent and
    receipts as the terminal: a call that needs a yes is asked in the editor (allow once or
    reject; no answer is no), a cancel ends the question `cancelled` and rolls it back, and
    each answer carries its receipt (`_meta`) and a usage update. With sessions on (venice-agent
    config set sessions on), each editor session is saved like a terminal's and the editor can
    load a saved one (session/load): `venice-agent --resume ID` goes on with it here, and the
    other way round. Logs go to stderr.

    \b
    venice-agent acp                                 # what an editor runs
    venice-agent acp --mcp-config mcp.json --max-usd 0.05

    A setting no session can start with (no key, a money cap that cannot be kept) does not stop
    it: each session/new is refused with the line that says why.

    Exit status: 0 the editor closed the connection, {USAGE_ERROR_STATUS} a usage error.
    """
    from ..fronts.acp.acp_main import acp_main
    from ..fronts.settings_load import Flags

    flags = Flags(
        model=model,
        base_url=base_url,
        mcp_config=mcp_config,
        no_mcp=no_mcp,
        max_rounds=max_rounds,
        yes=yes,
        max_usd=max_usd,
        session_max_usd=session_max_usd,
        root=root,
        no_files=no_files,
        db=db,
    )
    raise typer.Exit(acp_main(flags))


acp.__doc__ = (acp.__doc__ or "").replace("{USAGE_ERROR_STATUS}", str(USAGE_ERROR_STATUS))
