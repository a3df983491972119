"""`venice-agent serve` at its edges, against a real process: who may ask (Host, Origin), what a
body must be (JSON, sent as JSON, not nested past reason), and connections that never finish
a request (raw sockets). Every refusal here is checked to cost no call."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path
from typing import Any

import httpx2

from cli_support import COMMAND
from serve_support import offline_env, served
from venice_terminal_agent.fronts.listening import hosts_for, listening_socket
from venice_terminal_agent.fronts.serve.server import guarded_http

JSON = {"Content-Type": "application/json"}


async def calls_left(http: httpx2.AsyncClient, chat: str) -> int:
    return (await http.get(f"/v1/chats/{chat}")).json()["calls_left"]


def assert_one_line(response: httpx2.Response, status: int) -> str:
    assert response.status_code == status, response.text
    message = response.json()["error"]
    assert message and "\n" not in message
    return message


async def test_a_host_it_does_not_listen_as_is_refused_before_any_work(tmp_path: Path) -> None:
    """DNS rebinding: a page whose name now points at 127.0.0.1 sends its own name as Host."""
    (tmp_path / "secret.txt").write_text("the user's secret")
    args = ("--offline", "--store", str(tmp_path / "bot.db"), "--root", str(tmp_path))
    async with served(tmp_path, *args, "--allowed-host", "bot.example") as server:
        port = server.url.rsplit(":", 1)[1]
        async with httpx2.AsyncClient(base_url=server.url) as http:
            rebound = {"Host": f"rebind.attacker.example:{port}"}
            refused = [
                await http.post(
                    "/v1/chats/a/messages", json={"text": "read_file path=secret.txt"}, headers=rebound
                ),
                await http.get("/v1/chats/a", headers=rebound),
                await http.get("/healthz", headers=rebound),
                await http.get("/", headers=rebound),
                await http.get("/healthz", headers={"Host": f"localhost:{int(port) + 1}"}),  # not its port
                await http.get("/healthz", headers={"Host": "127.0.0.1"}),  # port 80: not its port
            ]
            for response in refused:
                assert_one_line(response, 421)
                assert "secret" not in response.text
            assert refused[0].json()["error"] == (
                f"this server does not answer to the host 'rebind.attacker.example:{port}' "
                "(start it with --allowed-host rebind.attacker.example to accept that name)"
            )
            for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}",
                         "bot.example", f"bot.example:{port}", "bot.example:443"):  # fmt: skip
                assert (await http.get("/healthz", headers={"Host": host})).status_code == 200, host
            assert await calls_left(http, "a") == 5
            assert (await http.get("/v1/chats/a")).json()["exchanges"] == []


def test_on_another_address_it_answers_to_that_address_and_on_every_address_to_any() -> None:
    """With tokens it may listen beyond loopback: the tokens guard it, and the Host rule still
    keeps rebound DNS names out (an IP address cannot be rebound)."""
    one = hosts_for("192.168.1.5", 8080, [])
    assert one.allows("192.168.1.5:8080") and not one.allows("localhost:8080")
    assert not one.allows("192.168.1.6:8080") and not one.allows("bot.example:8080")
    every = hosts_for("0.0.0.0", 8080, ["bot.example"])
    for host in ("localhost:8080", "127.0.0.1:8080", "10.0.0.7:8080", "[fe80::1]:8080", "bot.example:8443"):
        assert every.allows(host), host
    assert not every.allows("10.0.0.7:8081") and not every.allows("rebind.attacker.example:8080")
    assert hosts_for("::", 8080, []).allows("[::1]:8080")
    assert hosts_for("127.0.0.2", 8080, []).allows("127.0.0.2:8080")


def test_an_allowed_host_that_is_no_host_name_is_refused_at_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            COMMAND,
            "serve",
            "--offline",
            "--store",
            str(tmp_path / "bot.db"),
            "--allowed-host",
            "https://bot.example/",
        ],
        env=offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "venice-agent serve: --allowed-host 'https://bot.example/' is not a host name (NAME or NAME:PORT, "
        "e.g. bot.example.com)",
    )


async def test_a_state_changing_request_from_another_origin_or_not_sent_as_json_is_refused(
    tmp_path: Path,
) -> None:
    """A browser sends a cross-site form or a text/plain fetch without asking first (no CORS
    preflight); only a JSON body from the server's own origin is a message."""
    args = ("--offline", "--store", str(tmp_path / "bot.db"), "--root", str(tmp_path))
    async with served(tmp_path, *args, "--allowed-host", "bot.example") as server:
        port = server.url.rsplit(":", 1)[1]
        body = b'{"text": "list_files path=."}'
        async with httpx2.AsyncClient(base_url=server.url) as http:

            async def post(headers: dict[str, str]) -> httpx2.Response:
                return await http.post("/v1/chats/a/messages", content=body, headers=headers)

            for origin in ("http://evil.example", f"http://127.0.0.1:{int(port) + 1}", "null",
                           f"http://localhost:{port}"):  # fmt: skip  # localhost is not 127.0.0.1's origin
                message = assert_one_line(await post({**JSON, "Origin": origin}), 403)
            assert message == (
                f"a request from the origin 'http://localhost:{port}' is refused: only this server's "
                "own page may send one"
            )
            for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
                message = assert_one_line(await post({"Content-Type": content_type}), 415)
            assert message == "the body must be sent as 'Content-Type: application/json'"
            assert_one_line(await post({}), 415)
            assert await calls_left(http, "a") == 5

            own = await post({"Content-Type": "application/json; charset=utf-8", "Origin": server.url})
            assert own.status_code == 200 and own.json()["left"] == 4
            behind_a_proxy = await post(
                {**JSON, "Origin": "https://bot.example", "Host": f"127.0.0.1:{port}"}
            )  # a proxy in front that names the server by its own address: an allowed host's page
            assert behind_a_proxy.status_code == 200, behind_a_proxy.text
            assert await calls_left(http, "a") == 4  # the same message again: free


async def test_a_deeply_nested_body_gets_the_one_line_400_of_any_malformed_body(tmp_path: Path) -> None:
    args = ("--offline", "--store", str(tmp_path / "bot.db"), "--root", str(tmp_path))
    async with served(tmp_path, *args) as server, httpx2.AsyncClient(base_url=server.url) as http:
        deep = b'{"text": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
        assert len(deep) < 32 * 1024
        message = assert_one_line(await http.post("/v1/chats/a/messages", content=deep, headers=JSON), 400)
        assert message == "the body is not JSON: nested too deeply"
        # Deep nesting inside the text, as a command's arguments: refused by the command parser
        # as any unreadable arguments are, before a call is reserved. 150 levels parse in Python
        # but could not be written into the receipt and the store (about 1,000 is the end).
        for nested in (
            "page " + '{"id": ' + "[" * 5_000 + "]" * 5_000 + "}",
            "page id=" + "[" * 150 + "]" * 150,
            "page " + '{"id": ' + "[" * 150 + "]" * 150 + "}",
        ):
            reply = await http.post("/v1/chats/a/messages", json={"text": nested})
            assert reply.status_code == 200, reply.text
            assert reply.json()["text"].startswith("page: could not read the arguments (nested too deeply)")
        assert await calls_left(http, "a") == 5


HEAD = b"GET /healthz HTTP/1.1\r\nHost: {host}\r\n"


async def test_a_connection_that_sends_no_whole_request_head_is_closed(tmp_path: Path) -> None:
    """Slowloris: connections that never finish a request head used to be kept forever (on a
    connection that already had a reply, uvicorn's keep-alive timeout stops once bytes come);
    a body that stops halfway gets 408 and the connection is closed."""
    async with served(tmp_path, "--offline", "--store", str(tmp_path / "bot.db")) as server:
        host = server.url.removeprefix("http://")
        address, port = host.split(":")
        head = HEAD.replace(b"{host}", host.encode())
        post = f"POST /v1/chats/a/messages HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        stalls = {
            "nothing": b"",
            "half a head": head + b"X-Slow: ",
            "a reply, then half a head": head + b"\r\n",
            "a head, then half its body": (post + "Content-Length: 30\r\n\r\n").encode() + b'{"text": "li',
        }
        streams = {}
        for name, sent in stalls.items():
            reader, writer = await asyncio.open_connection(address, int(port))
            writer.write(sent)
            if name.startswith("a reply"):
                assert (await reader.readuntil(b'{"ok":true}')).startswith(b"HTTP/1.1 200 OK")
                writer.write(b"GET /heal")
            await writer.drain()
            streams[name] = reader, writer
        async with asyncio.timeout(60):  # the server closes them on its own (a few seconds)
            for name, (reader, writer) in streams.items():
                received = await reader.read()  # read() returns once the server closed
                if name.endswith("half its body"):
                    assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), received
                    assert received.endswith(b'{"error":"the request body did not arrive within 10 s"}')
                else:
                    assert received == b"", name
                writer.close()
        async with httpx2.AsyncClient(base_url=server.url) as http:
            assert (await http.get("/healthz")).status_code == 200


async def test_stalled_connections_past_the_descriptor_limit_leave_room_for_a_health_check(
    tmp_path: Path,
) -> None:
    """With a soft limit of 64 descriptors (hard 300) and 400 connections sending nothing, a
    health check is still answered: serve raises its soft limit to the hard one and keeps its
    connections under it, a new one closing the oldest still waiting for its request head."""
    args = ("--offline", "--store", str(tmp_path / "bot.db"))
    async with served(tmp_path, *args, nofile=(64, 300)) as server:
        address, port = server.url.removeprefix("http://").split(":")
        stalled = []
        try:
            for _ in range(400):
                connection = socket.create_connection((address, int(port)))
                stalled.append(connection)
            async with httpx2.AsyncClient(base_url=server.url, timeout=30) as http:
                assert (await http.get("/healthz")).json() == {"ok": True}
        finally:
            for connection in stalled:
                connection.close()
        limits = Path(f"/proc/{server.process.pid}/limits").read_text()  # noqa: ASYNC240 (procfs)
        files = [line.split()[3:5] for line in limits.splitlines() if line.startswith("Max open files")]
        assert files == [["300", "300"]]  # the soft limit raised to the hard one


async def test_past_the_cap_a_new_connection_closes_the_oldest_one_waiting_for_its_head() -> None:
    """serve's HTTP protocol in this process, with a cap of 3 connections and a head timeout
    too long to matter: which connection goes is decided by the cap alone."""
    import uvicorn

    held, release = asyncio.Event(), asyncio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["path"] == "/hold":
            held.set()
            await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    async def request(path: str) -> asyncio.StreamReader:
        reader, writer = await asyncio.open_connection(address, port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        writers.append(writer)  # kept: a writer that is collected closes its connection
        return reader

    async def stalled() -> socket.socket:
        connection = socket.socket()
        connection.setblocking(False)
        await loop.sock_connect(connection, (address, port))
        return connection

    def still_open(connection: socket.socket) -> bool:
        try:
            return connection.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:  # nothing to read, and no end either
            return True

    async def run(cap: int) -> tuple[uvicorn.Server, asyncio.Task[None]]:
        config = uvicorn.Config(app, http=guarded_http(3600, cap), log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        return server, asyncio.create_task(server.serve(sockets=[sock]))

    loop = asyncio.get_running_loop()
    sock = listening_socket("127.0.0.1", 0)
    address, port = sock.getsockname()[:2]
    waiting: list[socket.socket] = []
    writers: list[asyncio.StreamWriter] = []
    server, task = await run(3)
    try:
        async with asyncio.timeout(30):
            waiting = [await stalled() for _ in range(3)]
            reader = await request("/")  # the fourth: the oldest waiting one makes room
            assert (await reader.read(1024)).startswith(b"HTTP/1.1 200 OK")
            assert await loop.sock_recv(waiting[0], 1) == b""  # closed by the server
            assert still_open(waiting[1]) and still_open(waiting[2])
            await request("/")  # the keep-alive one above waits since its reply: newer than these
            assert await loop.sock_recv(waiting[1], 1) == b""
            assert still_open(waiting[2])
    finally:
        server.should_exit = True
        await task
        for connection in waiting:
            connection.close()

    sock = listening_socket("127.0.0.1", 0)
    address, port = sock.getsockname()[:2]
    server, task = await run(1)
    try:
        async with asyncio.timeout(30):
            busy = await request("/hold")
            await held.wait()  # its one connection is busy with a request: a new one is told so
            refused = await request("/")
            answer = await refused.read()
            assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
            assert answer.endswith(
                b'{"error": "the server has too many open connections; try again in a moment"}'
            )
            release.set()
            assert (await busy.read(1024)).startswith(b"HTTP/1.1 200 OK")
    finally:
        server.should_exit = True
        await task
        for writer in writers:
            writer.close()
