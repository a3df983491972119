"""The one composition root: settings and flags in; the model client, the MCP servers and one
toolbox out. `ask`, `chat`, `run`, `tools` and `serve` all assemble their parts here.

Settings come from flags > environment > `.env` > defaults; a flag left at None was not given.
The model is resolved while the MCP servers start (both are slow and independent), and
everything opened is closed on the way out, whatever happened in between. Consent is decided
in one place, `consent.Consent`, wrapped around the toolbox by `Runtime.consented`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from importlib import import_module
from pathlib import Path
from typing import Any

from ..config import Settings, load_settings
from ..core.errors import ConfigError
from ..core.record import Record
from .gc_pause import started
from .text import safe

ANONYMOUS_APIFY = (
    "anonymous Apify tools only (set APIFY_TOKEN or run venice-agent login apify for Actors and your account)"
)
NO_MCP = "no MCP servers (--no-mcp, or none in the MCP config): the built-in tools only"
SIGNED_IN_APIFY = "signed in with OAuth (venice-agent logout apify signs out)"


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

    def asking(self) -> Any:
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
    text = given
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
) -> tuple[Settings, list[Any]]:
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


def refuse_apify_flags(flags: Flags, servers: list[Any]) -> None:
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


class Runtime(Record, frozen=False):
    """What a command works with. `tools` is the one toolbox: built-ins and MCP together,
    without consent (`consented` wraps it)."""

    settings: Settings
    servers: list[Any]
    tools: Any  # CombinedToolbox(built-ins, MCP)
    mcp: Any  # the MCP toolbox: `.reload()`, `.servers`, `.failures`
    pager: Any  # the one Pager shared by the loop, the MCP toolbox and the `page` tool
    client: Any = None  # VeniceClient, when the command talks to a model
    model: str | None = None
    facts: Any = None  # the model's prices and limits, read once
    sampling: Any = None  # the SamplingDesk servers' sampling requests reach; None: not offered
    e2ee: bool | None = None  # --e2ee / --no-e2ee as given (None: the model's default)
    _privacy: tuple[Any, str | None] | None = None

    @property
    def apify(self) -> str:
        """The Apify line of the banner, tied to the servers that really started."""
        return apify_mode(self.settings, self.servers, self.mcp.servers)

    def consented(
        self,
        approver: Any = None,
        *,
        tools: Any = None,
        auto_approve: bool | None = None,
        policy: str | None = None,
    ) -> Any:
        """The toolbox (or `tools`) behind the one consent wrapper; a big catalogue is searched
        (`search_tools`, tools/search.py) inside it, so a found tool asks like any other;
        `policy`: why no yes can be given here (see `Consent`)."""
        from ..core.consent import Consent
        from ..tools.search import ToolSearch

        yes = self.settings.auto_approve_tools if auto_approve is None else auto_approve
        window = getattr(self.facts, "context_window", None)  # the model list's, when it says
        searched = ToolSearch(self.tools if tools is None else tools, search_rule(self.settings, window))
        return Consent(searched, approver=approver, auto_approve=yes, policy=policy)

    def privacy(self) -> tuple[Any, str | None]:
        """The model's end-to-end encryption (`private.E2EE`, which the agent hands its client with each request; None: plain),
        and why no question may run (None: they may), decided once (`models.e2ee_choice`)."""
        if self._privacy is None:
            from ..model.models import ModelFacts, e2ee_choice

            on, refusal = e2ee_choice(self.e2ee, self.facts or ModelFacts(), self.model or "")
            private = None
            if on:
                from ..model.private import E2EE  # cryptography: only for an encrypted model

                private = E2EE(self.model or "")
            self._privacy = (private, refusal)
        return self._privacy

    def agent(self, tools: Any, *, instruction: str | None = None, asking: Any = None, **options: Any) -> Any:
        """An `Agent` on this runtime's model with `tools` (a new conversation each time);
        `instruction` (-s) goes after our system prompt, whose start stays the same; `asking`
        (`model.options.RequestOptions`) is checked against the model here, before any
        request: `ConfigError` for what it cannot take; `options` go to the agent as they are
        (schema, attachments)."""
        from ..agent import Agent, AgentOptions, system_prompt, with_instruction

        info = self.facts.info if self.facts is not None else None
        fields = (
            asking.checked(self.model or "", info, venice=self.client.venice_parameters) if asking else {}
        )

        private, refusal = self.privacy()
        settings = self.settings
        chosen = AgentOptions(
            model=self.model or "",
            max_rounds=settings.max_rounds,
            max_tool_result_chars=settings.max_tool_result_chars,
            temperature=settings.venice_temperature,
            pager=self.pager,
            facts=self.facts,
            max_usd=settings.max_usd,
            session_max_usd=settings.session_max_usd,
            max_completion_tokens=settings.max_completion_tokens,
            sampling=self.sampling,
            context_tokens=settings.context_tokens,
            compact=settings.compact,
            compact_at=settings.compact_at,
            system_prompt=with_instruction(
                system_prompt(apify=uses_apify(self.servers, self.mcp.servers))
                + self.mcp.instructions_prompt(),
                instruction,
            ),
            private=private,
            private_refusal=refusal,
            request_fields=fields,
            search_usd=asking.search_usd(info) if asking else 0.0,
            **options,
        )
        return Agent(self.client, tools, chosen)

    def recording(self, agent: Any, warn: Callable[[str], None], servers: Sequence[Any] = ()) -> Any:
        """`agent`, recording each run in the store when the user asked for one (opt-in only),
        every secret masked: ours, and those of `servers` a front added (an editor's)."""
        if not self.settings.venice_agent_db:
            return agent
        from ..bot.recording import RecordingAgent

        secrets = self.settings.secrets([*self.servers, *servers])
        return RecordingAgent(agent, self.settings.venice_agent_db, warn, secrets)


def search_rule(settings: Settings, window: int | None = None) -> Any:
    """When the catalogue is searched, from the settings; the one rule of a question and of
    `doctor`. `window`: the model's context window in tokens when the server says it; the one
    counted against is the agent's (`choose_window`: CONTEXT_TOKENS when unknown or smaller);
    unknown, the tool count decides."""
    from ..core.context import choose_window
    from ..tools.search import SearchRule

    window, _ = choose_window(window, None, settings.context_tokens)
    return SearchRule(
        settings.tool_search,
        max_tools=settings.tool_search_tools,
        share=settings.tool_search_share,
        top_k=settings.tool_search_top_k,
        window=window,
    )


def apify_mode(settings: Settings, servers: list[Any], statuses: list[Any] | None = None) -> str:
    """The banner's `apify` line, tied to the servers that really started (`statuses`)."""
    apify = [server for server in servers if getattr(server, "apify", False)]
    if not servers:
        return f"not used, {NO_MCP}"
    if not apify:
        names = ", ".join(safe(server.name) for server in servers)
        return f"not used (MCP servers: {names})"
    if statuses is not None and not uses_apify(servers, statuses):
        return "did not start: no Apify tools this session (the line above says why)"
    if settings.apify_token_value() is None:
        if any(server.oauth is not None for server in apify):
            return SIGNED_IN_APIFY
        return ANONYMOUS_APIFY
    return "authenticated"


def uses_apify(servers: list[Any], statuses: list[Any]) -> bool:
    """An Apify server is among those that started."""
    started = {status.name for status in statuses if status.state == "ready"}
    return any(getattr(server, "apify", False) and server.name in started for server in servers)


def _session_parts(settings: Settings, root: Any, model: bool, person: bool) -> tuple[Any, Any, Any]:
    """The MCP sessions' hooks (notices, verbose logs, what the client offers), their sign-in,
    and the desk servers' sampling requests reach (None: not offered)."""
    from ..mcp.session import SessionHooks
    from .terminal.console_io import terminal_sign_in
    from .terminal.elicit_form import terminal_features

    features = terminal_features(yes=settings.auto_approve_tools, root=root, model=model, person=person)
    hooks = SessionHooks(verbose=settings.venice_agent_verbose, client_options=features.client_options)
    return hooks, terminal_sign_in(), features.sampling


@asynccontextmanager
async def open_runtime(settings: Settings, servers: list[Any], **options: Any) -> AsyncIterator[Runtime]:
    """`_open` (below), traced when the OTEL_* variables ask (`telemetry`: off, it imports no
    OpenTelemetry module); every front gets its parts here, and so its traces."""
    from ..telemetry import traced

    with traced(settings.secrets(servers)):
        async with _open(settings, servers, **options) as runtime:
            yield runtime


@asynccontextmanager
async def _open(
    settings: Settings,
    servers: list[Any],
    *,
    model: bool = True,
    root: str | os.PathLike[str] | None = None,
    pager: Any = None,
    on_status: Callable[[Any], None] | None = None,
    spinner: Any = None,
    person: bool = True,
    check_model: bool = False,
    tool_lists: Any = None,
    defer: bool = False,
) -> AsyncIterator[Runtime]:
    """Open the MCP servers (and, with `model`, resolve the model meanwhile); close all after.

    The mcp SDK takes more than a second to import, and only a server that can start imports
    it. Stdio servers were spawned before that (`head_start`) and boot meanwhile in their own
    processes, and the model request goes out before the import holds the interpreter; a stdio
    server that could not be spawned early needs mcp to start, so mcp is imported first. `person` False:
    nobody at this terminal answers for the session (`serve`), so servers are offered neither
    elicitation nor sampling. `check_model`: the model server must answer at start even for
    a pinned model (`serve`: else nobody hears it is down before a user does); without a
    pinned model, discovery checks it anyway.
    """
    from ..core.pager import Pager
    from ..core.toolbox import CombinedToolbox
    from ..mcp.toolbox import McpToolbox
    from ..tools.builtin import builtin_toolbox

    key = settings.require_venice_key() if model else None
    if any(
        server.transport == "stdio" and getattr(server, "started", None) is None and not server.unavailable
        for server in servers
    ):
        import_module("mcp.client.stdio")  # spawning this server needs it: first (above)
    pager = pager if pager is not None else Pager(settings.max_tool_result_chars)
    opened: list[Any] = []

    async def discover() -> tuple[Any, str, Any]:
        from ..model.client import VeniceClient  # httpx2: by now the servers are booting

        secrets = settings.secrets(servers)  # masked in any error the model server echoes
        client = VeniceClient(key or "", base_url=settings.venice_base_url, secrets=secrets)
        opened.append(client)
        name = await client.discovery.resolve_model(settings.venice_model)
        facts = await client.discovery.model_facts(name, strict=check_model)  # prices, output limit: once
        if spinner is not None:
            spinner.model_found()
        return client, name, facts

    model_task = asyncio.create_task(discover()) if model else None
    # What the sessions offer and how they sign in: only for servers to start (with none, the
    # forms, sampling and sign-in modules are never imported).
    hooks, sign_in, sampling = (
        _session_parts(settings, root, model, person) if servers else (None, None, None)
    )
    try:
        async with McpToolbox.open(
            servers,
            max_result_chars=settings.max_tool_result_chars,
            pager=pager,
            on_status=spinner.server if spinner is not None else on_status,
            hooks=hooks,
            sign_in=sign_in,
            call_timeout=settings.mcp_call_timeout,
            cache=tool_lists,
            defer=defer,
        ) as box:
            client, name, facts = await model_task if model_task is not None else (None, None, None)
            if spinner is not None:
                spinner.stop()  # before anything else is printed
            tools = CombinedToolbox(builtin_toolbox(root, pager, files=settings.file_tools), box)
            started()  # the collector, off for start-up (cli/start.py), is on again
            yield Runtime(settings, servers, tools, box, pager, client, name, facts, sampling)
    finally:
        if model_task is not None:
            if not model_task.done():
                model_task.cancel()
            await asyncio.gather(model_task, return_exceptions=True)
        for client in opened:
            await client.aclose()
