"""`serve` at its edges: a client's broken text, replies that fail on our side, SIGTERM, health.

Every failure here is ours, not the client's: none of them may spend a call that did not run.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest

from cli_support import COMMAND, clean_env, fake_venice, mcp_config
from serve_support import redis_server, served
from test_serve import JSON, SSE, events_of
from venice_terminal_agent.store.sqlite import Store


@asynccontextmanager
async def store_spec(kind: str, folder: Path) -> AsyncIterator[str]:
    """A real store for `serve --store`: an SQLite file, or a redis-server on a loopback port."""
    if kind == "sqlite":
        yield str(folder / "bot.db")
        return
    async with redis_server(folder / "redis") as redis:
        yield redis.url


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_lone_surrogates_from_a_client_are_repaired_and_cost_only_the_calls_that_ran(
    tmp_path: Path, kind: str
) -> None:
    (tmp_path / "\ufffd.txt").write_text("a file named by a repaired character")
    async with (
        store_spec(kind, tmp_path) as spec,
        served(tmp_path, "--offline", "--store", spec, "--root", str(tmp_path)) as server,
        httpx2.AsyncClient(base_url=server.url) as http,
    ):
        # JSON may escape half of a pair alone; Python reads it as a lone surrogate.
        plain = await http.post(
            "/v1/chats/s/messages", content=b'{"text": "read_file path=\\ud800.txt"}', headers=JSON
        )
        assert plain.status_code == 200, plain.text
        assert plain.json()["text"].startswith("a file named by a repaired character\n")
        assert plain.json()["left"] == 4

        streamed = await http.post(
            "/v1/chats/s/messages",
            content=b'{"text": "read_file path=\\udfff.txt "}',
            headers={**SSE, **JSON},
        )
        assert streamed.status_code == 200
        events = events_of(streamed.text)  # the whole stream, to its reply
        assert [name for name, _ in events] == ["tool_started", "tool_finished", "reply"]
        assert events[0][1]["arguments"] == {"path": "\ufffd.txt"}
        assert events[2][1]["left"] == 3

        chat = (await http.get("/v1/chats/s")).json()
        assert chat["calls_left"] == 3
        assert [exchange["text"] for exchange in chat["exchanges"]] == [
            "read_file path=\ufffd.txt",
            "read_file path=\ufffd.txt ",
        ]


async def test_a_tool_result_with_a_lone_surrogate_is_repaired_too(tmp_path: Path) -> None:
    """A file name that is not UTF-8 comes from the system as a lone surrogate (\\udcff)."""
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / os.fsdecode(b"\xff.txt")).write_text("x")
    args = ("--offline", "--store", str(tmp_path / "bot.db"), "--root", str(folder))
    async with served(tmp_path, *args) as server, httpx2.AsyncClient(base_url=server.url) as http:
        plain = await http.post("/v1/chats/t/messages", json={"text": "list_files path=."})
        assert plain.status_code == 200, plain.text
        assert "\ufffd.txt" in plain.json()["text"] and plain.json()["left"] == 4
        streamed = await http.post("/v1/chats/t/messages", json={"text": "list_files path=. "}, headers=SSE)
        assert [name for name, _ in events_of(streamed.text)][-1] == "reply"
        assert (await http.get("/v1/chats/t")).json()["calls_left"] == 3


async def test_a_reply_stopped_by_its_timeout_spends_only_the_call_that_ran(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("notes")
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": ["Looking"], "hang": True},
    ]
    config = mcp_config(tmp_path, time_server=False)
    with fake_venice(script, tmp_path) as fake:
        args = ("--store", str(tmp_path / "bot.db"), "--mcp-config", str(config), "--root", str(tmp_path))
        async with (
            served(tmp_path, *args, "--run-timeout", "1", env=clean_env(tmp_path, fake.base_url)) as server,
            httpx2.AsyncClient(base_url=server.url) as http,
        ):
            reply = (await http.post("/v1/chats/k/messages", json={"text": "read my notes"})).json()
            assert reply["status"] == "stopped: cancelled · 1 call · 4 left this hour"
            assert (await http.get("/v1/chats/k")).json()["calls_left"] == 4


async def test_a_store_down_when_a_reply_ends_settles_at_the_calls_that_ran_once_it_is_back(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("notes")
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "done", "delay": 2},  # meanwhile the test stops Redis
    ]
    config = mcp_config(tmp_path, time_server=False)
    with fake_venice(script, tmp_path) as fake:
        async with redis_server(tmp_path / "redis") as redis:
            args = ("--store", redis.url, "--mcp-config", str(config), "--root", str(tmp_path))
            async with (
                served(tmp_path, *args, env=clean_env(tmp_path, fake.base_url)) as server,
                httpx2.AsyncClient(base_url=server.url) as http,
            ):
                async with http.stream(
                    "POST", "/v1/chats/k/messages", json={"text": "read my notes"}, headers=SSE
                ) as live:
                    lines = live.aiter_lines()
                    async for line in lines:
                        if line == "event: tool_finished":
                            break  # the call ran: its reply is not recorded yet
                    redis.process.terminate()
                    await redis.process.wait()
                    rest = "\n".join([line async for line in lines])
                assert events_of(rest)[-1][0] == "error" and events_of(rest)[-1][1]["status"] == 503
                async with redis_server(tmp_path / "redis", port=redis.port):
                    chat = (await http.get("/v1/chats/k")).json()
                    assert chat["calls_left"] == 4  # held for the run until now: the one call that ran


async def test_sigterm_lets_running_replies_finish_cancels_the_rest_settled_and_exits_0(
    tmp_path: Path,
) -> None:
    script = [
        {"text": ["Thinking"], "hang": True},  # never ends: cancelled once the grace is over
        {"text": ["Quick ", "answer."], "chunk_delay": 1},  # ends within the grace
    ]
    config = mcp_config(tmp_path, time_server=False)
    with fake_venice(script, tmp_path) as fake:
        args = ("--store", str(tmp_path / "bot.db"), "--mcp-config", str(config))
        async with (
            served(tmp_path, *args, env=clean_env(tmp_path, fake.base_url)) as server,
            httpx2.AsyncClient(base_url=server.url, timeout=60) as http,
            httpx2.AsyncClient(
                base_url=server.url, limits=httpx2.Limits(max_keepalive_connections=0)
            ) as probe,
            http.stream("POST", "/v1/chats/slow/messages", json={"text": "think"}, headers=SSE) as slow,
            http.stream("POST", "/v1/chats/quick/messages", json={"text": "hi"}, headers=SSE) as quick,
        ):
            slow_lines, quick_lines = slow.aiter_lines(), quick.aiter_lines()
            for lines in (slow_lines, quick_lines):
                async for line in lines:
                    if line == "event: text":
                        break  # under way
            server.process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                while True:  # each try is a round trip: it stops taking new requests at once
                    try:
                        await probe.get("/healthz")
                    except (httpx2.ConnectError, httpx2.RemoteProtocolError):  # refused, or closed unanswered
                        break
            quick_events = events_of("\n".join([line async for line in quick_lines]))
            slow_events = events_of("\n".join([line async for line in slow_lines]))
            assert quick_events[-1][1]["status"] == "stopped: answered · 0 calls · 5 left this hour"
            assert slow_events[-1][0] == "reply"
            assert slow_events[-1][1]["status"] == "stopped: cancelled · 0 calls · 5 left this hour"
            assert await server.process.wait() == 0
    said = (await server.rest).decode()
    assert "ERROR" not in said and "Traceback" not in said, said
    async with Store(tmp_path / "bot.db") as store:
        assert await store.calls_used("slow", now=time.time(), window=3600) == 0  # settled, not held
        assert [m["reply"] for m in await store.history("slow")] == [
            "cancelled before the answer was finished"
        ]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("started", ["in the foreground", "as a background job"])
async def test_an_idle_serve_stops_at_once_with_status_0(
    tmp_path: Path, stop: signal.Signals, started: str
) -> None:
    """A stop sent the moment it says it listens stops it. Started as a background job (SIGINT
    ignored until the server takes it over), a SIGINT that came before its handlers were in
    place was lost, and it served on: the line is said only once they are."""
    background = started == "as a background job"
    async with served(
        tmp_path, "--offline", "--store", str(tmp_path / "bot.db"), sigint_ignored=background
    ) as server:
        server.process.send_signal(stop)
        async with asyncio.timeout(30):  # a lost stop fails here, not at CI's own limit
            assert await server.process.wait() == 0
    assert (await server.rest).decode() == ""


@pytest.mark.parametrize("pinned", [False, True])
def test_an_unreachable_model_server_stops_the_start_pinned_model_or_not(
    tmp_path: Path, pinned: bool
) -> None:
    config = mcp_config(tmp_path, time_server=False)
    env = clean_env(tmp_path, "http://127.0.0.1:9", **({"VENICE_MODEL": "some-model"} if pinned else {}))
    done = subprocess.run(
        [COMMAND, "serve", "--port", "0", "--store", str(tmp_path / "bot.db"), "--mcp-config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 7, done.stderr
    assert done.stderr.strip().splitlines() == [
        "venice-agent serve: cannot list models: cannot reach the model server at http://127.0.0.1:9: "
        "All connection attempts failed"
    ]


async def test_a_pinned_model_on_a_server_that_answers_starts(tmp_path: Path) -> None:
    config = mcp_config(tmp_path, time_server=False)
    with fake_venice([], tmp_path) as fake:
        env = clean_env(tmp_path, fake.base_url, VENICE_MODEL="fake-model")
        args = ("--store", str(tmp_path / "bot.db"), "--mcp-config", str(config))
        async with served(tmp_path, *args, env=env) as server:
            assert "planned by the model fake-model" in server.line


async def test_healthz_is_503_with_the_reason_while_the_store_is_damaged(tmp_path: Path) -> None:
    async with (
        served(tmp_path, "--offline", "--store", str(tmp_path / "bot.db")) as server,
        httpx2.AsyncClient(base_url=server.url) as http,
    ):
        assert (await http.post("/v1/chats/h/messages", json={"text": "help"})).status_code == 200
        assert (await http.get("/healthz")).json() == {"ok": True}
        (tmp_path / "bot.db").write_bytes(b"not a database any more " * 400)
        health = await http.get("/healthz")
        assert health.status_code == 503
        reason = health.json()["error"]
        assert reason.startswith(f"the store is unavailable: {tmp_path / 'bot.db'}") and "\n" not in reason


def child_running(parent: int, script: str) -> int:
    """The pid of `parent`'s child process whose command line names `script`."""
    for task in Path(f"/proc/{parent}/task").iterdir():
        for child in (task / "children").read_text().split():
            if script in Path(f"/proc/{child}/cmdline").read_bytes().decode(errors="replace"):
                return int(child)
    raise AssertionError(f"no child of {parent} runs {script}")


async def test_healthz_is_503_naming_an_mcp_server_or_the_model_server_that_went_down(tmp_path: Path) -> None:
    config = mcp_config(tmp_path, time_server=False)  # the shop, a stdio server
    with fake_venice([], tmp_path) as fake:
        args = ("--store", str(tmp_path / "bot.db"), "--mcp-config", str(config))
        async with (
            served(tmp_path, *args, env=clean_env(tmp_path, fake.base_url)) as server,
            httpx2.AsyncClient(base_url=server.url) as http,
        ):
            assert (await http.get("/healthz")).json() == {"ok": True}
            os.kill(child_running(server.process.pid, "cli_paid_server.py"), signal.SIGKILL)
            async with asyncio.timeout(30):  # its end is noticed on the server's own time
                while (health := await http.get("/healthz")).status_code == 200:
                    pass  # each look is a round trip to the server
            assert health.status_code == 503
            assert health.json()["error"].startswith("the MCP server shop is down: ")

            fake.process.terminate()
            fake.process.wait(timeout=10)
            reason = (await http.get("/healthz")).json()["error"]
            assert (
                "; the model server is down: cannot list models: cannot reach the model server at " in reason
            )
            assert "\n" not in reason


async def test_healthz_on_a_stdio_server_prints_no_python_warning(tmp_path: Path) -> None:
    config = mcp_config(tmp_path, time_server=False)  # the shop, a stdio server on the legacy protocol
    with fake_venice([], tmp_path) as fake:
        args = ("--store", str(tmp_path / "bot.db"), "--mcp-config", str(config))
        async with served(tmp_path, *args, env=clean_env(tmp_path, fake.base_url)) as server:
            async with httpx2.AsyncClient(base_url=server.url) as http:
                assert (await http.get("/healthz")).json() == {"ok": True}
                assert (await http.get("/healthz")).json() == {"ok": True}
            server.process.send_signal(signal.SIGTERM)
            said = (await server.rest).decode()
    assert "Warning" not in said and "site-packages" not in said, said
