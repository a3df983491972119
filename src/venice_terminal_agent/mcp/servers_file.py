"""Which MCP servers to start: the `mcpServers` JSON file users already have, or Apify.

The file is the one Claude Desktop, Cursor and VS Code use:

    {"mcpServers": {
        "time":  {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "notes": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"},
                  "trusted": true},
        "apify": {}}}

given by `--mcp-config FILE`, else `mcp.json` in the user config folder, else Apify alone.
`${NAME}` (or `${env:NAME}`) in `env`, `headers`, `args` and `url` is read from the environment,
so tokens need not sit in the file. An entry with neither `command` nor `url` named `apify`
is Apify's server as the settings describe it. `"trusted": true` lets the server's read-only
annotations skip consent; `"sampling": false` keeps our model from the server (MCP sampling is
not offered to it); `"roots": ["folder", ...]` says which folders it is offered as MCP roots
(`[]`: none; left out: the rule in `features.roots_for`); `"disabled": true` skips the entry.
`{"mcpServers": {}}` (or every entry disabled), like `--no-mcp`, means no MCP server: the
built-in tools alone.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.defaults import APP_NAME
from ..core.errors import ConfigError
from ..core.receipt import read_json
from .apify import apify_server, is_apify_command, is_apify_url
from .server_config import DOWNLOAD_STARTUP_TIMEOUT, PROTOCOLS, ServerConfig

if TYPE_CHECKING:  # the fronts read the settings and hand them down; mcp never loads them
    from ..config import Settings

CONFIG_FILE = "mcp.json"
DOWNLOADERS = {"npx", "uvx", "bunx", "pnpx"}  # their first run downloads the server: give it time
# The keys of an entry's `oauth` object: the names the MCP conformance suite hands to clients.
OAUTH_KEYS = {
    "grant_type", "client_id", "client_secret", "private_key_pem", "signing_algorithm", "scope",
    "client_metadata_url", "idp_issuer", "idp_client_id", "idp_id_token", "idp_token_endpoint",
    "issuer", "assertion",
}  # fmt: skip
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"  # RFC 7523, workload identity (SEP-1933)
_PLACEHOLDER = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


def default_config_path() -> Path:
    from platformdirs import user_config_path

    return user_config_path(APP_NAME, appauthor=False) / CONFIG_FILE


def load_servers(
    settings: Settings, mcp_config: Path | None = None, *, no_mcp: bool = False
) -> list[ServerConfig]:
    """The servers from `mcp_config`, else the file the settings name (`config set mcp-config`),
    else the user's mcp.json, else Apify alone; none with `no_mcp` (no file is read)."""
    if no_mcp:
        if mcp_config is not None:
            raise ConfigError("--no-mcp and --mcp-config contradict each other; give one of them")
        return []
    path = mcp_config or getattr(settings, "venice_agent_mcp_config", None)
    if path is None:
        found = default_config_path()
        path = found if os.path.isfile(found) else None
    if path is None:
        return [apify_server(settings)]
    from ..core.files import read_text

    text = read_text(path, f"the MCP config {path}")
    try:
        data = read_json(text)
    except ValueError as error:
        raise ConfigError(f"the MCP config {path} is not JSON: {error}") from None
    return parse_servers(data, str(path), settings, os.environ)


def parse_servers(
    data: Any, source: str, settings: Settings, environ: Mapping[str, str]
) -> list[ServerConfig]:
    entries = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise ConfigError(
            f'{source}: expected {{"mcpServers": {{"name": {{"command": ...}} or {{"url": ...}}}}}}'
        )
    servers = []
    for name, entry in entries.items():
        where = f"{source}: server {name!r}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: an entry is an object with 'command' or 'url'")
        if entry.get("disabled") is True:
            continue
        try:
            servers.append(_server(name, entry, where, settings, environ))
        except UnsetVariable as error:
            command, url = entry.get("command"), entry.get("url")
            servers.append(
                ServerConfig(
                    str(name),
                    command=command if isinstance(command, str) else None,
                    # Never dialled: the query (whose values are masked as secrets) would mask
                    # the unexpanded ${NAME} the message asks the person to set.
                    url=url.split("?", 1)[0] if isinstance(url, str) else None,
                    unavailable=str(error),
                )
            )
    return servers  # none at all is a choice: the built-in tools alone


def _server(
    name: str, entry: dict[str, Any], where: str, settings: Settings, environ: Mapping[str, str]
) -> ServerConfig:
    kind = entry.get("type") or entry.get("transport")
    if kind in ("sse",):
        raise ConfigError(
            f"{where}: the SSE transport is not supported; use the server's Streamable HTTP URL"
        )
    trusted, sampling = entry.get("trusted", False), entry.get("sampling", True)
    for key, flag in (("trusted", trusted), ("sampling", sampling)):
        if not isinstance(flag, bool):
            raise ConfigError(f"{where}: '{key}' is true or false")
    roots = entry.get("roots")
    if roots is not None:
        if not isinstance(roots, list) or not all(isinstance(root, str) and root.strip() for root in roots):
            raise ConfigError(f"{where}: 'roots' is a list of folders (an empty list: none)")
        roots = tuple(_expand(root, "roots", where, environ) for root in roots)
    protocol = entry.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        raise ConfigError(f"{where}: 'protocol' is {', '.join(PROTOCOLS[:-1])} or {PROTOCOLS[-1]}")
    timeout = entry.get("startup_timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise ConfigError(f"{where}: 'startup_timeout' is a number of seconds above 0")
    server = _entry(name, entry, where, settings, environ, trusted)
    server = dataclasses.replace(server, sampling=sampling, roots=roots, protocol=protocol)
    return dataclasses.replace(server, startup_timeout=float(timeout)) if timeout is not None else server


def _entry(
    name: str,
    entry: dict[str, Any],
    where: str,
    settings: Settings,
    environ: Mapping[str, str],
    trusted: bool,
) -> ServerConfig:
    command, url = entry.get("command"), entry.get("url")
    if command is None and url is None:
        if name.lower() == "apify":
            return apify_server(settings, name=name, trusted=trusted)
        raise ConfigError(
            f"{where}: give 'command' (a program to start) or 'url' (a Streamable HTTP endpoint)"
        )
    if command is not None and url is not None:
        raise ConfigError(f"{where}: give 'command' or 'url', not both")
    token = settings.apify_token_value()
    hidden = tuple(environ[name] for name in _PLACEHOLDER.findall(json.dumps(entry)) if name in environ)
    if url is not None:
        url = _text(url, "url", where, environ)
        headers = _strings(entry.get("headers", {}), "headers", where, environ)
        apify = is_apify_url(url)
        if apify and token and not any(key.lower() == "authorization" for key in headers):
            headers["Authorization"] = f"Bearer {token}"
        oauth = _oauth(entry["oauth"], where, environ) if "oauth" in entry else None
        return ServerConfig(
            name, url=url, headers=headers, oauth=oauth, trusted=trusted, apify=apify, hidden=hidden
        )
    if "oauth" in entry:
        raise ConfigError(
            f"{where}: 'oauth' is for servers reached by 'url'; give a stdio server its token in 'env'"
        )
    command = _text(command, "command", where, environ)
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise ConfigError(f"{where}: 'args' is a list of strings")
    args = [_expand(arg, "args", where, environ) for arg in args]
    env = _strings(entry.get("env", {}), "env", where, environ)
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"{where}: 'cwd' is a folder path")
    apify = is_apify_command(command, args)
    if apify and token and "APIFY_TOKEN" not in env:
        env["APIFY_TOKEN"] = token  # Apify's own server is configured to get Apify's token
    downloads = Path(command).name in DOWNLOADERS
    return ServerConfig(
        name, command=command, args=tuple(args), env=env, cwd=cwd, trusted=trusted,
        apify=apify, needs_node=22 if apify else None, startup_timeout=DOWNLOAD_STARTUP_TIMEOUT if downloads else None,
        hidden=hidden,
    )  # fmt: skip


def _oauth(value: Any, where: str, environ: Mapping[str, str]) -> dict[str, str]:
    oauth = _strings(value, "oauth", where, environ)
    unknown = sorted(set(oauth) - OAUTH_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: 'oauth' does not know {', '.join(unknown)} (known: {', '.join(sorted(OAUTH_KEYS))})"
        )
    grants = ("authorization_code", "client_credentials", JWT_BEARER)
    if oauth.get("grant_type", "authorization_code") not in grants:
        raise ConfigError(f"{where}: 'oauth' grant_type is {', '.join(grants[:-1])} or {grants[-1]}")
    if oauth.get("grant_type") == JWT_BEARER and not (oauth.get("client_id") and oauth.get("assertion")):
        raise ConfigError(
            f"{where}: 'oauth' with the JWT-bearer grant needs client_id and assertion (the workload's token)"
        )
    if oauth.get("grant_type") == "client_credentials" and not oauth.get("client_id"):
        raise ConfigError(
            f"{where}: 'oauth' with client_credentials needs client_id and client_secret or private_key_pem"
        )
    return oauth


def _text(value: Any, key: str, where: str, environ: Mapping[str, str]) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: '{key}' is a non-empty string")
    return _expand(value, key, where, environ)


def _strings(value: Any, key: str, where: str, environ: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str | int | float) for v in value.values()):
        raise ConfigError(f"{where}: '{key}' is an object of strings")
    return {str(k): _expand(str(v), key, where, environ) for k, v in value.items()}


class UnsetVariable(ConfigError):
    """A `${NAME}` in one server's entry that the environment does not set."""


def _expand(value: str, key: str, where: str, environ: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise UnsetVariable(
                f"'{key}' uses ${{{name}}}, which is not set in the environment; set it or mark the server \"disabled\": true"
            )
        return environ[name]

    return _PLACEHOLDER.sub(replace, value)
