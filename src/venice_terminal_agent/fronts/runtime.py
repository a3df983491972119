"""The one composition root: the settings and the MCP server configs in (`settings_load.load`
reads them from the flags); the model client, the MCP servers and one toolbox out. `ask`,
`chat`, `run`, `tools`, `serve`, `acp` and `mcp` all assemble their parts here.

The model is resolved while the MCP servers start (both are slow and independent), and
everything opened is closed on the way out, whatever happened in between. Consent is decided
in one place, `consent.Consent`, wrapped around the toolbox by `Runtime.consented`.

Each front hands `open_runtime` the person it has (`person.Person`: who approves a call, fills
in a server's form, may be asked for sampling, signs in) and how to open (`Opening`); the
runtime imports no front. The types below are imported for the checker only: a plain question
imports each module when it first uses it, as before.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..core.record import Record
from .gc_pause import started
from .text import safe

if TYPE_CHECKING:
    from ..agent import Agent
    from ..bot.recording import RecordingAgent
    from ..config import Settings
    from ..core.consent import Approver, Consent
    from ..core.pager import Pager
    from ..core.toolbox import CombinedToolbox, Toolbox
    from ..mcp.list_cache import ListCache
    from ..mcp.oauth.auth import SignIn
    from ..mcp.sampling_model import SamplingDesk
    from ..mcp.server_config import ServerConfig
    from ..mcp.session import ServerStatus, SessionHooks
    from ..mcp.toolbox import McpToolbox
    from ..model.client import VeniceClient
    from ..model.models import ModelFacts
    from ..model.options import RequestOptions
    from ..model.private import E2EE
    from ..tools.search import SearchRule
    from .person import Person

ANONYMOUS_APIFY = (
    "anonymous Apify tools only (set APIFY_TOKEN or run venice-agent login apify for Actors and your account)"
)
NO_MCP = "no MCP servers (--no-mcp, or none in the MCP config): the built-in tools only"
SIGNED_IN_APIFY = "signed in with OAuth (venice-agent logout apify signs out)"


class Runtime(Record, frozen=False):
    """What a command works with. `tools` is the one toolbox: built-ins and MCP together,
    without consent (`consented` wraps it)."""

    settings: Settings
    servers: list[ServerConfig]
    tools: CombinedToolbox  # built-ins and MCP
    mcp: McpToolbox  # `.reload()`, `.servers`, `.failures`
    pager: Pager  # the one Pager shared by the loop, the MCP toolbox and the `page` tool
    person: Person  # who the front has: approves a call unless the front names another approver
    client: VeniceClient | None = None  # when the command talks to a model
    model: str | None = None
    facts: ModelFacts | None = None  # the model's prices and limits, read once
    sampling: SamplingDesk | None = None  # where servers' sampling requests go; None: not offered
    e2ee: bool | None = None  # --e2ee / --no-e2ee as given (None: the model's default)
    _privacy: tuple[E2EE | None, str | None] | None = None

    @property
    def model_client(self) -> VeniceClient:
        """The model client, which a runtime opened with a model has (`Opening.model`)."""
        if self.client is None:
            raise RuntimeError("this runtime was opened without a model (Opening(model=False))")
        return self.client

    @property
    def apify(self) -> str:
        """The Apify line of the banner, tied to the servers that really started."""
        return apify_mode(self.settings, self.servers, self.mcp.servers)

    def consented(
        self,
        approver: Approver | None = None,
        *,
        tools: Toolbox | None = None,
        auto_approve: bool | None = None,
        policy: str | None = None,
    ) -> Consent:
        """The toolbox (or `tools`) behind the one consent wrapper; a big catalogue is searched
        (`search_tools`, tools/search.py) inside it, so a found tool asks like any other.
        `approver`: who says yes (default: the front's person's); `policy`: why no yes can be
        given here (see `Consent`)."""
        from ..core.consent import Consent
        from ..tools.search import ToolSearch

        yes = self.settings.auto_approve_tools if auto_approve is None else auto_approve
        window = getattr(self.facts, "context_window", None)  # the model list's, when it says
        searched = ToolSearch(self.tools if tools is None else tools, search_rule(self.settings, window))
        asks = approver if approver is not None else self.person.approver()
        return Consent(searched, approver=asks, auto_approve=yes, policy=policy)

    def privacy(self) -> tuple[E2EE | None, str | None]:
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

    def agent(
        self,
        tools: Toolbox,
        *,
        instruction: str | None = None,
        asking: RequestOptions | None = None,
        **options: Any,
    ) -> Agent:
        """An `Agent` on this runtime's model with `tools` (a new conversation each time);
        `instruction` (-s) goes after our system prompt, whose start stays the same; `asking`
        (`model.options.RequestOptions`) is checked against the model here, before any
        request: `ConfigError` for what it cannot take; `options` go to the agent as they are
        (schema, attachments)."""
        from ..agent import Agent, AgentOptions, system_prompt, with_instruction

        info = self.facts.info if self.facts is not None else None
        fields = (
            asking.checked(self.model or "", info, venice=self.model_client.venice_parameters) if asking else {}
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
        return Agent(self.model_client, tools, chosen)

    def recording(
        self, agent: Agent, warn: Callable[[str], None], servers: Sequence[ServerConfig] = ()
    ) -> Agent | RecordingAgent:
        """`agent`, recording each run in the store when the user asked for one (opt-in only),
        every secret masked: ours, and those of `servers` a front added (an editor's)."""
        if not self.settings.venice_agent_db:
            return agent
        from ..bot.recording import RecordingAgent

        secrets = self.settings.secrets([*self.servers, *servers])
        return RecordingAgent(agent, self.settings.venice_agent_db, warn, secrets)


def search_rule(settings: Settings, window: int | None = None) -> SearchRule:
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


def apify_mode(
    settings: Settings, servers: Sequence[ServerConfig], statuses: Sequence[ServerStatus] | None = None
) -> str:
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


def uses_apify(servers: Sequence[ServerConfig], statuses: Sequence[ServerStatus]) -> bool:
    """An Apify server is among those that started."""
    started = {status.name for status in statuses if status.state == "ready"}
    return any(getattr(server, "apify", False) and server.name in started for server in servers)


class Watch(Protocol):
    """Who is told how start-up goes: the terminal's spinner, or a line as each server starts."""

    def server(self, status: ServerStatus) -> None: ...

    def model_found(self) -> None: ...

    def stop(self) -> None: ...


class Opening(Record):
    """How a front opens the runtime; the defaults are a question's."""

    model: bool = True  # resolve a model (False: tools and plans only)
    root: str | os.PathLike[str] | None = None  # the file tools' folder; the servers' default root
    pager: Pager | None = None  # the one Pager (None: one of the settings' page size)
    watch: Watch | None = None  # told as servers start and the model is found
    check_model: bool = False  # the model server must answer at start even for a pinned model
    tool_lists: ListCache | None = None  # the servers' tool lists kept between runs
    defer: bool = False  # servers may finish starting while the first request goes out


OPENING = Opening()


def _session_parts(
    settings: Settings, person: Person, opening: Opening
) -> tuple[SessionHooks, SignIn, SamplingDesk | None]:
    """The MCP sessions' hooks (notices, verbose logs, what the client offers: the person's
    form, sampling when they may be asked and there is a model, the file root as the default
    root), who signs in, and the desk servers' sampling requests reach (None: not offered).
    --yes answers no server's question."""
    from ..mcp.features import ClientFeatures
    from ..mcp.sampling_model import SamplingDesk
    from ..mcp.session import SessionHooks

    yes = settings.auto_approve_tools
    desk = SamplingDesk() if opening.model and person.answers_sampling(yes=yes) else None
    features = ClientFeatures(
        elicitor=person.elicitor(yes=yes), roots=(Path(opening.root or "."),), sampling=desk
    )
    hooks = SessionHooks(verbose=settings.venice_agent_verbose, client_options=features.client_options)
    return hooks, person.sign_in(), desk


@asynccontextmanager
async def open_runtime(
    settings: Settings, servers: list[ServerConfig], person: Person, opening: Opening = OPENING
) -> AsyncIterator[Runtime]:
    """`_open` (below), traced when the OTEL_* variables ask (`telemetry`: off, it imports no
    OpenTelemetry module); every front gets its parts here, and so its traces."""
    from ..telemetry import traced

    with traced(settings.secrets(servers)):
        async with _open(settings, servers, person, opening) as runtime:
            yield runtime


@asynccontextmanager
async def _open(
    settings: Settings, servers: list[ServerConfig], person: Person, opening: Opening
) -> AsyncIterator[Runtime]:
    """Open the MCP servers (and, with `opening.model`, resolve the model meanwhile); close all
    after. `person`: who the front has (`person.NOBODY` for a service).

    The mcp SDK takes more than a second to import, and only a server that can start imports
    it. Stdio servers were spawned before that (`head_start`) and boot meanwhile in their own
    processes, and the model request goes out before the import holds the interpreter; a stdio
    server that could not be spawned early needs mcp to start, so mcp is imported first.
    `opening.check_model`: the model server must answer at start even for a pinned model
    (`serve`: else nobody hears it is down before a user does); without a pinned model,
    discovery checks it anyway.
    """
    from ..core.pager import Pager
    from ..core.toolbox import CombinedToolbox
    from ..mcp.toolbox import McpToolbox
    from ..tools.builtin import builtin_toolbox

    model, root, watch = opening.model, opening.root, opening.watch
    key = settings.require_venice_key() if model else None
    if any(
        server.transport == "stdio" and getattr(server, "started", None) is None and not server.unavailable
        for server in servers
    ):
        import_module("mcp.client.stdio")  # spawning this server needs it: first (above)
    pager = opening.pager if opening.pager is not None else Pager(settings.max_tool_result_chars)
    opened: list[VeniceClient] = []

    async def discover() -> tuple[VeniceClient, str, ModelFacts]:
        from ..model.client import VeniceClient  # httpx2: by now the servers are booting

        secrets = settings.secrets(servers)  # masked in any error the model server echoes
        client = VeniceClient(key or "", base_url=settings.venice_base_url, secrets=secrets)
        opened.append(client)
        name = await client.discovery.resolve_model(settings.venice_model)
        facts = await client.discovery.model_facts(name, strict=opening.check_model)  # prices, output limit: once
        if watch is not None:
            watch.model_found()
        return client, name, facts

    model_task = asyncio.create_task(discover()) if model else None
    # What the sessions offer and how they sign in: only for servers to start (with none, the
    # forms, sampling and sign-in modules are never imported).
    hooks, sign_in, sampling = _session_parts(settings, person, opening) if servers else (None, None, None)
    try:
        async with McpToolbox.open(
            servers,
            max_result_chars=settings.max_tool_result_chars,
            pager=pager,
            on_status=watch.server if watch is not None else None,
            hooks=hooks,
            sign_in=sign_in,
            call_timeout=settings.mcp_call_timeout,
            cache=opening.tool_lists,
            defer=opening.defer,
        ) as box:
            client, name, facts = await model_task if model_task is not None else (None, None, None)
            if watch is not None:
                watch.stop()  # before anything else is printed
            tools = CombinedToolbox(builtin_toolbox(root, pager, files=settings.file_tools), box)
            started()  # the collector, off for start-up (cli/start.py), is on again
            yield Runtime(settings, servers, tools, box, pager, person, client, name, facts, sampling)
    finally:
        if model_task is not None:
            if not model_task.done():
                model_task.cancel()
            await asyncio.gather(model_task, return_exceptions=True)
        for client in opened:
            await client.aclose()
