"""The suite's own guards (conftest.py) do what they say."""

from __future__ import annotations

import socket

import pytest

from conftest import NetworkRefused


@pytest.mark.parametrize("address", [("192.0.2.1", 9), ("2001:db8::1", 9, 0, 0)])
def test_a_connection_to_another_machine_fails_the_test(address: tuple) -> None:
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    with (
        socket.socket(family, socket.SOCK_STREAM) as sock,
        pytest.raises(NetworkRefused, match=r"127\.0\.0\.1 only"),
    ):
        sock.connect(address)
    with socket.socket(family, socket.SOCK_STREAM) as sock, pytest.raises(NetworkRefused):
        sock.connect_ex(address)


def test_loopback_is_allowed() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname()[:2], timeout=5):
            pass
