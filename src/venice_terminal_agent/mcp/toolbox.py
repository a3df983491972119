"""MCP servers behind the `Toolbox` seam: one catalogue, calls routed to the right server.

    async with McpToolbox.open(load_servers(settings)) as tools:
        receipt = await run_loop(plan, CombinedToolbox(builtin_toolbox(pager=tools.pager), tools))

Servers start concurrently. A server that fails to start does not stop the others (a user
with one broken entry in a Claude Desktop config still wants the rest): its status says why,
and `failures` lists those reasons. Every server is closed when the block ends, however it ends.

With `defer` and a fresh cached list for every server (`list_cache.py`), the block begins at
once with the cached catalogue and starts nothing: `settle()` starts and lists the servers,
before any call runs (the loop asks for it before it checks a batch, and `call` does too).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.defaults import MCP_CALL_TIMEOUT, PAGE_CHARS
from ..core.errors import ToolError, ToolListError
from ..core.pager import Pager
from ..core.toolbox import ToolSpec
from ..core.wording import plural
from .catalogue import Catalogue, Listing
from .resources import (
    READ_RESOURCE,
    Listed,
    list_everywhere,
    offers,
    read_resource_spec,
    read_resource_tool,
)
from .skills import TOOLS as SKILL_TOOLS
from .skills import SkillShelf

if TYPE_CHECKING:  # the cache's module loads only where a list is kept or read; a session's
    # (the SDK's transports, OAuth) only where there is a server to start
    from .list_cache import Entry, ListCache
    from .oauth.auth import SignIn
    from .server_config import ServerConfig
    from .session import ServerSession, ServerStatus, SessionHooks

DEFAULT_STARTUP_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = MCP_CALL_TIMEOUT
DEFAULT_MAX_RESULT_CHARS = PAGE_CHARS


class McpToolbox:
    """The tools of several MCP servers as one toolbox; `read_only` comes from `policy`."""

    def __init__(self, sessions: Sequence[ServerSession], pager: Pager, reserved: Iterable[str] = ()) -> None:
        self._sessions = {session.name: session for session in sessions}
        self._reserved = frozenset(reserved)
        self.pager = pager  # hand it to the built-in `page` tool so the model can read the rest
        self.catalogue = Catalogue()
        self._with_resources: set[str] = set()  # servers that listed a resource at start-up
        self.skills = SkillShelf()  # the servers' SEP-2640 skills: load_skill, read_skill_file
        self.cache: ListCache | None = None  # where each server's list is kept once listed
        self.cached: dict[str, Entry] = {}  # the lists standing in for servers not started yet
        self._settled = asyncio.Lock()
        self._changed_since_cached = False  # the servers' lists differ from the cached ones

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        servers: Sequence[ServerConfig],
        *,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        pager: Pager | None = None,
        on_status: Callable[[ServerStatus], None] | None = None,
        reserved: Iterable[str] | None = None,
        hooks: SessionHooks | None = None,
        sign_in: SignIn | None = None,
        cache: ListCache | None = None,
        defer: bool = False,
    ) -> AsyncIterator[McpToolbox]:
        """Start `servers` together and yield their toolbox; close them all on the way out.

        Results longer than a page are cut by `pager` (a new `Pager(max_result_chars)` when
        none is given) with a note naming the page ids that hold the rest. Tools named like
        one of `reserved` (default: the built-in tools) get their server's name in front, so
        a toolbox combined with the built-ins never hides one of them. `hooks` carry what the
        rest of the program adds to every session (notices, verbose logs, OAuth, callbacks).
        `cache` keeps each list once listed; with `defer` its fresh lists stand in for the
        servers until `settle()` (every server must have one, else all start now).
        """
        if reserved is None:
            from ..tools.builtin import builtin_toolbox
            from ..tools.search import SEARCH_TOOL

            reserved = [spec.name for spec in builtin_toolbox().specs()] + [
                READ_RESOURCE,
                SEARCH_TOOL,
                *SKILL_TOOLS,
            ]
        names = [server.name for server in servers]
        if len(set(names)) != len(names):
            raise ValueError(f"two MCP servers share a name: {names}")
        if servers:  # with none, the session's module (transports, OAuth) is not needed
            from .session import ServerSession
        sessions = [
            ServerSession(
                server,
                startup_timeout=startup_timeout,
                call_timeout=call_timeout,
                on_status=on_status,
                hooks=hooks,
                sign_in=sign_in,
            )
            for server in servers
        ]
        box = cls(sessions, pager if pager is not None else Pager(max_result_chars), reserved)
        box.cache = cache
        try:
            entries = [cache.read(session.config) for session in sessions] if defer and cache else []
            if entries and all(entry is not None for entry in entries):
                box.cached = {s.name: e for s, e in zip(sessions, entries, strict=True) if e is not None}
                box._build()
            else:
                await box._start_all()
            yield box
        finally:
            await asyncio.gather(*(session.close() for session in sessions), return_exceptions=True)

    @property
    def servers(self) -> list[ServerStatus]:
        return [session.status() for session in self._sessions.values()]

    @property
    def failures(self) -> list[str]:
        """One readable line per server that failed (to start, or later)."""
        return [
            session.error
            for session in self._sessions.values()
            if session.state == "failed" and session.error
        ]

    async def down(self, names: Iterable[str]) -> dict[str, str]:
        """Of the servers `names`, those not running or not answering a ping: name → why."""
        sessions = [self._sessions[name] for name in names if name in self._sessions]
        reasons = await asyncio.gather(*(session.ping() for session in sessions))
        return {s.name: reason for s, reason in zip(sessions, reasons, strict=True) if reason is not None}

    @property
    def instructions(self) -> dict[str, str]:
        """What each running server asked of its clients at start-up (capped), by server name."""
        if self.cached:
            return {name: entry.instructions for name, entry in self.cached.items() if entry.instructions}
        return {
            session.name: session.instructions
            for session in self._sessions.values()
            if session.state == "ready" and session.instructions
        }

    def instructions_prompt(self) -> str:
        """The servers' instructions as a part of a system prompt, each labelled with its server
        (capped at start-up, `mcp_session.MAX_INSTRUCTIONS`), or "" when none sent any."""
        parts = [
            f"\n\nInstructions from the MCP server {name!r}:\n{text}"
            for name, text in self.instructions.items()
        ]
        return "".join(parts)

    def __contains__(self, name: object) -> bool:
        return (
            name in self.catalogue
            or (name == READ_RESOURCE and bool(self.resource_servers()))
            or (name in SKILL_TOOLS and bool(self.skills))
        )

    def specs(self) -> list[ToolSpec]:
        """The servers' tools, `read_resource` while a running server has resources, and the
        skill tools while one listed skills."""
        servers = self.resource_servers()
        extra = [read_resource_spec(servers)] if servers and READ_RESOURCE not in self.catalogue else []
        extra += [spec for spec in self.skills.specs() if spec.name not in self.catalogue]
        return [*self.catalogue.specs, *extra]

    async def settle(self) -> None:
        """Start the servers the cached lists stood in for, and list them (once; at once when
        none did). A list that changed is one notice, and `refresh` then says so."""
        async with self._settled:
            if not self.cached:
                return
            from .list_cache import ListedTool, tool_json

            before = {name: entry.tools for name, entry in self.cached.items()}
            self.cached = {}  # from now on the servers' own lists, whatever happens below
            await self._start_all()
            for session in self._sessions.values():
                if session.state == "failed" and session.error:
                    session.hooks.notice(session.error)
                    continue
                now = tuple(ListedTool.from_json(tool_json(tool)) for tool in session.tools)
                if now != before[session.name]:
                    self._changed_since_cached = True
                    names = {tool.name for tool in before[session.name]}
                    what = _difference(names, session.tools) or "descriptions or schemas"
                    session.hooks.notice(
                        f"{session.name}: its tools changed since its list was cached ({what}); "
                        "the model is shown the new list from its next request"
                    )

    async def _start_all(self) -> None:
        await asyncio.gather(*(self._start(session) for session in self._sessions.values()))
        self._build()
        if self.cache is not None:
            for session in self._sessions.values():
                if session.state == "ready":
                    self.cache.write(
                        session.config,
                        session.tools,
                        session.instructions,
                        ttl_ms=session.list_ttl_ms,
                        uses_more=bool(session.skills) or session.name in self._with_resources,
                    )

    async def _start(self, session: ServerSession) -> None:
        await session.start()
        # Many servers (every MCPServer) declare resources and have none: the tool is offered
        # only for servers that listed one, so it is not noise in every catalogue.
        if offers(session, "resources"):
            listed, _ = await list_everywhere([session], "resources")
            if listed:
                self._with_resources.add(session.name)

    def resource_servers(self) -> list[str]:
        """The running servers that had resources when they started."""
        return [
            name
            for name, session in self._sessions.items()
            if name in self._with_resources and offers(session, "resources")
        ]

    async def listed(self, what: str) -> tuple[list[Listed], list[str]]:
        """Every running server's "resources" or "prompts", and a line per server that failed."""
        await self.settle()
        return await list_everywhere(list(self._sessions.values()), what)

    def session(self, server: str) -> ServerSession:
        return self._sessions[server]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """The result's text, cut into pages by `pager` when it is long."""
        return self.pager.cut(await self.call_whole(name, arguments))

    async def call_whole(self, name: str, arguments: Mapping[str, Any]) -> str:
        """The result's whole text (for a person who pages it themselves)."""
        await self.settle()  # no call ever goes by a cached list
        target = self.catalogue.targets.get(name)
        servers = self.resource_servers() if target is None and name == READ_RESOURCE else []
        if servers:
            return await read_resource_tool({name: self._sessions[name] for name in servers}, arguments)
        if target is None and name in SKILL_TOOLS and self.skills:
            return await self.skills.call(name, arguments)
        if target is None:
            raise ToolError(f"there is no MCP tool named {name!r}")
        return await self._sessions[target.server].call(target.tool, arguments)

    def original_name(self, name: str) -> str:
        """The name the tool has on its server (the catalogue may have renamed it)."""
        target = self.catalogue.targets.get(name)
        return target.tool if target is not None else name

    async def reload(self) -> None:
        """List every running server's tools again (Actors added mid-session) and rebuild.

        A server whose list cannot be read keeps its previous full list; the reasons are raised
        together as one `ToolListError` after the catalogue is rebuilt from what could be read.
        """
        await self.settle()
        running = [session for session in self._sessions.values() if session.client is not None]
        outcomes = await asyncio.gather(*(session.reload() for session in running), return_exceptions=True)
        self._build()
        problems = [str(outcome) for outcome in outcomes if isinstance(outcome, BaseException)]
        for outcome in outcomes:
            if isinstance(outcome, BaseException) and not isinstance(outcome, ToolListError):
                raise outcome
        if problems:
            raise ToolListError("; ".join(problems))

    async def refresh(self) -> bool:
        """Reload the servers that said their tools changed; True when the catalogue changed.

        One line per such server goes to its notice ("apify: 2 tools added"). A list that
        cannot be read keeps the previous one, and the reason is the notice instead.
        """
        if self._changed_since_cached:  # said once: the next request shows the servers' lists
            self._changed_since_cached = False
            return True
        changed = [s for s in self._sessions.values() if s.tools_changed and s.client is not None]
        if not changed:
            return False
        before = {session.name: {tool.name for tool in session.tools} for session in changed}
        for session in changed:
            try:
                await session.reload()
            except ToolListError as error:
                session.hooks.notice(str(error))
                continue
            difference = _difference(before[session.name], session.tools)
            if difference:  # the same names again (a server announcing itself late) is not news
                session.hooks.notice(f"{session.name}: {difference}")
        self._build()
        return True

    def _build(self) -> None:
        ready = {s.name: s for s in self._sessions.values() if s.state == "ready"}
        # The cached lists while they stand in for the servers (no skills: those start first).
        listed: dict[str, Sequence[Any]] = {name: entry.tools for name, entry in self.cached.items()} or {
            name: session.tools for name, session in ready.items()
        }
        listings = []
        for name, tools in listed.items():
            config = self._sessions[name].config
            listings.append(Listing(name, tools, apify=config.apify, trusted=config.trusted))
        self.catalogue = Catalogue.build(listings, self._reserved)
        if not self.cached:
            self.skills.rebuild(ready)


def _difference(before: set[str], tools: Sequence[Any]) -> str:
    after = {tool.name for tool in tools}
    added, removed = len(after - before), len(before - after)
    parts = [f"{plural(n, 'tool')} {what}" for n, what in ((added, "added"), (removed, "removed")) if n]
    return ", ".join(parts)
