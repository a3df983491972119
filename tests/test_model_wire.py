"""The model client's HTTP (model/wire.py) on a real socket: what people notice of it beyond
the stream itself, which tests/test_venice_client.py and tests/test_stream.py cover."""

from __future__ import annotations

import asyncio

from venice_terminal_agent.model import VeniceClient
from venice_terminal_agent.testing import FakeVenice

USER = [{"role": "user", "content": "hi"}]


class CountingFake(FakeVenice):
    """The fake server, counting the connections clients open to it."""

    connections = 0

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await super()._connection(reader, writer)


async def test_the_questions_of_a_session_share_one_connection() -> None:
    """Each answer is read to the end of its body after [DONE], so its connection goes back to
    the pool: a REPL's next question opens no new connection (and, with Venice, no new TLS
    handshake)."""
    async with CountingFake({"replies": [{"text": "one"}, {"text": "two"}, {"text": "three"}]}) as fake:
        async with VeniceClient("k", fake.base_url) as client:
            for _ in range(3):
                await client.complete("m", USER)
    assert len(fake.chat_requests) == 3
    assert fake.connections == 1
