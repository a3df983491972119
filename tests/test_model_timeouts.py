"""Model timeouts: a short connect timeout, a read timeout between chunks, and model discovery
that gives up after 30 s instead of leaving start-up blank for minutes. Real sockets on
127.0.0.1; the waits are the timeouts themselves, made short."""

from __future__ import annotations

import socket

import pytest

from venice_terminal_agent.model import ModelError, VeniceClient
from venice_terminal_agent.model.client import CONNECT_TIMEOUT, READ_TIMEOUT
from venice_terminal_agent.model.discovery import DISCOVERY_TIMEOUT


async def test_defaults_are_a_short_connect_and_a_long_read_between_chunks() -> None:
    assert (CONNECT_TIMEOUT, READ_TIMEOUT, DISCOVERY_TIMEOUT) == (10.0, 120.0, 30.0)
    async with VeniceClient("k", "http://127.0.0.1:9/v1") as client:
        limits = client._openai.timeout
        assert (limits.connect, limits.read) == (10.0, 120.0)
        assert client.discovery.timeout == 30.0


async def test_discovery_from_a_server_that_accepts_but_never_answers_gives_up() -> None:
    with socket.socket() as silent:  # listens (the kernel accepts connections) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        async with VeniceClient("k", url, discovery_timeout=0.3) as client:
            with pytest.raises(ModelError) as caught:
                await client.discovery.resolve_model(None)
    assert caught.value.message == (
        "127.0.0.1 did not answer the request for its models within 0.3 s; check VENICE_BASE_URL, or pass --model"
    )
