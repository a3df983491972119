"""The model client over TLS, on a real loopback server with a self-signed certificate: the
certificate is checked (the TLS context is made only when an https:// server is dialled, so
that plain http:// servers start faster, but it is the verifying one), and the environment's
SSL_CERT_FILE is honoured as before."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from venice_terminal_agent.model import ModelError, RetryPolicy, VeniceClient

BODY = json.dumps({"data": [{"id": "tls-model"}]}).encode()


def certificate(folder: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (apt-get install -y openssl)")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@asynccontextmanager
async def tls_server(cert: Path, key: Path) -> AsyncIterator[str]:
    """Answers every request with one model listing, over TLS."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (await reader.readuntil(b"\r\n\r\n")) != b"":
                head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(BODY)}\r\n\r\n"
                writer.write(head.encode() + BODY)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass  # the client hung up, or refused our certificate
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    async with server:
        yield f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/api/v1"


async def no_wait(seconds: float) -> None:
    pass


async def test_a_certificate_nobody_trusts_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    async with tls_server(*certificate(tmp_path)) as url:
        async with VeniceClient("k", url, retry=RetryPolicy(attempts=1, sleep=no_wait)) as client:
            with pytest.raises(ModelError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.discovery.resolve_model(None)


async def test_a_certificate_trusted_through_ssl_cert_file_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    async with tls_server(cert, key) as url:
        async with VeniceClient("k", url) as client:
            assert await client.discovery.resolve_model(None) == "tls-model"
