"""`venice-agent acp`: the agent for an editor, speaking ACP on stdin and stdout.

The editor starts it; stdout is the protocol's, so everything else (warnings, a server that
failed) goes to stderr, which editors show in their logs. The parts are the composition root's
(`fronts/runtime.py`) like every other command's: the model, the MCP servers, the caps and the one
consent wrapper; `editor_agent.py` maps the protocol onto them. With sessions on, each editor
session is saved like a terminal's (`fronts/saved_sessions.py`), under the id the editor knows.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...core.errors import ConfigError, VeniceAgentError
from ..failures import fail, path_problem
from ..settings_load import Flags, load

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...config import Settings
    from ...mcp.server_config import ServerConfig
    from ..runtime import Runtime


def acp_main(flags: Flags) -> int:
    """The whole command; returns the process exit status."""
    if problem := path_problem(flags.root, flags.mcp_config):
        return fail(problem)
    try:
        settings, servers = load(flags)
        settings.require_venice_key()
    except ConfigError as error:  # said to the editor too, at each session it opens
        return _run(_refuse(error))
    from ..head_start import head_start

    servers, started = head_start(servers)
    try:
        return _run(_serve(settings, flags, servers))
    finally:
        for server in started:
            server.discard()


def _run(serving: Any) -> int:
    try:
        return asyncio.run(serving)
    except VeniceAgentError as error:
        return fail(error.message, error.exit_status)
    except KeyboardInterrupt:
        return 0  # the editor stopped us


def warn(message: str) -> None:
    from ..text import safe

    print(f"venice-agent: {safe(message)}", file=sys.stderr, flush=True)


async def _editor(editor: Any) -> None:
    """Speak ACP for `editor` on stdin and stdout, each line checked first (`stdin_lines`)."""
    from acp import run_agent

    from .stdin_lines import editor_streams

    try:
        out, checked, pumping = await editor_streams()
    except ValueError:  # asyncio takes pipes, sockets and terminals only
        raise ConfigError("acp speaks ACP on stdin and stdout: an editor starts it with pipes") from None
    try:
        await run_agent(
            cast(Any, editor), out, checked
        )  # it implements the methods it offers, not all the Protocol
    finally:
        pumping.cancel()


async def _refuse(error: VeniceAgentError) -> int:
    """A setting that keeps every question from starting (no key, a money cap that cannot be
    kept, a bad setting): the editor is still answered, each session refused with the line
    that says why (a process that exits shows the editor only that it went away)."""
    from ... import __version__
    from .editor_agent import EditorAgent

    warn(error.message)

    async def make_agent(*_: Any) -> Any:
        raise error  # never called: every session is refused first

    await _editor(EditorAgent(make_agent, model="", version=__version__, refusal=error))
    return 0


async def _serve(settings: Settings, flags: Flags, servers: list[ServerConfig]) -> int:
    from contextlib import AsyncExitStack

    from ... import __version__
    from ..person import NOBODY
    from ..runtime import Opening, open_runtime
    from .editor_agent import EditorAgent

    # Nobody at a terminal answers a server's form or sampling request: the editor is asked
    # only through ACP's permission request, for the model's own calls.
    async with AsyncExitStack() as stack:
        try:
            runtime = await stack.enter_async_context(
                open_runtime(settings, servers, NOBODY, Opening(root=flags.root))
            )
            runtime.agent(runtime.consented())  # one no session could start with (a money cap)
        except ConfigError as error:  # a setting no question can start with
            return await _refuse(error)
        for failure in runtime.mcp.failures:
            warn(failure)
        editor_servers = EditorServers(runtime, settings, warn)
        sessions = EditorSessions(runtime, warn) if settings.venice_agent_sessions else None

        async def make_agent(approver: Any, extra: list[Any], session_id: str, cwd: str, stored: Any) -> Any:
            tools, configs = await editor_servers.open(extra)
            base = runtime.agent(runtime.consented(approver, tools=tools))
            agent = runtime.recording(base, warn, configs)
            if sessions is None:
                return agent
            sessions.mask(settings.secrets(configs))  # the editor's servers' env and headers
            return sessions.attach(agent, base, session_id, cwd, stored)

        window = getattr(runtime.facts, "context_tokens", None)
        editor = EditorAgent(
            make_agent,
            model=runtime.model or "",
            window=lambda: window,
            version=__version__,
            sessions=sessions,
        )
        try:
            await _editor(editor)
        finally:
            await editor_servers.close()
            if sessions is not None:
                await sessions.close()
    return 0


class EditorSessions:
    """The saved sessions behind `session/new` and `session/load`, when sessions are on.

    An editor session is saved after each question that kept something, as the terminal saves
    (`saving.SavingAgent`: the same store, rows and receipts), under the id the editor was
    given; so `venice-agent -r ID` goes on with it, and `session/load ID` with one saved in the
    terminal. While this process has a session open, a terminal resuming it goes on in a fork
    (the same mark as between two terminals); one that another running venice-agent holds is
    refused here, since a load cannot answer with another id.
    """

    def __init__(self, runtime: Runtime, warn: Callable[[str], None]) -> None:
        from ...store.sessions import SessionStore
        from ..saved_sessions import sessions_path

        self.runtime, self.warn = runtime, warn
        self.store = SessionStore(sessions_path(), secrets=runtime.settings.secrets(runtime.servers))
        self.open: list[Any] = []  # the SavingAgents of this connection

    def mask(self, secrets: list[str]) -> None:
        """Mask `secrets` too in everything saved from now on (one store serves every session of
        this connection, so a session's servers' secrets are masked in all of them)."""
        self.store.secrets.extend(secret for secret in secrets if secret not in self.store.secrets)

    def new_id(self) -> str:
        from ...store.sessions import new_id

        return new_id()

    async def find(self, session_id: str) -> Any:
        """The saved session `session_id`, exactly (an editor gives back the ids it was given),
        marked open in this process; `StoreError` says why not."""
        from ...core.errors import StoreError
        from ..saved_sessions import Opened

        unknown = f"no saved session {session_id!r} (venice-agent sessions list --all shows them all)"
        if not self.store.path.exists():
            raise StoreError(unknown)
        await self.store.open()
        try:
            session = await self.store.load(session_id)
        except StoreError:
            raise StoreError(unknown) from None
        holder = await self.store.claim(session_id)
        if holder is not None:
            raise StoreError(
                f"session {session_id} is open in another venice-agent (process {holder}): close it there first, "
                f"or go on with a copy of it (venice-agent --fork {session_id})"
            )
        return Opened(self.store, session_id, session, claimed=True)

    def attach(self, agent: Any, base: Any, session_id: str, cwd: str, stored: Any) -> Any:
        """`agent` going on from `stored` (None: a new session) and saved after each question."""
        from ..saved_sessions import Opened, attach
        from ..settings_load import Flags

        opened = stored if stored is not None else Opened(self.store, session_id)
        saving, notes = attach(
            agent, base, opened, self.runtime.settings, Flags(), self.runtime.model or "", self.warn
        )
        saving.folder = str(Path(cwd).resolve())  # the editor's project: where `venice-agent -c` finds it
        for note in notes:
            self.warn(note)
        self.open.append(saving)
        return saving

    async def close(self) -> None:
        """This process lets go of its sessions (a terminal may resume them as they are)."""
        from ...core.errors import StoreError

        for saving in self.open:
            if saving.saved:
                try:
                    await self.store.release(saving.id)
                except StoreError:
                    pass  # the mark of a process that is gone is ignored by the next one anyway
        await self.store.close()


class EditorServers:
    """The MCP servers an editor passes with `session/new`, added to ours for that session.

    Each set is opened in a task of its own, which holds it open until the end: an MCP
    session's task group must be left by the task that entered it, and ACP requests each run
    in their own. Their values are taken literally (no `${VAR}` from our environment), and
    they are not trusted: every tool of theirs that is not read-only asks, as any server's.
    """

    def __init__(self, runtime: Runtime, settings: Settings, warn: Callable[[str], None]) -> None:
        self.runtime, self.settings, self.warn = runtime, settings, warn
        self.holders: list[asyncio.Task[None]] = []
        self.done = asyncio.Event()

    async def open(self, given: list[Any]) -> tuple[Any, list[Any]]:
        """The toolbox of a session with the `given` servers, and their parsed entries (whose
        secrets the session's writers mask)."""
        from ...core.toolbox import CombinedToolbox
        from ...mcp.servers_file import parse_servers

        ours = {server.name for server in self.runtime.servers}
        entries = {}
        for server in given:
            if server.name in ours:
                self.warn(f"the editor's MCP server {server.name!r} is already one of ours: ours is used")
            elif getattr(server, "url", None) is not None and getattr(server, "type", "http") == "http":
                entries[server.name] = {
                    "url": server.url,
                    "headers": {h.name: h.value for h in server.headers},
                }
            elif getattr(server, "command", None) is not None:
                entries[server.name] = {
                    "command": server.command,
                    "args": list(server.args),
                    "env": {variable.name: variable.value for variable in server.env},
                }
            else:
                self.warn(
                    f"the editor's MCP server {server.name!r}: only stdio and HTTP servers are supported"
                )
        if not entries:
            return self.runtime.tools, []
        configs = parse_servers({"mcpServers": entries}, "the editor's MCP servers", self.settings, {})
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.holders.append(asyncio.ensure_future(self._hold(configs, ready)))
        box = await ready
        for failure in box.failures:
            self.warn(failure)
        return CombinedToolbox(self.runtime.tools, box), configs

    async def _hold(self, configs: list[Any], ready: asyncio.Future[Any]) -> None:
        from ...mcp.toolbox import McpToolbox

        reserved = [spec.name for spec in self.runtime.tools.specs()]  # ours keep their names
        try:
            async with McpToolbox.open(
                configs,
                max_result_chars=self.settings.max_tool_result_chars,
                pager=self.runtime.pager,
                reserved=reserved,
                call_timeout=self.settings.mcp_call_timeout,
            ) as box:
                ready.set_result(box)
                await self.done.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            if not isinstance(error, Exception):
                raise

    async def close(self) -> None:
        self.done.set()
        await asyncio.gather(*self.holders, return_exceptions=True)
