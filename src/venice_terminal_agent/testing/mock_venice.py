"""The fake Venice in process: the same script and request checks as `FakeVenice`, served by an
`httpx2.MockTransport` handler instead of a socket, so model tests need no server at all::

    async with MockVenice([{"text": "hello"}]) as fake:
        client = VeniceClient("k", fake.base_url, http_client=fake.http_client())
        ...
        fake.chat_requests   # every chat request body it saw

Keep `FakeVenice` (a real socket) for tests that run the command as a process.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from .scripted import Answer, Scripted, root_path

HOST = "http://fake-venice.invalid"  # never resolved: the transport answers itself
BASE_URL = HOST + "/api/v1"


class MockVenice(Scripted):
    """A scripted model API as an `httpx2.MockTransport` (see `fake_venice` for the script)."""

    @property
    def base_url(self) -> str:
        return HOST + root_path(self.script)

    @property
    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    def http_client(self, **options: Any) -> httpx2.AsyncClient:
        """An `httpx2.AsyncClient` whose every request this fake answers."""
        return httpx2.AsyncClient(transport=self.transport, **options)

    async def __aenter__(self) -> MockVenice:
        return self

    async def __aexit__(self, kind: object, error: object, trace: object) -> None:
        if kind is None:
            self.check_finished()

    async def handle(self, request: httpx2.Request) -> httpx2.Response:
        headers = {key.lower(): value for key, value in request.headers.items()}
        # The path with its query: `/tee/attestation?model=…&nonce=…` is read from it.
        _, answer = self.answer(request.method, request.url.raw_path.decode(), headers, request.content)
        if answer.delay:
            await asyncio.sleep(answer.delay)
        if answer.events is None:
            return httpx2.Response(answer.status, headers=answer.headers, json=answer.body)
        return httpx2.Response(answer.status, headers=answer.headers, content=_stream(answer))


async def _stream(answer: Answer) -> AsyncIterator[bytes]:
    events = answer.events or []
    if not answer.chunk_delay:
        events = [b"".join(events)]  # no pause between chunks: one write, as a busy server would
    for number, event in enumerate(events):
        if number:
            await asyncio.sleep(answer.chunk_delay)
        yield event
    if answer.hang:
        await asyncio.Event().wait()  # until the client gives up (cancels)
    if answer.drop:
        raise httpx2.RemoteProtocolError("peer closed connection without sending complete message body")
    if not answer.cut:  # cut: the response ends cleanly, but without a finish reason or [DONE]
        yield answer.done
