"""`venice-agent mcp`: the agent as an MCP server, driven by the mcp SDK's own client against
the real command (stdio and Streamable HTTP), the fake model server and the paid `shop` server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cli_support import COMMAND, clean_env, fake_venice, http_front, mcp_config

pytestmark = pytest.mark.anyio


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@asynccontextmanager
async def front(
    folder: Path,
    base_url: str,
    *args: str,
    mode: str = "legacy",
    env: dict[str, str] | None = None,
    mcp_servers: bool = True,
    **options: Any,
) -> AsyncIterator[Client]:
    """A client of `venice-agent mcp` over stdio (the SDK spawns the real command); `env` adds
    to its environment. Its MCP servers are mcp-server-time and the paid `shop`, or with
    `mcp_servers=False` none (a question on the built-in tools: each server costs a second or
    two of CPU to start)."""
    env = clean_env(folder, base_url, VENICE_MODEL="fake-model", **(env or {}))
    config = mcp_config(folder, time_server=mcp_servers, paid_server=mcp_servers)
    params = StdioServerParameters(
        command=COMMAND,
        args=["mcp", "--mcp-config", str(config), *args],
        env=env,
        cwd=str(folder),
    )
    # The server's stderr goes to this test's stderr, read now: `stdio_client`'s default is the
    # `sys.stderr` of the moment mcp was imported, which under mutmut is an earlier pytest
    # session's capture, closed since (the clean run after its stats pass failed on it).
    transport = stdio_client(params, errlog=sys.stderr)
    async with Client(transport, mode=mode, read_timeout_seconds=60, **options) as client:  # type: ignore[arg-type]
        yield client


@asynccontextmanager
async def hanging(client: Client, conversation: str) -> AsyncIterator[None]:
    """A question on `conversation` whose reply never ends, asked in the background: the body
    runs once its first round started; the question is cancelled (by the client) after it."""
    started = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    async def ask() -> None:
        await client.call_tool(
            "ask", {"question": "hang", "conversation": conversation}, progress_callback=progress
        )

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        with anyio.fail_after(30):
            await started.wait()
        yield
        group.cancel_scope.cancel()


def text_of(result: mcp.types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_answered_question_comes_back_with_its_receipt_and_progress(tmp_path: Path) -> None:
    seen: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    with fake_venice([call("list_files", path="."), {"text": "Two files."}], tmp_path) as fake:
        async with front(tmp_path, fake.base_url, mcp_servers=False) as client:
            listed = await client.list_tools()
            (tool,) = listed.tools
            assert tool.name == "ask"
            assert tool.output_schema is not None and "receipt" in tool.output_schema["properties"]
            assert set(tool.input_schema["properties"]) >= {"question", "budget", "max_usd", "max_rounds"}
            result = await client.call_tool("ask", {"question": "what is here?"}, progress_callback=progress)
    assert not result.is_error
    assert text_of(result) == "Two files."
    structured = result.structured_content
    assert structured["stopped_because"] == "answered"
    assert structured["receipt"]["stopped_because"] == "answered"
    assert structured["receipt"]["steps"][0]["tool"] == "list_files"
    assert seen[0] == "round 1" and "round 2" in seen
    assert any(message.startswith("→ list_files") for message in seen) and "list_files done" in seen


async def test_a_paid_call_is_approved_by_the_clients_person_through_elicitation(tmp_path: Path) -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: mcp.types.ElicitRequestParams) -> mcp.types.ElicitResult:
        asked.append(params.message)
        return mcp.types.ElicitResult(action="accept", content={"run": True})

    with fake_venice([call("charge", amount=5), {"text": "Charged."}], tmp_path) as fake:
        async with front(tmp_path, fake.base_url, elicitation_callback=elicit) as client:
            result = await client.call_tool("ask", {"question": "charge me 5"})
    assert asked == [
        'Run charge({"amount": 5}) on shop? (it is not known to be free: it may spend money or change things) yes/no'
    ]
    step = result.structured_content["receipt"]["steps"][0]
    assert "charged 5" in step["result"]


async def test_a_paid_call_is_declined_when_the_client_cannot_be_asked(tmp_path: Path) -> None:
    with fake_venice([call("charge", amount=5), {"text": "I could not."}], tmp_path) as fake:
        async with front(tmp_path, fake.base_url) as client:
            result = await client.call_tool("ask", {"question": "charge me 5"})
        bodies = fake.chat_bodies()
    tool_message = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
    assert "there was no one to ask" in tool_message["content"] and "charged" not in tool_message["content"]
    assert (
        "this MCP client cannot be asked (no elicitation), so charge was declined; start the server "
        "with --yes to run paid tools"
    ) in result.structured_content["notes"]
    assert "cannot be asked" in text_of(result)


async def test_a_paid_call_the_clients_person_declines_does_not_run_and_is_noted(tmp_path: Path) -> None:
    asked: list[str] = []
    with fake_venice([call("charge", amount=5), {"text": "Not charged."}], tmp_path) as fake:
        async with front(tmp_path, fake.base_url, elicitation_callback=answering(False, asked)) as client:
            result = await client.call_tool("ask", {"question": "charge me 5"})
    assert len(asked) == 1
    assert outcomes(result) == ["declined"] and result.structured_content["receipt"]["steps"] == []
    assert "the client's person declined charge" in result.structured_content["notes"]


async def test_yes_runs_paid_calls_for_a_client_that_cannot_be_asked(tmp_path: Path) -> None:
    with fake_venice([call("charge", amount=2), {"text": "Charged."}], tmp_path) as fake:
        async with front(tmp_path, fake.base_url, "--yes") as client:
            result = await client.call_tool("ask", {"question": "charge me 2"})
    assert "charged 2" in result.structured_content["receipt"]["steps"][0]["result"]


async def test_a_client_may_lower_the_caps_but_never_raise_them(tmp_path: Path) -> None:
    zones = ("UTC", "Europe/Prague", "Asia/Tokyo")
    script = {"replies": [call("get_current_time", timezone=zone) for zone in zones], "loop": True}
    with fake_venice(script, tmp_path) as fake:
        async with front(tmp_path, fake.base_url, "--budget", "1") as client:
            raised = await client.call_tool("ask", {"question": "list", "budget": 5})
            lowered = await client.call_tool("ask", {"question": "list", "budget": 0})
    assert raised.structured_content["stopped_because"] == "budget"
    assert len(raised.structured_content["receipt"]["steps"]) == 1  # the server's 1, not the client's 5
    assert "budget 5 is above this server's 1: 1 was used" in raised.structured_content["notes"]
    assert lowered.structured_content["stopped_because"] == "budget"
    assert lowered.structured_content["receipt"]["steps"] == []
    assert lowered.structured_content["notes"] == []


async def test_a_conversation_id_continues_the_conversation(tmp_path: Path) -> None:
    with fake_venice([{"text": "One."}, {"text": "Two."}, {"text": "Fresh."}], tmp_path) as fake:
        async with front(tmp_path, fake.base_url, mcp_servers=False) as client:
            await client.call_tool("ask", {"question": "first", "conversation": "c1"})
            await client.call_tool("ask", {"question": "second", "conversation": "c1"})
            await client.call_tool("ask", {"question": "other"})
        bodies = fake.chat_bodies()
    users = [[m["content"] for m in body["messages"] if m["role"] == "user"] for body in bodies]
    assert users == [["first"], ["first", "second"], ["other"]]


async def test_with_sessions_on_a_conversation_survives_a_restart_and_resumes_in_the_terminal(
    tmp_path: Path,
) -> None:
    from cli_support import run_cli

    sessions = {"VENICE_AGENT_SESSIONS": "1"}
    script = [{"text": "One."}, {"text": "Two."}, {"text": "Three."}]
    with fake_venice(script, tmp_path) as fake:
        async with front(tmp_path, fake.base_url, env=sessions, mcp_servers=False) as client:
            first = await client.call_tool("ask", {"question": "first"})
            unknown = await client.call_tool("ask", {"question": "x", "conversation": "ffffffff"})
        conversation = first.structured_content["conversation"]
        assert conversation  # the id of the session it was saved as
        async with front(
            tmp_path, fake.base_url, env=sessions, mcp_servers=False
        ) as client:  # a new server process
            second = await client.call_tool("ask", {"question": "second", "conversation": conversation})
        terminal = run_cli(tmp_path, fake.base_url, "--resume", conversation, "third", **sessions)
        bodies = fake.chat_bodies()
    assert unknown.is_error and "no session 'ffffffff'" in text_of(unknown)
    assert text_of(second).startswith("Two.") and second.structured_content["conversation"] == conversation
    conversation_of = [[(m["role"], m["content"]) for m in body["messages"][1:]] for body in bodies]
    assert conversation_of[1] == [("user", "first"), ("assistant", "One."), ("user", "second")]
    assert terminal.returncode == 0, terminal.stderr
    assert conversation_of[2][-2:] == [("assistant", "Two."), ("user", "third")]
    assert len(conversation_of[2]) == 5


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_cancel_from_the_client_cancels_the_question_and_rolls_it_back(
    tmp_path: Path, mode: str
) -> None:
    script = [{"text": "thinking", "hang": True}, {"text": "After."}]
    with fake_venice(script, tmp_path) as fake:
        async with front(tmp_path, fake.base_url, mode=mode, mcp_servers=False) as client:
            async with hanging(client, "c"):
                pass
            after = await client.call_tool("ask", {"question": "next", "conversation": "c"})
        bodies = fake.chat_bodies()
    assert text_of(after) == "After."
    users = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "user"]
    assert users == ["next"]  # the cancelled question left nothing in the conversation


async def test_over_http_a_question_is_answered_and_a_paid_call_elicited(tmp_path: Path) -> None:
    async def elicit(context: Any, params: mcp.types.ElicitRequestParams) -> mcp.types.ElicitResult:
        return mcp.types.ElicitResult(action="accept", content={"run": True})

    with fake_venice([call("charge", amount=3), {"text": "Done."}], tmp_path) as fake:
        with http_front(tmp_path, fake.base_url) as url:
            async with Client(
                url, mode="legacy", elicitation_callback=elicit, read_timeout_seconds=60
            ) as client:
                result = await client.call_tool("ask", {"question": "charge 3"})
    assert text_of(result) == "Done."
    assert "charged 3" in result.structured_content["receipt"]["steps"][0]["result"]


def answering(yes: bool, asked: list[str]) -> Any:
    """An elicitation callback that answers the consent question yes or no (and notes it)."""

    async def elicit(context: Any, params: mcp.types.ElicitRequestParams) -> mcp.types.ElicitResult:
        asked.append(params.message)
        return mcp.types.ElicitResult(action="accept", content={"run": yes})

    return elicit


def outcomes(result: mcp.types.CallToolResult) -> list[str]:
    return [item["outcome"] for item in result.structured_content["receipt"]["proposed"]]


@pytest.mark.parametrize("yes", [True, False], ids=["yes", "no"])
async def test_over_http_on_2026_07_28_a_paid_call_is_asked_through_the_input_required_round_trip(
    tmp_path: Path, yes: bool
) -> None:
    asked: list[str] = []
    with fake_venice([call("charge", amount=3), {"text": "Done."}], tmp_path) as fake:
        with http_front(tmp_path, fake.base_url) as url:
            async with Client(
                url, mode="2026-07-28", elicitation_callback=answering(yes, asked), read_timeout_seconds=60
            ) as client:
                result = await client.call_tool("ask", {"question": "charge 3"})
        bodies = fake.chat_bodies()
    assert len(asked) == 1 and asked[0].startswith('Run charge({"amount": 3}) on shop?')
    tool_message = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
    if yes:
        assert outcomes(result) == ["ran"]
        assert "charged 3" in result.structured_content["receipt"]["steps"][0]["result"]
    else:
        assert outcomes(result) == ["declined"]
        assert result.structured_content["receipt"]["steps"] == []
        assert "charged" not in tool_message["content"]
        assert "the client's person declined charge" in result.structured_content["notes"]
    assert text_of(result).startswith("Done.")


class Clock:
    """The clock a paused question's deadline waits on: time passes when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleepers: list[tuple[float, asyncio.Future[None]]] = []

    async def sleep(self, seconds: float) -> None:
        woken = asyncio.get_running_loop().create_future()
        self.sleepers.append((self.now + seconds, woken))
        await woken

    async def advance(self, seconds: float) -> None:
        self.now += seconds
        for wake, woken in list(self.sleepers):
            if wake <= self.now:
                self.sleepers.remove((wake, woken))
                woken.set_result(None)
        await asyncio.sleep(0)  # one turn of the loop: the woken sleepers go on before the test


@asynccontextmanager
async def memory_front(
    folder: Path, base_url: str, monkeypatch: pytest.MonkeyPatch, **timing: Any
) -> AsyncIterator[Any]:
    """`venice-agent mcp`'s server in this process (for the SDK's in-memory client), on the
    same settings and MCP servers as the command; `timing` (deadline, sleep) goes to `Front`."""
    from venice_terminal_agent.fronts.mcp_server.mcp_main import FrontOptions, open_front
    from venice_terminal_agent.fronts.settings_load import Flags, load

    for name, value in clean_env(folder, base_url, VENICE_MODEL="fake-model").items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(folder)
    options = FrontOptions(mcp_config=mcp_config(folder))
    settings, servers = load(Flags(mcp_config=options.mcp_config))
    async with open_front(options, settings, servers, **timing) as server:
        yield server


@pytest.mark.parametrize("yes", [True, False], ids=["yes", "no"])
async def test_in_memory_on_2026_07_28_the_answer_resumes_the_paused_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, yes: bool
) -> None:
    asked: list[str] = []
    script = [call("charge", amount=5), call("refund", amount=5), {"text": "Settled."}]
    with fake_venice(script, tmp_path) as fake:
        async with memory_front(tmp_path, fake.base_url, monkeypatch) as server:
            async with Client(
                server, mode="2026-07-28", elicitation_callback=answering(yes, asked)
            ) as client:
                result = await client.call_tool("ask", {"question": "charge 5, then refund it"})
        bodies = fake.chat_bodies()
    # Two paid calls: two rounds trips, one paused question going on after each answer.
    assert [message.split("(")[0] for message in asked] == ["Run charge", "Run refund"]
    assert outcomes(result) == (["ran", "ran"] if yes else ["declined", "declined"])
    assert len(bodies) == 3 and text_of(result).startswith("Settled.")
    users = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "user"]
    assert users == ["charge 5, then refund it"]  # the same question, not a new one per round


async def test_a_retry_that_never_comes_ends_as_declined_after_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp.shared.exceptions import MCPError

    clock = Clock()
    arguments = {"question": "charge me 5"}
    with fake_venice([call("charge", amount=5), {"text": "I could not."}], tmp_path) as fake:
        async with memory_front(
            tmp_path, fake.base_url, monkeypatch, deadline=60, sleep=clock.sleep
        ) as server:
            async with Client(server, mode="2026-07-28", elicitation_callback=answering(True, [])) as client:
                paused = await client.session.call_tool("ask", arguments, allow_input_required=True)
                assert isinstance(paused, mcp.types.InputRequiredResult)
                (request,) = paused.input_requests.values()  # type: ignore[union-attr]
                assert request.params.message.startswith('Run charge({"amount": 5}) on shop?')
                await clock.advance(59)
                assert len(fake.chat_bodies()) == 1  # still waiting for the answer
                await clock.advance(1)
                # The client comes back too late: its yes is not taken, the question's end is told.
                late = await client.session.call_tool(
                    "ask",
                    arguments,
                    request_state=paused.request_state,
                    input_responses={
                        "consent": mcp.types.ElicitResult(action="accept", content={"run": True})
                    },
                    allow_input_required=True,
                )
                with pytest.raises(MCPError, match="not waiting for an answer"):
                    await client.session.call_tool(
                        "ask", arguments, request_state=paused.request_state, allow_input_required=True
                    )
                with pytest.raises(MCPError, match="Invalid or expired requestState"):
                    await client.session.call_tool(
                        "ask", arguments, request_state="v1.forged", allow_input_required=True
                    )
        bodies = fake.chat_bodies()
    assert isinstance(late, mcp.types.CallToolResult)
    assert outcomes(late) == ["declined"] and late.structured_content["receipt"]["steps"] == []
    assert "no answer came within 60 s, so charge was declined" in late.structured_content["notes"]
    tool_message = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
    assert "charged" not in tool_message["content"]


async def test_on_2026_07_28_a_client_without_elicitation_is_not_asked_and_yes_still_approves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [call("charge", amount=4), {"text": "No."}, call("charge", amount=4), {"text": "Yes."}]
    with fake_venice(script, tmp_path) as fake:
        async with memory_front(tmp_path, fake.base_url, monkeypatch) as server:
            async with Client(server, mode="2026-07-28") as client:
                nobody = await client.call_tool("ask", {"question": "charge 4"})
        async with front(tmp_path, fake.base_url, "--yes", mode="2026-07-28") as client:
            approved = await client.call_tool("ask", {"question": "charge 4"})
    assert outcomes(nobody) == ["no_one_to_ask"]
    assert any("cannot be asked" in note for note in nobody.structured_content["notes"])
    assert outcomes(approved) == ["ran"]


async def test_over_http_a_token_is_needed_when_one_is_set(tmp_path: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    with fake_venice([{"text": "Hi."}], tmp_path) as fake:
        with http_front(tmp_path, fake.base_url, VENICE_AGENT_MCP_TOKEN="s3cret") as url:
            async with httpx2.AsyncClient() as plain:
                refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                rebound = await plain.post(
                    url, json={}, headers={"Authorization": "Bearer s3cret", "Host": "evil.example"}
                )
            http = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"})
            async with http:
                async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                    result = await client.call_tool("ask", {"question": "hi"})
    assert refused.status_code == 401
    assert rebound.status_code == 421  # serve's Host rule holds here too
    assert text_of(result) == "Hi."


def test_a_non_loopback_address_without_a_token_is_refused(tmp_path: Path) -> None:
    env = clean_env(tmp_path, "http://127.0.0.1:9", VENICE_MODEL="fake-model")
    env.pop("VENICE_AGENT_MCP_TOKEN", None)
    done = subprocess.run(
        [COMMAND, "mcp", "--http", "--host", "0.0.0.0", "--no-mcp"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "not loopback: give --token" in done.stderr


def test_doctor_says_what_the_mcp_front_would_expose(tmp_path: Path) -> None:
    from cli_support import run_cli

    with fake_venice([], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "doctor", "--no-mcp", MAX_USD="0.5", MAX_ROUNDS="7")
    line = next(line for line in done.stdout.splitlines() if line.startswith("✓ as MCP server"))
    assert "ask(question, budget<=10, max_rounds<=7, max_usd<=0.5, conversation)" in line
    assert (
        "paid calls ask the client's person (elicitation; on 2026-07-28 the input-required round trip)"
        in line
    )


def test_the_money_cap_is_the_servers_or_lower_whatever_the_client_asks() -> None:
    from venice_terminal_agent.fronts.mcp_server.mcp_main import Caps, lowered

    server = Caps(budget=10, max_rounds=12, max_usd=0.5)
    assert lowered(server, None, None, 2.0) == (
        Caps(10, 12, 0.5),
        ["max_usd 2.0 is above this server's 0.5: 0.5 was used"],
    )
    assert lowered(server, None, 3, 0.1) == (Caps(10, 3, 0.1), [])
    assert lowered(server, None, None, None) == (server, [])
    # A server started without a money cap takes the client's.
    assert lowered(Caps(10, 12, None), None, None, 1.0) == (Caps(10, 12, 1.0), [])


@pytest.mark.parametrize(
    ("args", "env", "line"),
    [
        (("--max-usd", "0.50"), {}, "a money cap needs the model's prices"),
        ((), {"VENICE_API_KEY": ""}, "no Venice API key: set VENICE_API_KEY"),
        (("--model", "fake-modle"), {}, "fake-modle is not a model"),
    ],
    ids=["a money cap on a model without prices", "no key", "a model the server does not list"],
)
async def test_a_question_that_cannot_start_is_a_tool_error_saying_why(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], line: str
) -> None:
    with fake_venice([{"text": "never"}], tmp_path) as fake:
        async with front(tmp_path, fake.base_url, *args, env=env, mcp_servers=False) as client:
            for _ in range(2):  # the server is still there for the next one
                result = await client.call_tool("ask", {"question": "hello"})
                assert result.is_error and text_of(result).startswith(line), text_of(result)
        assert fake.chat_bodies() == []


async def test_the_answer_text_is_the_answer_and_the_session_note_is_structured(tmp_path: Path) -> None:
    from venice_terminal_agent import __version__

    with fake_venice([{"text": "One."}], tmp_path) as fake:
        env = {"VENICE_AGENT_SESSIONS": "1"}
        async with front(tmp_path, fake.base_url, env=env, mcp_servers=False) as client:
            assert client.server_info is not None and client.server_info.version == __version__
            result = await client.call_tool("ask", {"question": "first"})
    assert text_of(result) == "One."  # what the caller's model reads: no path, no bookkeeping
    (note,) = result.structured_content["notes"]
    assert "saved after each question in" in note and "sessions.db" in note


async def test_a_conversation_answering_a_question_refuses_a_second_one(tmp_path: Path) -> None:
    """The full id and a unique prefix of it are one conversation: while a question runs in it,
    another is refused at once (it would interleave in the saved session)."""
    script = [{"text": "One."}, {"text": "thinking", "hang": True}, {"text": "Two."}, {"text": "Three."}]
    with fake_venice(script, tmp_path) as fake:
        env = {"VENICE_AGENT_SESSIONS": "1"}
        async with front(tmp_path, fake.base_url, env=env, mcp_servers=False) as client:
            first = await client.call_tool("ask", {"question": "first"})
            conversation = first.structured_content["conversation"]
            async with hanging(client, conversation):
                second = await client.call_tool("ask", {"question": "fast", "conversation": conversation[:6]})
            # The client's cancel of the hanging question reaches the server on its own time: until
            # it has, the conversation is still answering and says so (at most a few round trips).
            for _ in range(100):
                after = await client.call_tool("ask", {"question": "after", "conversation": conversation[:6]})
                if not (after.is_error and "is answering another question" in text_of(after)):
                    break
        bodies = fake.chat_bodies()
    assert second.is_error and f"conversation {conversation} is answering another question" in text_of(second)
    assert len(bodies) == 3  # first, the slow one (cancelled), after: "fast" never reached the model
    assert text_of(after).startswith("Two.")
    users = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "user"]
    assert users == ["first", "after"]


@pytest.mark.parametrize("host", ["localhost", "[::1]"])
async def test_over_http_loopback_names_are_loopback(tmp_path: Path, host: str) -> None:
    with fake_venice([{"text": "Hi."}], tmp_path) as fake:
        with http_front(tmp_path, fake.base_url, "--no-mcp", "--host", host) as url:
            async with Client(url, read_timeout_seconds=60) as client:
                result = await client.call_tool("ask", {"question": "hello"})
    assert text_of(result) == "Hi."


def test_a_port_already_taken_is_one_line_and_status_2(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [COMMAND, "mcp", "--http", "--port", str(port), "--no-mcp"],
            env=clean_env(tmp_path, "http://127.0.0.1:9", VENICE_MODEL="fake-model"),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"venice-agent: cannot listen on 127.0.0.1:{port}: Address already in use"


@pytest.mark.parametrize("given", ["1e400", "-1e400", "-0.5"])
async def test_a_max_usd_that_is_no_amount_is_refused_and_nothing_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """A client's `"max_usd": 1e400` is infinity once the SDK has read its JSON: a cap that caps
    nothing, on a server started without one. It is refused as a negative one is, before the
    model hears anything. The request is read by the SDK's own message model (a JSON client
    would serialise infinity as null, so none can send it but by writing the number)."""
    raw = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
    raw += '{"name": "ask", "arguments": {"question": "hello", "max_usd": ' + given + "}}}"
    params = mcp.types.JSONRPCRequest.model_validate_json(raw).params
    assert params is not None
    with fake_venice([{"text": "never"}], tmp_path) as fake:
        async with memory_front(tmp_path, fake.base_url, monkeypatch) as server:
            with pytest.raises(Exception, match="max_usd") as refused:
                await server.call_tool(params["name"], params["arguments"])
        assert fake.chat_bodies() == []
    assert "finite" in str(refused.value) or "greater than or equal to 0" in str(refused.value)


async def test_the_client_s_person_sees_as_much_of_a_long_call_as_the_terminal_shows(tmp_path: Path) -> None:
    """Every front asks about a call with its first 240 characters (fronts/text.py, CONSENT_PREVIEW),
    more than the 200 a call line shows: the MCP front once asked with the call line's 200."""
    asked: list[str] = []

    async def elicit(context: Any, params: mcp.types.ElicitRequestParams) -> mcp.types.ElicitResult:
        asked.append(params.message)
        return mcp.types.ElicitResult(action="decline")

    arguments = {"amount": 5, "note": "n" * 300}
    with fake_venice([call("charge", **arguments), {"text": "Not charged."}], tmp_path) as fake:
        async with front(tmp_path, fake.base_url, elicitation_callback=elicit) as client:
            await client.call_tool("ask", {"question": "charge me 5"})
    shown = json.dumps(arguments)[:239] + "…"
    assert asked == [
        f"Run charge({shown}) on shop? (it is not known to be free: it may spend money or change things) yes/no"
    ]


async def test_after_a_file_is_read_a_free_tool_that_leaves_the_machine_asks_saying_why(
    tmp_path: Path,
) -> None:
    """Local data in the conversation: even the trusted, read-only time server's tool asks first,
    and the question says it may send the file's contents away, not that it may cost money."""
    (tmp_path / "notes.txt").write_text("the launch code is 0000\n")
    asked: list[str] = []
    script = [
        call("read_file", path="notes.txt"),
        call("get_current_time", timezone="UTC"),
        {"text": "Not sent."},
    ]
    with fake_venice(script, tmp_path) as fake:
        async with front(tmp_path, fake.base_url, elicitation_callback=answering(False, asked)) as client:
            result = await client.call_tool("ask", {"question": "read my notes, then the time"})
    assert asked == [
        'Run get_current_time({"timezone": "UTC"}) on time? (it may send local file contents off this machine) yes/no'
    ]
    assert outcomes(result) == ["ran", "declined"]
    assert "the client's person declined get_current_time" in result.structured_content["notes"]


async def test_a_client_the_sdk_finds_no_back_channel_to_is_not_asked_and_the_result_says_why() -> None:
    """The SDK raises `NoBackChannelError` when a request cannot reach the client (a JSON-only
    HTTP reply, a request already answered): that call is declined as no one to ask, and the
    result's notes say which protocol and which tool, not an internal error."""
    from mcp.shared.exceptions import NoBackChannelError

    from venice_terminal_agent.core.receipt import Call, CallOutcome
    from venice_terminal_agent.core.toolbox import ToolSpec
    from venice_terminal_agent.fronts.mcp_server.client_consent import Asking, ClientApprover, asking

    class NoBackChannel:  # the request context as the SDK hands it, with no way back to the client
        client_capabilities = mcp.types.ClientCapabilities(elicitation=mcp.types.ElicitationCapability())
        protocol_version = "2025-11-25"

        async def elicit(self, message: str, schema: Any) -> Any:
            raise NoBackChannelError("elicitation/create")

    current = Asking(NoBackChannel())
    token = asking.set(current)
    try:
        verdict = await ClientApprover()(Call("ch\x1barge", {}), ToolSpec("ch\x1barge", server="shop"))
    finally:
        asking.reset(token)
    assert verdict is CallOutcome.NO_ONE_TO_ASK
    assert current.notes == [
        "this client's connection (MCP 2025-11-25) gives the server no way to ask it mid-call, so ch\\x1barge "
        "was declined; start the server with --yes to run paid tools"
    ]
