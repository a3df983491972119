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

        def make_agent(approver: Any) -> Any:
            return runtime.recording(runtime.agent(runtime.consented(approver)), warn)

        window = getattr(runtime.facts, "context_tokens", None)
        editor = EditorAgent(
            make_agent, model=runtime.model or "", window=lambda: window, version=__version__
        )
        await run_agent(cast(Any, editor))  # it implements the methods it offers, not all the Protocol
    return 0
