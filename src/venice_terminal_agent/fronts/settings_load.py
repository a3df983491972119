"""A command's settings, read from its flags: `Flags` (the command line as given) in; the
`Settings` and the MCP server configs out (`load`), or a `ConfigError` that says which flag or
value is wrong. Nothing is opened here: `runtime.py` composes the parts these settings name.

Settings come from flags > environment > `.env` > defaults; a flag left at None was not given.
The types below are imported for the checker only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings, load_settings
from ..core.errors import ConfigError
from ..core.record import Record
from .text import safe

if TYPE_CHECKING:
    from ..mcp.server_config import ServerConfig
    from ..model.options import RequestOptions


class Flags(Record):
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
    continue_: bool = False  # -c: go on with this folder's latest session
    resume: str | None = None  # --resume ID|latest
    fork: str | None = None  # --fork ID: a copy that goes its own way
    save: bool = False  # --save: keep this run's conversation (sessions on for one run)
    private: bool = False  # --private: nothing of this run is saved, even with sessions on
    no_mcp: bool = False  # start no MCP server
    context_tokens: int | None = None  # --context-tokens: the window when the server does not say
    no_compact: bool = False  # --no-compact: never compact the conversation on its own
    e2ee: bool | None = None  # --e2ee / --no-e2ee; None: the model's own default (supportsE2EE)
    attach: tuple[Path, ...] = ()  # -a FILE: sent with the (first) question
    schema: str | None = None  # --schema JSON|@FILE: the answer must match it
    tool_search: str | None = None  # --tool-search auto|on|off
    system: str | None = None  # -s TEXT|@FILE: an instruction added to the system prompt
    material: str | None = None  # the text piped to a one-shot question (local data)
    web_search: str | None = None  # --web-search off|on|auto
    reasoning_effort: str | None = None  # --reasoning-effort LEVEL
    no_thinking: bool = False  # --no-thinking
    quiet_thinking: bool = False  # --quiet-thinking: one line instead of the thinking text
    quiet: bool = False  # -q: no banner

    def asking(self) -> RequestOptions | None:
        """The request options these flags ask for (`model.options.RequestOptions`), or None."""
        if self.web_search in (None, "off") and self.reasoning_effort is None and not self.no_thinking:
            return None
        from ..model.options import RequestOptions

        return RequestOptions(self.web_search or "off", self.reasoning_effort, self.no_thinking)


def read_instruction(given: str | None) -> str | None:
    """-s TEXT, or -s @FILE: the file's text; `ConfigError` for a file that cannot be read or
    an instruction that is empty."""
    if given is None:
        return None
    from .text import as_typed

    text = as_typed(given)  # a file's name stays as the system gave it: it opens by those bytes
    if given.startswith("@"):
        from ..core.files import read_text

        text = read_text(os.path.expanduser(given[1:]), f"-s {given}")
    if not text.strip():
        raise ConfigError(f"-s {given}: the instruction is empty")
    return text.strip()


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
        venice_agent_sessions=flags.save or None,
        context_tokens=flags.context_tokens,
        compact=False if flags.no_compact else None,
        tool_search=flags.tool_search,
    )


def load(
    flags: Flags, *, on_server_error: Callable[[ConfigError], None] | None = None
) -> tuple[Settings, list[ServerConfig]]:
    """Settings and the MCP server configs (`--mcp-config`, else mcp.json, else Apify);
    `ConfigError` for anything wrong with either. With `on_server_error`, a bad MCP config goes
    there instead and no server comes back (`doctor` reports it and goes on checking the rest)."""
    settings = settings_from(flags)
    if flags.no_mcp and flags.mcp_config is None:  # no server, no file to read: nor mcp's modules
        refuse_apify_flags(flags, [])
        return settings, []
    from ..mcp.servers_file import load_servers

    try:
        servers = load_servers(settings, flags.mcp_config, no_mcp=flags.no_mcp)
    except ConfigError as error:
        if on_server_error is None:
            raise
        on_server_error(error)
        return settings, []
    refuse_apify_flags(flags, servers)
    return settings, servers


def refuse_apify_flags(flags: Flags, servers: list[ServerConfig]) -> None:
    """`--tools` and `--transport` choose Apify's tools and how to reach it: given when no
    Apify server is used, they would do nothing, so they are refused (`ConfigError`)."""
    given = [name for name, value in (("--tools", flags.tools), ("--transport", flags.transport)) if value]
    if not given or any(getattr(server, "apify", False) for server in servers):
        return
    names = ", ".join(safe(server.name) for server in servers)
    used = f"MCP servers: {names}" if servers else "no MCP server"
    raise ConfigError(
        f"{' and '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} to Apify's MCP server, which "
        f"is not used here ({used}): drop {' and '.join(given)}, or add Apify to the MCP config"
    )
