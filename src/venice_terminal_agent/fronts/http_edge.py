"""Who may ask `serve`, checked before routing, tokens, the store or the bot (`EdgeRules`):
every request names a Host the server listens as (`Hosts`; a page whose DNS name was rebound
to 127.0.0.1 sends its own name), and a request that changes anything comes from no browser
origin or from the server's own."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def split_host(value: str) -> tuple[str, int | None] | None:
    """A Host header (or an --allowed-host) as (lowercase name, port or None); None when it is
    not one: `localhost:8080`, `[::1]:8080`, `bot.example`."""
    value = value.strip().lower()
    if value.startswith("["):  # an IPv6 address, [::1]:8080
        name, bracket, rest = value.partition("]")
        name += bracket
        if not bracket or not _is_ip(name[1:-1]) or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, colon, port_text_or_empty = value.partition(":")
        if not name or not all(c.isalnum() or c in "-._" for c in name):
            return None
        port_text = port_text_or_empty if colon else None
    if port_text is None:
        return name, None
    if not port_text.isdigit() or int(port_text) > 65535:
        return None
    return name, int(port_text)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Hosts:
    """The Host names the server answers to. `names` (its own: 127.0.0.1, localhost, [::1], or
    the address it is bound to) only with its `port`, as a browser sends them; `allowed`
    (--allowed-host, for a proxy or a DNS name in front) at any port, or at the one it gives.
    On a wildcard address (`any_address`), any IP address at its port: an address cannot be
    rebound, a DNS name can."""

    port: int
    names: frozenset[str]
    allowed: tuple[tuple[str, int | None], ...] = ()
    any_address: bool = False

    def allows(self, host: str) -> bool:
        parsed = split_host(host)
        if parsed is None:
            return False
        name, port = parsed
        if name in self.names or (self.any_address and _is_ip(name.strip("[]"))):
            return port == self.port or (port is None and self.port == 80)
        return self.given(name, port)

    def given(self, name: str, port: int | None) -> bool:
        return any(name == known and (at is None or at == port) for known, at in self.allowed)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """Why this request is refused before anything runs, or None."""
        headers = Headers(scope=scope)
        hosts = headers.getlist("host") or [""]
        for host in hosts:
            if not self.allows(host):
                shown = one_line(host)[:200]
                name = split_host(host)
                hint = (
                    f" (start it with --allowed-host {name[0]} to accept that name)"
                    if name and len(hosts) == 1
                    else ""
                )
                return 421, f"this server does not answer to the host {shown!r}{hint}"
        origin = headers.get("origin")
        if scope["method"] not in SAFE_METHODS and origin is not None and not self.own(origin, hosts[0]):
            shown = one_line(origin)[:200]
            return (
                403,
                f"a request from the origin {shown!r} is refused: only this server's own page may send one",
            )
        return None

    def own(self, origin: str, host: str) -> bool:
        """The page that sent it was served by this server: under the Host it asked for, or
        under an --allowed-host (a proxy in front may rename the Host)."""
        scheme, separator, authority = origin.strip().lower().partition("://")
        if not separator or scheme not in ("http", "https") or "/" in authority:
            return False
        if authority == host.strip().lower():
            return True
        parsed = split_host(authority)
        return parsed is not None and self.given(*parsed)


class EdgeRules:
    """ASGI middleware: a request from a host or origin this server is not is answered here,
    before routing, tokens, the store or the bot."""

    def __init__(self, app: ASGIApp, hosts: Hosts) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (problem := self.hosts.refusal(scope)) is not None:
            status, message = problem
            await JSONResponse({"error": message}, status_code=status)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def one_line(text: str) -> str:
    return " ".join(str(text).split())
