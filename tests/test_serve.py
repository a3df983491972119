"""`venice-agent serve` over real HTTP on loopback: the API, streaming, tokens, refusals."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import httpx2

from cli_support import COMMAND, clean_env, fake_venice, mcp_config
from serve_support import offline_env, served
from venice_terminal_agent.fronts.listening import listening_socket

SSE = {"Accept": "text/event-stream"}
JSON = {"Content-Type": "application/json"}


def events_of(body: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for block in body.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            found.append((lines["event"], json.loads(lines["data"])))
    return found


async def test_json_and_streamed_replies_repeats_and_refusals_that_cost_nothing(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello from a file")
    async with served(
        tmp_path, "--offline", "--store", str(tmp_path / "bot.db"), "--root", str(tmp_path)
    ) as server:
        async with httpx2.AsyncClient(base_url=server.url) as http:
            assert (await http.get("/healthz")).json() == {"ok": True}
            first = await http.post("/v1/chats/a/messages", json={"text": "read_file path=notes.txt"})
            assert first.status_code == 200
            reply = first.json()
            assert reply["text"].startswith("hello from a file\n")
            assert reply["status"] == "stopped: answered · 1 call · 4 left this hour"
            assert reply["receipt"]["calls"] == 1 and reply["receipt"]["stopped_because"] == "answered"

            streamed = await http.post(
                "/v1/chats/a/messages", json={"text": "list_files path=."}, headers=SSE
            )
            assert streamed.headers["content-type"].startswith("text/event-stream")
            events = events_of(streamed.text)
            assert [name for name, _ in events] == ["tool_started", "tool_finished", "reply"]
            assert events[0][1] == {"tool": "list_files", "arguments": {"path": "."}}
            assert events[2][1]["left"] == 3

            again = (await http.post("/v1/chats/a/messages", json={"text": "list_files path=."})).json()
            assert again["repeated"] is True and again["left"] == 3 and again["receipt"] is None

            async def post(body: bytes) -> httpx2.Response:
                return await http.post("/v1/chats/a/messages", content=body, headers=JSON)

            refusals = [
                (await post(b'{"text": "' + b"x" * 33_000 + b'"}'), 413),
                (await post(b'{"text": "list_files'), 400),
                (await http.post("/v1/chats/a/messages", json=["list_files"]), 400),
                (await post(b"\xff\xfe"), 400),
                (await http.get("/v1/chats/a/messages"), 405),
                (await http.get("/v1/nothing/here"), 404),
                (await http.post("/v1/chats/a", json={"text": "list_files"}), 405),
            ]
            for response, status in refusals:
                assert response.status_code == status, response.text
                message = response.json()["error"]
                assert message and "\n" not in message
            assert refusals[1][0].json()["error"].startswith("the body is not JSON: ")
            assert refusals[5][0].json()["error"] == "no such route: GET /v1/nothing/here"

            chat = (await http.get("/v1/chats/a")).json()
            assert chat["calls_left"] == 3  # none of the refusals cost a call
            assert [exchange["kind"] for exchange in chat["exchanges"]] == ["run", "run", "repeat"]
            assert chat["exchanges"][0]["text"] == "read_file path=notes.txt"


async def test_tokens_give_each_user_their_own_chats(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# user token\nalice a-secret\nbob b-secret\n")
    args = ("--offline", "--store", str(tmp_path / "bot.db"), "--token-file", str(tokens))
    async with served(tmp_path, *args) as server:
        assert "(2 users with tokens)" in server.line
        alice = httpx2.AsyncClient(base_url=server.url, headers={"Authorization": "Bearer a-secret"})
        bob = httpx2.AsyncClient(base_url=server.url, headers={"Authorization": "Bearer b-secret"})
        anonymous = httpx2.AsyncClient(base_url=server.url)
        async with alice, bob, anonymous:
            refused = await anonymous.post("/v1/chats/plans/messages", json={"text": "list_files"})
            assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
            wrong = await anonymous.get("/v1/chats/plans", headers={"Authorization": "Bearer a-secre"})
            assert wrong.status_code == 401
            assert (
                await alice.post("/v1/chats/plans/messages", json={"text": "list_files"})
            ).status_code == 200
            for response in (
                await bob.post("/v1/chats/plans/messages", json={"text": "list_files path=src"}),
                await bob.get("/v1/chats/plans"),
            ):
                assert response.status_code == 404
                assert response.json() == {"error": "no chat 'plans'"}
            mine = (await alice.get("/v1/chats/plans")).json()
            assert mine["calls_left"] == 4 and len(mine["exchanges"]) == 1  # bob's tries cost nothing
            assert (await bob.get("/v1/chats/absent")).status_code == 404
            assert (await bob.post("/v1/chats/own/messages", json={"text": "help"})).status_code == 200


def test_without_tokens_it_refuses_to_listen_beyond_loopback(tmp_path: Path) -> None:
    done = subprocess.run(
        [COMMAND, "serve", "--host", "0.0.0.0", "--offline", "--store", str(tmp_path / "bot.db")],
        env=offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "venice-agent serve: without --token-file the API serves loopback only; refusing to listen on "
        "0.0.0.0 (give --token-file, or --host 127.0.0.1)"
    ]
    assert not (tmp_path / "bot.db").exists()


async def test_the_model_streams_paid_tools_are_left_out_and_a_disconnect_cancels(tmp_path: Path) -> None:
    script = [{"text": ["Hello ", "from ", "the model."]}, {"text": ["Thinking"], "hang": True}]
    config = mcp_config(tmp_path, time_server=False)  # the shop: tools that are not read-only
    with fake_venice(script, tmp_path) as fake:
        env = clean_env(tmp_path, fake.base_url)
        args = ("--store", str(tmp_path / "bot.db"), "--mcp-config", str(config))
        async with (
            served(tmp_path, *args, env=env) as server,
            httpx2.AsyncClient(base_url=server.url) as http,
        ):
            assert server.line.startswith("venice-agent serve: http://127.0.0.1:")
            assert "(loopback only, no tokens)" in server.line
            assert server.line.endswith("paid tools left out (4; start with --yes to offer them)")
            streamed = await http.post("/v1/chats/m/messages", json={"text": "hi"}, headers=SSE)
            events = events_of(streamed.text)
            assert [data["text"] for name, data in events if name == "text"] == [
                "Hello ",
                "from ",
                "the model.",
            ]
            assert (
                events[-1][1]["text"]
                == "Hello from the model.\nstopped: answered · 0 calls · 5 left this hour"
            )
            offered = {tool["function"]["name"] for tool in fake.chat_bodies()[0]["tools"]}
            assert "read_file" in offered and not offered & {"charge", "refund", "wait", "ansi"}

            async with http.stream(
                "POST", "/v1/chats/m/messages", json={"text": "think"}, headers=SSE
            ) as live:
                async for line in live.aiter_lines():
                    if line.startswith("event: text"):
                        break  # the run is under way: hang up
            async with asyncio.timeout(30):  # the server records the cancelled run on its own time
                while len(exchanges := (await http.get("/v1/chats/m")).json()["exchanges"]) < 2:
                    pass  # each look is a round trip to the server: no sleep needed
            assert exchanges[1]["reply"] == "cancelled before the answer was finished"


async def test_each_connection_sends_at_once_without_waiting_for_acks() -> None:
    """The service's socket gives its connections TCP_NODELAY: without it, a reply that uvicorn
    writes as head then body waits for the client's delayed ACK, about 40 ms every reply."""
    loop = asyncio.get_running_loop()
    nodelay: asyncio.Future[int] = loop.create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            connection = transport.get_extra_info("socket")
            nodelay.set_result(connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    server = await loop.create_server(Probe, sock=listening_socket("127.0.0.1", 0))
    async with server:
        _, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
        assert await nodelay != 0
        writer.close()


async def test_without_yes_a_call_that_needs_one_is_refused_by_policy_and_the_model_told_why(
    tmp_path: Path,
) -> None:
    # After a file is read, a server's tool needs a yes (local data); serve asks nobody, so
    # without --yes it is refused by its policy, the model told so, and the receipt says it.
    (tmp_path / "notes.txt").write_text("private")
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "Read it; the time is not known."},
    ]
    config = mcp_config(tmp_path, paid_server=False)
    with fake_venice(script, tmp_path) as fake:
        args = ("--store", str(tmp_path / "bot.db"), "--mcp-config", str(config), "--root", str(tmp_path))
        async with (
            served(tmp_path, *args, env=clean_env(tmp_path, fake.base_url)) as server,
            httpx2.AsyncClient(base_url=server.url, timeout=60) as http,
        ):
            reply = (await http.post("/v1/chats/p/messages", json={"text": "read and time"})).json()
        told = [m["content"] for m in fake.chat_bodies()[2]["messages"] if m["role"] == "tool"][-1]
    assert (
        reply["status"]
        == "stopped: answered · 2 calls proposed: 1 ran, 1 refused by policy · 4 left this hour"
    )
    assert [item["outcome"] for item in reply["receipt"]["proposed"]] == ["ran", "refused_by_policy"]
    assert json.loads(told) == {
        "error": "this call needs the user's yes, and this service asks nobody: "
        "it runs such calls only when started with --yes; it did not run"
    }


async def test_a_secret_the_model_repeats_is_masked_in_the_reply_and_in_the_store(tmp_path: Path) -> None:
    """The service's reader is not the person whose settings hold the key: an answer (or a tool
    result) repeating a secret of the run is masked in the JSON reply and in what the store keeps."""
    key = "venice-key-for-serve-4242"
    with fake_venice([{"text": f"The key is {key}."}], tmp_path) as fake:
        env = clean_env(tmp_path, fake.base_url, VENICE_API_KEY=key)
        store = tmp_path / "bot.db"
        async with (
            served(tmp_path, "--store", str(store), "--no-mcp", env=env) as server,
            httpx2.AsyncClient(base_url=server.url, timeout=60) as http,
        ):
            reply = (await http.post("/v1/chats/k/messages", json={"text": f"is {key} mine?"})).json()
    assert key not in json.dumps(reply) and "The key is ***." in reply["text"]
    assert reply["receipt"]["answer"] == "The key is ***."
    written = files_of(store)
    assert written and b"***" in written[store]
    for path, content in written.items():
        assert key.encode() not in content, path


def files_of(store: Path) -> dict[Path, bytes]:
    """An SQLite store and its journals, each with what it holds."""
    return {path: path.read_bytes() for path in store.parent.glob(store.name + "*")}
