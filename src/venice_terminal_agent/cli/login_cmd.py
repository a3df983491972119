"""`venice-agent login SERVER` / `logout SERVER`, and who signs in during a session.

A browser sign-in always prints its URL (the browser may not open, or open elsewhere) and
then opens the browser. In a session it happens only with a terminal; without one the
server is skipped with "NAME needs a sign-in: run venice-agent login NAME". `login` signs in
ahead of time (it is asked for explicitly, so it prints the URL even without a terminal);
`logout` asks the server to revoke the tokens, then deletes them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import typer

from ..core.receipt import USAGE_ERROR_STATUS
from ..fronts.terminal.console_io import show_and_open
from ..fronts.text import safe


def _server(flags: Any, name: str) -> Any:
    """The HTTP server entry called `name`; `ConfigError` if there is none."""
    from ..core.errors import ConfigError
    from ..mcp.apify import apify_server
    from .tools_cmd import _servers

    settings, servers = _servers(flags)
    found = next((server for server in servers if server.name == name), None)
    if found is None:
        known = ", ".join(server.name for server in servers)
        raise ConfigError(f"there is no MCP server named {name!r} (servers: {known})")
    if found.apify and found.transport == "http" and not found.headers:
        found = apify_server(settings, name=found.name, trusted=found.trusted, sign_in=True)
    if found.transport != "http":
        raise ConfigError(f"{name} is started as a command (stdio): give it its token in 'env' instead")
    if any(key.lower() == "authorization" for key in found.headers):
        raise ConfigError(f"{name} is given a token already (an Authorization header or APIFY_TOKEN)")
    return found


def login_main(flags: Any, name: str) -> int:
    from ..core.errors import ConfigError

    try:
        server = _server(flags, name)
    except ConfigError as error:
        return _fail("login", str(error))
    return asyncio.run(_login(server))


async def _login(server: Any) -> int:
    from ..mcp.oauth.auth import SignIn
    from ..mcp.oauth.token_store import TokenFile
    from ..mcp.toolbox import McpToolbox

    stored = TokenFile(server.name, server.url or "")
    why = stored.damaged()
    if why is not None:  # signing in again is the fix the session's message names
        stored.delete()
        typer.echo(f"{safe(str(stored.path))} could not be read ({why}): replaced by this sign-in", err=True)
    before = await stored.get_tokens()
    async with McpToolbox.open([server], sign_in=SignIn(open_url=show_and_open)) as box:
        if box.failures:
            return _fail("login", box.failures[0])
        tools = len(box.specs())
    after = await stored.get_tokens()
    if after is None:
        typer.echo(f"{safe(server.name)} did not ask for a sign-in ({tools} tools without one)")
    elif before == after:
        typer.echo(
            f"Already signed in to {safe(server.name)} ({tools} tools); venice-agent logout {safe(server.name)} signs out"
        )
    else:
        typer.echo(f"Signed in to {safe(server.name)} ({tools} tools)")
    return 0


def logout_main(flags: Any, name: str) -> int:
    from ..core.errors import ConfigError

    try:
        server = _server(flags, name)
    except ConfigError as error:
        return _fail("logout", str(error))
    return asyncio.run(_logout(server))


async def _logout(server: Any) -> int:
    from ..mcp.oauth.grants import revoke
    from ..mcp.oauth.token_store import TokenFile

    stored = TokenFile(server.name, server.url or "")
    why = stored.damaged()
    if why is not None:  # nothing in it can be revoked: the file goes
        stored.delete()
        typer.echo(
            f"Signed out of {safe(server.name)}: {safe(str(stored.path))} could not be read ({why}) and is deleted"
        )
        return 0
    if not stored.exists():
        stored.delete()
        typer.echo(f"Not signed in to {safe(server.name)}")
        return 0
    try:
        revoked = await revoke(server.url or "", stored)
    except Exception:  # unreachable server, bad metadata: the local tokens go anyway
        revoked = False
    stored.delete()
    note = (
        "tokens revoked and deleted"
        if revoked
        else "tokens deleted (the server did not confirm revoking them)"
    )
    typer.echo(f"Signed out of {safe(server.name)}: {note}")
    return 0


def _fail(command: str, message: str) -> int:
    typer.echo(f"venice-agent {command}: {safe(message)}", err=True)
    return USAGE_ERROR_STATUS
