"""The socket of a local HTTP front (`serve`, `mcp --http`) and the Host names it answers to:
whether an address is this machine's alone (`is_loopback`), the socket bound and listening
(`listen`), and the names a request may give (`hosts_for`, checked by `http_edge.EdgeRules`).
Standard library only: the fronts decide before they import a web stack."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from typing import Any

from ..core.errors import ConfigError

LISTEN_QUEUE = 2048  # connections the kernel holds until they are accepted
LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})
OWN_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})  # the Host names of a loopback server


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """The socket a local server (`serve`, `mcp --http`) listens on, bound to `host` (an address,
    `[::1]`, or a name such as localhost) and `port`; `ConfigError` when the address is taken or
    not this machine's. Its Host rule comes from the address it is bound to (`hosts_for`)."""
    try:
        return listening_socket(host, port)
    except OSError as problem:
        raise ConfigError(f"cannot listen on {host}:{port}: {problem.strerror or problem}") from None


def listening_socket(host: str, port: int) -> socket.socket:
    """The service's socket, bound and listening. It says it is TCP (IPPROTO_TCP, not 0):
    asyncio sets TCP_NODELAY only on connections of such a socket, and without it a reply
    written in two pieces (uvicorn writes the head, then the body) waits for the client's
    delayed ACK, about 40 ms a reply."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(LISTEN_QUEUE)
    return sock


def hosts_for(bound: str, port: int, allowed: Sequence[str]) -> Any:
    """The Host names a server bound to `bound`:`port` answers to (see `http_edge.Hosts`): the
    address it is bound to; on loopback or on every address, 127.0.0.1, localhost and [::1]
    too; on every address, any IP address (a client on the network names the machine by one).
    DNS names only when given (--allowed-host): a name is what a rebinding page sends."""
    from .http_edge import Hosts, split_host

    address = ipaddress.ip_address(bound)
    everywhere = address.is_unspecified
    names = {f"[{address}]" if address.version == 6 else str(address)}
    if address.is_loopback or everywhere:
        names |= OWN_NAMES
    given = tuple(parsed for name in allowed if (parsed := split_host(name)) is not None)
    return Hosts(port, frozenset(names), given, any_address=everywhere)
