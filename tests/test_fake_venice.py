"""The fake Venice server: real HTTP and SSE, scripted replies, and the 400s the real API gives."""

from __future__ import annotations

import asyncio
import json
import signal
import sys

import httpx2
import pytest
from openai import AsyncOpenAI, BadRequestError

from venice_terminal_agent.testing import FakeVenice, ScriptError
from venice_terminal_agent.testing.checks import problem

USER = {"role": "user", "content": "hi"}


def call(call_id: str, name: str = "echo", arguments: str = "{}") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


async def stream_chunks(client: AsyncOpenAI, **extra) -> list[dict]:
    stream = await client.chat.completions.create(model="m", messages=[USER], stream=True, **extra)
    return [chunk.to_dict() async for chunk in stream]


async def test_streams_text_with_reasoning_and_usage_over_sse() -> None:
    script = [{"text": "hello there", "reasoning_content": "hmm", "thought_signature": "sig"}]
    async with FakeVenice(script) as fake:
        client = AsyncOpenAI(api_key="k", base_url=fake.base_url, max_retries=0)
        chunks = await stream_chunks(client, stream_options={"include_usage": True})
        await client.close()
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("content", "") for d in deltas) == "hello there"
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "hmm"
    assert deltas[0]["thought_signature"] == "sig"
    assert chunks[-1]["usage"]["total_tokens"] == 15
    assert fake.requests[0].headers["authorization"] == "Bearer k"


async def test_parallel_calls_can_share_one_index() -> None:
    script = [{"tool_calls": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "same_index": True}]
    async with FakeVenice(script) as fake:
        client = AsyncOpenAI(api_key="k", base_url=fake.base_url, max_retries=0)
        chunks = await stream_chunks(client)
        await client.close()
    parts = [tc for c in chunks for tc in c["choices"][0]["delta"].get("tool_calls", [])]
    assert {tc["index"] for tc in parts} == {0}
    assert [tc["id"] for tc in parts if "id" in tc] == ["call_1_0", "call_1_1", "call_1_2"]


async def test_error_reply_has_venice_body_and_headers() -> None:
    script = [{"status": 429, "headers": {"Retry-After": "7"}}]
    async with FakeVenice(script) as fake:
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                fake.base_url + "/chat/completions", json={"model": "m", "messages": [USER]}
            )
    assert response.status_code == 429
    assert response.json() == {"error": "Rate limit exceeded"}
    assert response.headers["retry-after"] == "7"
    assert response.headers["x-ratelimit-limit-requests"] == "500"


async def test_models_and_traits() -> None:
    async with FakeVenice({"models": ["big", "small"], "traits": {"default": "small"}}) as fake:
        async with httpx2.AsyncClient() as http:
            models = (await http.get(fake.base_url + "/models")).json()
            traits = (await http.get(fake.base_url + "/models/traits")).json()
    assert [m["id"] for m in models["data"]] == ["big", "small"]
    assert traits["data"] == {"default": "small"}


async def test_malformed_conversation_gets_400_and_uses_no_reply() -> None:
    async with FakeVenice([{"text": "fine"}]) as fake:
        client = AsyncOpenAI(api_key="k", base_url=fake.base_url, max_retries=0)
        dangling = [USER, {"role": "assistant", "content": None, "tool_calls": [call("c1")]}]
        with pytest.raises(BadRequestError) as caught:
            await client.chat.completions.create(model="m", messages=dangling)
        body = caught.value.response.json()
        assert body["error"] == "Invalid request parameters"
        assert "c1" in json.dumps(body["details"])
        reply = await client.chat.completions.create(model="m", messages=[USER])
        await client.close()
    assert reply.choices[0].message.content == "fine"
    assert [seen.status for seen in fake.requests] == [400, 200]


@pytest.mark.parametrize(
    ("messages", "extra", "where"),
    [
        ([USER, {"role": "tool", "tool_call_id": "x", "content": "r"}], {}, "messages.1.tool_call_id"),
        (
            [USER, {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
             {"role": "tool", "tool_call_id": "a", "content": "r"}, USER],
            {}, "messages.1.tool_calls",
        ),
        (
            [USER, {"role": "assistant", "content": None, "tool_calls": [call("a")]},
             {"role": "tool", "tool_call_id": "a", "content": "r"},
             {"role": "tool", "tool_call_id": "a", "content": "again"}],
            {}, "messages.3.tool_call_id",
        ),
        ([USER, {"role": "assistant", "content": None}], {}, "messages.1.content"),
        ([USER], {"temperature": None}, "temperature"),
        ([USER], {"tools": [{"type": "function", "function": {"name": "bad.name"}}]}, "tools.0.function.name"),
        ([USER], {"tool_choice": "auto"}, "tool_choice"),
        ([USER, {"role": "assistant", "content": None, "tool_calls": [call("a", "has space")]}], {},
         "messages.1.tool_calls.0.function.name"),
    ],
)  # fmt: skip
def test_conversation_rules(messages: list, extra: dict, where: str) -> None:
    found = problem({"model": "m", "messages": messages, **extra})
    assert found is not None and found[0] == where


def test_well_formed_tool_round_passes() -> None:
    messages = [
        USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("a"), call("b")],
            "reasoning_content": "r",
        },
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
        {"role": "assistant", "content": "done"},
    ]
    assert problem({"model": "m", "messages": messages, "tools": [], "tool_choice": "auto"}) is None


async def test_running_out_of_script_fails_loudly() -> None:
    with pytest.raises(AssertionError, match="ran out"):
        async with FakeVenice([]) as fake:
            async with httpx2.AsyncClient() as http:
                response = await http.post(
                    fake.base_url + "/chat/completions", json={"model": "m", "messages": [USER]}
                )
            assert response.status_code == 500
            assert response.headers["x-should-retry"] == "false"


def test_a_typo_in_a_script_is_refused_at_once() -> None:
    with pytest.raises(ScriptError, match="reply 2: unknown keys"):
        FakeVenice([{"text": "a"}, {"txt": "b"}])
    with pytest.raises(
        ScriptError, match="unknown profile 'no_usgae' \\(known: json_arguments, llama-cpp-python, max_tokens_only"
    ):
        FakeVenice({"profile": ["no_streamed_tools", "no_usgae"]})


async def test_a_local_server_profile_serves_v1_alone_and_plain_listings() -> None:
    async with FakeVenice({"profile": "llama-cpp-python"}) as fake:
        assert fake.base_url.endswith("/v1")
        async with httpx2.AsyncClient() as http:
            models = (await http.get(fake.base_url + "/models")).json()
            traits = await http.get(fake.base_url + "/models/traits")
            elsewhere = await http.get(fake.base_url.removesuffix("/v1") + "/models")
    assert models == {
        "object": "list",
        "data": [{"id": "fake-model", "object": "model", "owned_by": "me", "created": 0}],
    }
    assert traits.status_code == elsewhere.status_code == 404 and elsewhere.json() == {"detail": "Not Found"}


async def test_runs_as_a_command_and_records_without_the_key(tmp_path) -> None:
    record = tmp_path / "seen.jsonl"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "venice_terminal_agent.testing.fake_venice", '[{"text": "hi from a process"}]',
        "--record", str(record), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    base_url = (await process.stdout.readline()).decode().strip()
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/api/v1")
    client = AsyncOpenAI(api_key="secret-key", base_url=base_url, max_retries=0)
    reply = await client.chat.completions.create(model="m", messages=[USER])
    await client.close()
    process.send_signal(signal.SIGTERM)
    assert await process.wait() == 0
    assert reply.choices[0].message.content == "hi from a process"
    seen = [json.loads(line) for line in record.read_text().splitlines()]
    assert seen[0]["body"]["messages"] == [USER]
    assert "secret-key" not in record.read_text()


async def test_command_exits_1_when_the_script_ran_out() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "venice_terminal_agent.testing.fake_venice", "[]",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    base_url = (await process.stdout.readline()).decode().strip()
    async with httpx2.AsyncClient() as http:
        await http.post(base_url + "/chat/completions", json={"model": "m", "messages": [USER]})
    process.send_signal(signal.SIGTERM)
    assert await process.wait() == 1
    assert b"ran out" in await process.stderr.read()


async def test_a_script_looped_by_question_starts_each_question_at_its_first_reply() -> None:
    """`loop: "question"` (the demo's stand-in): the reply is the one for this question's model
    turn, whatever an earlier question left undone; a request without tools gets the last."""
    script = {"loop": "question", "replies": [{"tool_calls": [{"name": "echo"}]}, {"text": "done"}]}
    tools = [{"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}]
    turn = [{"role": "assistant", "content": None, "tool_calls": [call("c1")]}]
    turn += [{"role": "tool", "tool_call_id": "c1", "content": "echoed"}]
    async with FakeVenice(script) as fake:
        client = AsyncOpenAI(api_key="k", base_url=fake.base_url, max_retries=0)

        async def reply(messages: list, **extra) -> dict:
            done = await client.chat.completions.create(model="m", messages=messages, **extra)
            return done.choices[0].message.to_dict()

        first = await reply([USER], tools=tools)  # a question whose call was never answered
        again = await reply([USER], tools=tools)  # the next question starts over
        second = await reply([USER, *turn], tools=tools)
        later = await reply([USER, *turn, {"role": "assistant", "content": "x"}, USER, *turn], tools=tools)
        without_tools = await reply([USER])
        await client.close()
    assert [m["tool_calls"][0]["function"]["name"] for m in (first, again)] == ["echo", "echo"]
    assert second["content"] == later["content"] == without_tools["content"] == "done"
