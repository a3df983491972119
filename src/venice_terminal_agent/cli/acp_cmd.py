"""`venice-agent acp`: the agent for an editor, speaking ACP on stdin and stdout.

The editor starts it; stdout is the protocol's, so everything else (warnings, a server that
failed) goes to stderr, which editors show in their logs. The parts are the composition root's
(`runtime.py`) like every other command's: the model, the MCP servers, the caps and the one
consent wrapper; `acp_agent.py` maps the protocol onto them.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, cast

from ..config import ConfigError
from ..core.errors import VeniceAgentError
from .runtime import Flags, load
from .terminal import fail


def acp_main(flags: Flags) -> int:
    """The whole command; returns the process exit status."""
    if flags.root is not None and not flags.root.is_dir():
        return fail(f"--root {flags.root} is not a folder")
    if flags.mcp_config is not None and not flags.mcp_config.is_file():
        return fail(f"--mcp-config {flags.mcp_config}: no such file")
    try:
        settings, servers = load(flags)
        settings.require_venice_key()
    except ConfigError as error:
        return fail(error.message)
    from .head_start import head_start

    servers, started = head_start(servers)
    try:
        return asyncio.run(_serve(settings, flags, servers))
    except VeniceAgentError as error:
        return fail(error.message, error.exit_status)
    except KeyboardInterrupt:
        return 0  # the editor stopped us
    finally:
        for server in started:
            server.discard()


async def _serve(settings: Any, flags: Flags, servers: list[Any]) -> int:
    from acp import run_agent

    from .. import __version__
    from .acp_agent import EditorAgent
    from .runtime import open_runtime
    from .text import safe

    def warn(message: str) -> None:
        print(f"venice-agent: {safe(message)}", file=sys.stderr, flush=True)

    # Nobody at a terminal answers a server's form or sampling request: the editor is asked
    # only through ACP's permission request, for the model's own calls.
    async with open_runtime(settings, servers, root=flags.root, person=False) as runtime:
        for failure in runtime.mcp.failures:
            warn(failure)
        editor_servers = EditorServers(runtime, settings, warn)

        async def make_agent(approver: Any, extra: list[Any]) -> Any:
            tools = await editor_servers.open(extra)
            return runtime.recording(runtime.agent(runtime.consented(approver, tools=tools)), warn)

        window = getattr(runtime.facts, "context_tokens", None)
        editor = EditorAgent(
            make_agent, model=runtime.model or "", window=lambda: window, version=__version__
        )
        try:
            await run_agent(cast(Any, editor))  # it implements the methods it offers, not all the Protocol
        finally:
            await editor_servers.close()
    return 0


class EditorServers:
    """The MCP servers an editor passes with `session/new`, added to ours for that session.

    Each set is opened in a task of its own, which holds it open until the end: an MCP
    session's task group must be left by the task that entered it, and ACP requests each run
    in their own. Their values are taken literally (no `${VAR}` from our environment), and
    they are not trusted: every tool of theirs that is not read-only asks, as any server's.
    """

    def __init__(self, runtime: Any, settings: Any, warn: Any) -> None:
        self.runtime, self.settings, self.warn = runtime, settings, warn
        self.holders: list[asyncio.Task[None]] = []
        self.done = asyncio.Event()

    async def open(self, given: list[Any]) -> Any:
        from ..core.toolbox import CombinedToolbox
        from ..mcp.config import parse_servers

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
            return self.runtime.tools
        configs = parse_servers({"mcpServers": entries}, "the editor's MCP servers", self.settings, {})
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.holders.append(asyncio.ensure_future(self._hold(configs, ready)))
        box = await ready
        for failure in box.failures:
            self.warn(failure)
        return CombinedToolbox(self.runtime.tools, box)

    async def _hold(self, configs: list[Any], ready: asyncio.Future[Any]) -> None:
        from ..mcp.toolbox import McpToolbox

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
