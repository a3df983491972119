"""One MCP server as the rest of the program sees it, wherever its entry came from
(`mcp_config.py` reads the `mcpServers` file, `apify.py` describes Apify's server)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from .results import redact

DOWNLOAD_STARTUP_TIMEOUT = 120.0  # a first `npx`/`uvx` run downloads the server: give it time
LEGACY_PROTOCOL = "2025-11-25"  # the last revision with the `initialize` handshake
MODERN_PROTOCOL = "2026-07-28"
PROTOCOLS = ("auto", LEGACY_PROTOCOL, MODERN_PROTOCOL)  # what `"protocol"` in mcp.json takes
OAUTH_SECRETS = {
    "client_secret",
    "private_key_pem",
    "idp_id_token",
    "assertion",
}  # `oauth` values never shown


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server: a command to start (stdio), a URL (Streamable HTTP), or an object in memory."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = field(default=(), repr=False)  # may hold `${TOKEN}` values: see `where`
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold tokens: never shown
    cwd: str | None = None
    url: str | None = field(default=None, repr=False)  # may carry `?token=`: see `where`
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    oauth: Mapping[str, str] | None = field(default=None, repr=False)  # DESIGN §1; holds secrets
    trusted: bool = False
    sampling: bool = True  # `"sampling": false`: the server is not offered our model
    # `"roots": [...]`: the folders offered as MCP roots (`[]`: none); None: the default rule
    # (`mcp_features.roots_for`): the file root, unless the command line names its own folders.
    roots: tuple[str, ...] | None = None
    apify: bool = False
    needs_node: int | None = None  # the least Node.js major version the command needs
    startup_timeout: float | None = None  # overrides the session's (a first `npx` run downloads)
    # `"protocol"`: which MCP revision to speak. "auto" negotiates the newest both sides speak
    # (`server/discover`, else the 2025 handshake); a revision pins it. None: the transport's
    # default (`default_protocol`).
    protocol: str | None = None
    hidden: tuple[str, ...] = field(default=(), repr=False)  # values read from `${NAME}`: secrets
    in_memory: Any = field(default=None, repr=False)  # an MCP server object, run in this process
    # A stdio server the caller already spawned (fronts/head_start.py): a Transport over its pipes.
    started: Any = field(default=None, repr=False, compare=False)
    # Why this server cannot start (a `${NAME}` that is not set): it fails at once with this
    # reason, said like any start-up failure, and the other servers go on.
    unavailable: str | None = None

    @property
    def transport(self) -> Literal["stdio", "http", "memory"]:
        if self.in_memory is not None:
            return "memory"
        return "http" if self.url else "stdio"

    @property
    def wanted_protocol(self) -> str:
        """ "auto", "2025-11-25" or "2026-07-28": the entry's choice, else the transport's.
        Stdio servers keep the 2025 handshake: a `server/discover` probe makes some of them
        start their back ends, and the ones that answer it with an error cost a round trip."""
        if self.protocol is not None:
            return self.protocol
        return LEGACY_PROTOCOL if self.transport == "stdio" else "auto"

    @property
    def where(self) -> str:
        """The command line or URL, without secrets, for messages."""
        if self.in_memory is not None:
            return "in memory"
        if self.url:
            return self.url.split("?", 1)[0]
        return redact(" ".join([self.command or "", *self.args]).strip(), self.secret_values()) or ""

    def secret_values(self) -> list[str]:
        """What must never appear in a message: header, env and `${NAME}` values, URL query values."""
        values = [*self.headers.values(), *self.env.values(), *self.hidden]
        values += [value for key, value in (self.oauth or {}).items() if key in OAUTH_SECRETS]
        return values + [value for _, value in parse_qsl(urlsplit(self.url or "").query)]
