"""The uvicorn server behind `venice-agent serve`: its socket, its guard against stalled
connections and its way of stopping.

Connections (`guarded_http`): one that has not sent a whole request head within
`HEAD_TIMEOUT` is closed, and at most `connection_cap()` are open; past that a new one closes
the oldest still waiting for its head, so stalled connections cannot keep anyone else out.
Stopping (`serve_server`): on SIGTERM or Ctrl+C no new request is taken, running replies get
GRACE seconds, the rest are cancelled, and the command exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..listening import LISTEN_QUEUE

GRACE = 5  # seconds running replies are given to finish on SIGTERM or Ctrl+C
SETTLING = 5  # then, for the cancelled ones to be recorded and answered
HEAD_TIMEOUT = 5.0  # seconds a connection has to send a whole request head
MAX_CONNECTIONS = 1000  # open at once; fewer when the descriptor limit is low (connection_cap)


async def run_server(
    app: Any, sock: socket.socket, replies: Any, ready: Callable[[], None] = lambda: None
) -> None:
    """Serve `app` on `sock` until SIGTERM or Ctrl+C, then stop as `serve_server` says. `ready`
    is called once it serves and its signal handlers are in place: a supervisor (or a test)
    that stops it as soon as it says it listens gets a clean stop, never a signal lost before
    the handlers were there (SIGINT ignored by a shell's background job, for one)."""
    import uvicorn  # here, not at the top: the other commands start without it

    cap = connection_cap()
    config = uvicorn.Config(
        app,
        http=guarded_http(HEAD_TIMEOUT, cap),
        # asyncio accepts up to `backlog` connections at a time before any of them is counted:
        # a few such bursts must fit in the descriptors left above the cap, or accept() fails
        # (EMFILE) and asyncio stops accepting for a second while the kernel's queue overflows.
        backlog=max(16, cap // 8),
        log_level="warning",
        access_log=False,
        lifespan="off",
        # uvicorn's own deadline is past the grace and the settling: it never has to cancel.
        timeout_graceful_shutdown=GRACE + SETTLING,
    )
    await serve_server(config, replies, ready).serve(sockets=[sock])


def serve_server(config: Any, replies: Any, ready: Callable[[], None] = lambda: None) -> Any:
    import uvicorn  # here, not at the top: the other commands start without it

    class Server(uvicorn.Server):
        """uvicorn's server, stopped as `serve --help` says. On SIGTERM or Ctrl+C it takes no
        new request, gives the running replies GRACE seconds, then cancels the rest (each ends
        `cancelled`, settled, and its client gets that reply), and the command exits 0."""

        def __init__(self, config: Any, replies: Any) -> None:
            super().__init__(config)
            self.replies = replies

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)  # within capture_signals: the handlers are ours
            for listening in sockets or ():
                listening.listen(LISTEN_QUEUE)  # the kernel's queue stays long (asyncio set `backlog`)
            if not self.should_exit:
                ready()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn's own raises the signal again once stopped: SIGTERM then killed it (143).
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            before = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            later = asyncio.get_running_loop().call_later(GRACE, self.replies.cancel)
            try:
                await super().shutdown(sockets)
            finally:
                later.cancel()

    return Server(config, replies)


def raise_descriptor_limit() -> None:
    """Raise the soft limit of open descriptors to the hard one: many systems start programs at
    1,024 with far more allowed above it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        with contextlib.suppress(ValueError, OSError):  # not allowed here: the soft limit stays
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def connection_cap() -> int:
    """At most MAX_CONNECTIONS, and half the descriptor limit at most: the other half stays for
    the store, the MCP servers' pipes and the model's connections."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = MAX_CONNECTIONS if soft == resource.RLIM_INFINITY else min(MAX_CONNECTIONS, soft // 2)
    return max(limit, 1)


def guarded_http(head_timeout: float, max_connections: int) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools) with what it lacks against stalled connections:
    uvicorn arms its keep-alive timeout only after a reply, and cancels it at the first byte of
    the next request, so a connection that sends nothing, or half a head, was kept forever.

    Here a connection that is waiting for a request head (since it opened, or since its last
    reply) is closed `head_timeout` seconds later unless the head is complete; and when more
    than `max_connections` are open, a new connection closes the oldest one still waiting for
    its head (a stalled one, or an idle keep-alive), or is itself answered 503 when every
    connection is busy with a request."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    busy_body = b'{"error": "the server has too many open connections; try again in a moment"}'
    busy = (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nretry-after: 1\r\nconnection: close\r\n\r\n%s" % (len(busy_body), busy_body)
    )

    class GuardedHttp(HttpToolsProtocol):
        waiting_since: float | None = None  # loop time since it waits for a request head
        head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.await_head()
            if len(self.connections) > max_connections:
                self.make_room()

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop_waiting()
            super().connection_lost(exc)

        def on_headers_complete(self) -> None:
            self.stop_waiting()
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.timeout_keep_alive_task is not None:  # kept alive, and no request queued
                self.await_head()

        def await_head(self) -> None:
            self.stop_waiting()
            self.waiting_since = self.loop.time()
            self.head_timer = self.loop.call_later(head_timeout, self.transport.close)

        def stop_waiting(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
            self.head_timer = self.waiting_since = None

        def make_room(self) -> None:
            live = [c for c in self.connections if not c.transport.is_closing()]
            if len(live) <= max_connections:
                return  # the ones over are already closing
            waiting = {
                c: c.waiting_since
                for c in live
                if isinstance(c, GuardedHttp) and c is not self and c.waiting_since is not None
            }
            if waiting:
                oldest = min(waiting, key=waiting.__getitem__)
                oldest.stop_waiting()
                oldest.transport.close()
            else:
                self.stop_waiting()
                self.transport.write(busy)
                self.transport.close()

    return GuardedHttp
