"""Options shared by several commands: one definition, one help text."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ..core.defaults import MAX_ROUNDS

# The panels the main help groups asking's options into, in this order (Typer's
# rich_help_panel; `cli/group.py` writes them without Rich). Other commands' helps ignore them.
ASKING = "Asking"
MONEY_AND_CAPS = "Money and caps"
TOOLS_AND_MCP = "Tools and MCP servers"
SESSIONS = "Sessions"
OUTPUT = "Output"
PANELS = (ASKING, MONEY_AND_CAPS, TOOLS_AND_MCP, SESSIONS, OUTPUT)


class Transport(StrEnum):
    http = "http"
    stdio = "stdio"


class SearchMode(StrEnum):
    auto = "auto"
    on = "on"
    off = "off"


class WebSearch(StrEnum):  # venice_parameters.enable_web_search (model/options.py WEB_SEARCH)
    off = "off"
    on = "on"
    auto = "auto"


class Effort(StrEnum):  # reasoning_effort's values in Venice's API (model/options.py EFFORTS)
    none = "none"
    minimal = "minimal"
    low = "low"
    medium = "medium"
    high = "high"
    xhigh = "xhigh"
    max = "max"


NoFilesOption = Annotated[
    bool,
    typer.Option(
        "--no-files",
        help="Leave read_file and list_files out: no local file is read [env FILE_TOOLS=0].",
        rich_help_panel=TOOLS_AND_MCP,
    ),
]
OfflineOption = Annotated[  # chat and serve: the bot without a model
    bool, typer.Option("--offline", help="Plan from commands even when VENICE_API_KEY is set.")
]
RootOption = Annotated[
    Path | None,
    typer.Option(
        help="Folder read_file and list_files may see [default: the working folder].",
        rich_help_panel=TOOLS_AND_MCP,
    ),
]
NoMcpOption = Annotated[  # every command that starts MCP servers: the built-in tools alone
    bool,
    typer.Option(
        "--no-mcp",
        help='Start no MCP server: the built-in tools only (as {"mcpServers": {}} does).',
        rich_help_panel=TOOLS_AND_MCP,
    ),
]
McpConfigOption = Annotated[
    Path | None,
    typer.Option(
        help="JSON file of MCP servers (mcpServers format) [default: the user's mcp.json, else Apify].",
        rich_help_panel=TOOLS_AND_MCP,
    ),
]
TransportOption = Annotated[
    Transport | None,
    typer.Option(
        help="How to reach Apify's MCP server [env APIFY_MCP_TRANSPORT; default: http].",
        rich_help_panel=TOOLS_AND_MCP,
    ),
]
ToolSearchOption = Annotated[
    SearchMode | None,
    typer.Option(
        "--tool-search",
        help="Search a big tool catalogue instead of sending it whole [env TOOL_SEARCH; default: auto].",
        rich_help_panel=TOOLS_AND_MCP,
    ),
]
ApifyToolsOption = Annotated[
    str | None,
    typer.Option(
        "--tools",
        help="Apify tools to load, e.g. actors,docs,apify/rag-web-browser [env APIFY_MCP_TOOLS].",
        rich_help_panel=TOOLS_AND_MCP,
    ),
]
# Sessions (`venice-agent -c`, docs/sessions.md): which saved conversation a run goes on from.
ContinueOption = Annotated[
    bool,
    typer.Option(
        "--continue",
        "-c",
        help="Go on with this folder's latest saved session (with QUESTION: once).",
        rich_help_panel=SESSIONS,
    ),
]
ResumeOption = Annotated[
    str | None,
    typer.Option(
        "--resume",
        metavar="ID|latest",
        help="Go on with this saved session (latest: of any folder).",
        rich_help_panel=SESSIONS,
    ),
]
ForkOption = Annotated[
    str | None,
    typer.Option(
        "--fork",
        metavar="ID",
        help="Go on with a copy of this saved session, saved as a new one.",
        rich_help_panel=SESSIONS,
    ),
]
SaveOption = Annotated[
    bool,
    typer.Option(
        "--save",
        help="Save this run's conversation (sessions on for one run) [env VENICE_AGENT_SESSIONS].",
        rich_help_panel=SESSIONS,
    ),
]
PrivateOption = Annotated[
    bool,
    typer.Option(
        "--private", help="Save nothing of this run, even with sessions on.", rich_help_panel=SESSIONS
    ),
]

# The model server and the model, for every command that asks one (ask, chat, acp).
ModelOption = Annotated[
    str | None,
    typer.Option(
        help="Model id [env VENICE_MODEL; default: discovered from the API].", rich_help_panel=ASKING
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        help="OpenAI-compatible API root [env VENICE_BASE_URL; default: Venice].", rich_help_panel=ASKING
    ),
]
MaxRoundsOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=40,
        help=f"Most model rounds per question [env MAX_ROUNDS; default: {MAX_ROUNDS}].",
        rich_help_panel=MONEY_AND_CAPS,
    ),
]
