"""Apify's MCP server: the hosted URL (the default) or the local `npx` package.

Hosted (`APIFY_MCP_TRANSPORT=http`, the default): `https://mcp.apify.com/?tools=...` with the
token as a bearer header. Without `APIFY_TOKEN` only the four tools Apify serves anonymously
are asked for, so a user with only a Venice key still gets a working agent; once signed in
with `venice-agent login apify` (OAuth), the full hosted tool set is used with that sign-in.
Local (`APIFY_MCP_TRANSPORT=stdio`): `npx -y @apify/actors-mcp-server`, which needs a token
and Node.js 22 or later; both are checked up front and said plainly.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..core.errors import ConfigError
from ..core.policy import APIFY_ANONYMOUS_TOOLS
from .oauth.token_store import TokenFile
from .server_config import DOWNLOAD_STARTUP_TIMEOUT, ServerConfig

if TYPE_CHECKING:  # the fronts read the settings and hand them down; mcp never loads them
    from ..config import Settings

APIFY_TOKEN_HELP = "set APIFY_TOKEN; get one at https://console.apify.com/settings/integrations"

APIFY_PACKAGE = "@apify/actors-mcp-server"
NODE_MAJOR = 22
# Selectors Apify serves without a token: the four tools, and the `docs` category (two of them).
_ANONYMOUS_SELECTORS = {*APIFY_ANONYMOUS_TOOLS, "docs"}


def apify_server(
    settings: Settings, *, name: str = "apify", trusted: bool = False, sign_in: bool | None = None
) -> ServerConfig:
    """Apify's server as the settings say; hosted without a token, signed in with OAuth when
    `venice-agent login apify` stored tokens (or `sign_in` is true), anonymous otherwise."""
    token = settings.apify_token_value()
    tools = _selectors(settings.apify_mcp_tools)
    if settings.apify_mcp_transport == "stdio":
        if not token:
            raise ConfigError(
                f"the local Apify MCP server (APIFY_MCP_TRANSPORT=stdio) needs an Apify token: {APIFY_TOKEN_HELP}; "
                "without one, use the hosted server (APIFY_MCP_TRANSPORT=http, the default), "
                f"which offers {', '.join(APIFY_ANONYMOUS_TOOLS)} anonymously"
            )
        args = ["-y", APIFY_PACKAGE, *(["--tools", ",".join(tools)] if tools else [])]
        return ServerConfig(
            name, command="npx", args=tuple(args), env={"APIFY_TOKEN": token},
            trusted=trusted, apify=True, needs_node=NODE_MAJOR, startup_timeout=DOWNLOAD_STARTUP_TIMEOUT,
        )  # fmt: skip
    if not token:
        full = with_query(settings.apify_mcp_url, tools=",".join(tools)) if tools else settings.apify_mcp_url
        if sign_in or (sign_in is None and TokenFile(name, full).exists()):
            return ServerConfig(name, url=full, oauth={}, trusted=trusted, apify=True)
        needing = [tool for tool in tools if tool not in _ANONYMOUS_SELECTORS]
        if needing:
            raise ConfigError(
                f"APIFY_MCP_TOOLS asks for {', '.join(needing)}, which Apify serves only with a token: "
                f"{APIFY_TOKEN_HELP} or run venice-agent login {name} "
                f"(without either: {', '.join(APIFY_ANONYMOUS_TOOLS)})"
            )
        tools = tools or list(APIFY_ANONYMOUS_TOOLS)
    url = with_query(settings.apify_mcp_url, tools=",".join(tools)) if tools else settings.apify_mcp_url
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return ServerConfig(name, url=url, headers=headers, trusted=trusted, apify=True)


def _selectors(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def with_query(url: str, **params: str) -> str:
    """`url` with `params` set in its query string (other parameters kept)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    query += list(params.items())
    return urlunsplit(parts._replace(path=parts.path or "/", query=urlencode(query, safe=",/")))


def is_apify_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host == "apify.com" or host.endswith(".apify.com")


def is_apify_command(command: str, args: list[str] | tuple[str, ...]) -> bool:
    return any("actors-mcp-server" in part for part in (command, *args))


def node_binary(command: str, env: Mapping[str, str]) -> str | None:
    """The Node.js that will run `command`: the command itself when it is node (by name or
    path), else `node` on the child's PATH (how `npx` and `#!/usr/bin/env node` scripts find it)."""
    if re.fullmatch(r"node(js)?(\d*)(\.exe)?", Path(command).name):
        return shutil.which(command, path=env.get("PATH", os.environ.get("PATH", "")))
    return shutil.which("node", path=env.get("PATH", os.environ.get("PATH", "")))


async def node_problem(command: str, env: Mapping[str, str], major: int = NODE_MAJOR) -> str | None:
    """Why the Node.js that runs `command` cannot run a server needing Node `major`+, or None."""
    node = node_binary(command, env)
    if node is None:
        return f"Node.js {major} or later is needed and no `node` was found on PATH; install it from https://nodejs.org"
    try:
        process = await asyncio.create_subprocess_exec(
            node, "--version", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
        )
        out, _ = await asyncio.wait_for(process.communicate(), timeout=10)
    except (OSError, TimeoutError) as error:
        return f"cannot run {node} --version ({error or 'no answer'}); Node.js {major} or later is needed"
    version = out.decode(errors="replace").strip()
    found = re.match(r"v?(\d+)", version)
    if found is None or int(found.group(1)) < major:
        return (
            f"Node.js {major} or later is needed, but {node} is {version or 'of unknown version'}; "
            f"install Node.js {major}+ (https://nodejs.org) and put it first on PATH, or give its path as 'command'"
        )
    return None
