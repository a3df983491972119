"""`venice-agent serve` at its edges, against a real process: who may ask (Host, Origin), what a
body must be (JSON, sent as JSON, not nested past reason). Every refusal here is checked to
cost no call."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx2

from cli_support import COMMAND
from serve_support import offline_env, served
from venice_terminal_agent.cli.serve_cmd import hosts_for

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
