"""The loopback listener a browser sign-in comes back to (RFC 8252 §7.3: any port on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any
from urllib.parse import parse_qsl, urlsplit


class LoopbackRedirect:
    """The browser comes back to http://127.0.0.1:PORT/callback with the code (RFC 8252 §7.3).

    The port is bound for the whole session so a sign-in asked for again mid-session comes back
    to the URI the client registered; the listener runs only once a sign-in has started.
    """

    def __init__(self, port: int | None = None) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # The last session's browser connection may linger in TIME_WAIT on this port for a
        # minute; without this a prompt restart could not take its registered port again.
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._socket.bind(("127.0.0.1", port or 0))
        except OSError:  # taken: any free port (the client then registers again)
            self._socket.bind(("127.0.0.1", 0))
        self.uri = f"http://127.0.0.1:{self._socket.getsockname()[1]}/callback"
        self._server: asyncio.Server | None = None
        self._answer: asyncio.Future[dict[str, str]] | None = None

    async def listen(self) -> None:
        self._answer = asyncio.get_running_loop().create_future()
        if self._server is None:
            self._server = await asyncio.start_server(self._serve, sock=self._socket)

    async def wait(self) -> Any:
        from mcp.client.auth import AuthorizationCodeResult

        assert self._answer is not None, "listen() first"
        query = await self._answer
        if "error" in query:
            raise SignInRefused(query.get("error_description") or query["error"])
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            line = (await reader.readline()).decode("latin-1").split()
            target = urlsplit(line[1] if len(line) > 1 else "/")
            query = dict(parse_qsl(target.query))
            done = target.path == "/callback" and ("code" in query or "error" in query)
            text = "Signed in: you can close this tab." if "code" in query else "The sign-in failed."
            body = (text if done else "Not found.").encode()
            writer.write(
                f"HTTP/1.1 {'200 OK' if done else '404 Not Found'}\r\n"
                f"Content-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
                f"Connection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
            if done and self._answer is not None and not self._answer.done():
                self._answer.set_result(query)
        writer.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._socket.close()


class SignInRefused(Exception):
    """The authorisation server sent the browser back with an error instead of a code."""
