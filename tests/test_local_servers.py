"""What local OpenAI-compatible servers do differently (issue 22), each on the fake model server
with the profile that plays it: no streamed tool calls, no usage, `max_tokens` only, answers cut
at the output limit, routes under /v1 only. The agent in process on `MockVenice`, and the real
command as a process on `FakeVenice`."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from pathlib import Path

import pexpect
import pytest

from cli_support import fake_venice, mcp_config
from cli_support import run_cli as run
from test_repl_pty import ANSI, Terminal
from venice_terminal_agent import Exit
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.events import Notice, TextDelta
from venice_terminal_agent.core.receipt import EXIT_STATUS
from venice_terminal_agent.core.toolbox import FunctionToolbox
from venice_terminal_agent.model import ModelError, RetryPolicy, VeniceClient
from venice_terminal_agent.model.client import UNSTREAMED_TOOLS
from venice_terminal_agent.model.errors import EMPTY_REPLY
from venice_terminal_agent.model.planner import CUT_CALL, LAST_CALL
from venice_terminal_agent.testing import MockVenice
from venice_terminal_agent.testing.checks import problem
from venice_terminal_agent.testing.mock_venice import HOST

USER = [{"role": "user", "content": "hi"}]
TOOL = {"type": "function", "function": {"name": "echo", "parameters": {"type": "object", "properties": {}}}}
# Input free, output $1,000 per million tokens: a request of at most 100 output tokens can
# cost $0.10 at most, whatever its prompt.
PRICED = {"pricing": {"input": {"usd": 0}, "output": {"usd": 1000}}, "maxCompletionTokens": 100}


async def no_wait(_seconds: float) -> None:
    return None


def echo_tools() -> FunctionToolbox:
    def echo(text: str) -> str:
        """Say it back."""
        return text

    return FunctionToolbox({"echo": echo}, read_only={"echo"})


def echo_call(text: str) -> dict:
    return {"tool_calls": [{"name": "echo", "arguments": {"text": text}}]}


@asynccontextmanager
async def client_on(script, base_url: str | None = None):
    async with MockVenice(script) as fake:
        policy = RetryPolicy(sleep=no_wait, jitter=lambda: 0.5)
        http = fake.http_client()
        async with VeniceClient("k", base_url or fake.base_url, retry=policy, http_client=http) as client:
            yield fake, client


@asynccontextmanager
async def agent_on(script, **options):
    async with client_on(script) as (fake, client):
        facts = await client.discovery.model_facts("fake-model")
        yield fake, Agent(client, echo_tools(), AgentOptions(model="fake-model", facts=facts, **options))


# Fault 1: a server that cannot stream tool calls ------------------------------------------


async def test_a_streamed_request_with_tools_answered_by_nothing_is_asked_again_unstreamed_once() -> None:
    script = {"profile": "no_streamed_tools", "replies": [{"text": "Hello there."}, {"text": "Again."}]}
    seen: list = []
    async with client_on(script) as (fake, client):
        first = await client.complete("m", USER, [TOOL], events=seen.append, max_completion_tokens=50)
        second = await client.complete("m", USER, [TOOL], events=seen.append)
    assert first.text == "Hello there." and first.finish_reason == "stop"
    assert second.text == "Again."
    streamed, whole, later = fake.chat_requests
    assert streamed["stream"] is True and streamed["tools"] == [TOOL]
    # The same request otherwise: only the streaming fields left out.
    assert whole == {k: v for k, v in streamed.items() if k not in ("stream", "stream_options")}
    assert "stream" not in later  # later requests with tools go unstreamed at once
    assert [e.text for e in seen if isinstance(e, Notice)] == [UNSTREAMED_TOOLS]  # said once
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["Hello there.", "Again."]


async def test_unstreamed_tool_calls_come_back_whole_and_the_receipt_says_how_once() -> None:
    script = {
        "profile": "no_streamed_tools",
        "replies": [echo_call("hi"), {"text": "It said hi."}, {"text": "Bye."}],
    }
    async with agent_on(script) as (fake, agent):
        first = await agent.ask("what does echo say?")
        second = await agent.ask("and now?")
    assert first.stopped_because is Exit.ANSWERED and first.answer == "It said hi."
    assert [step.result for step in first.steps] == ["hi"]
    assert first.notes == (UNSTREAMED_TOOLS,) and first.to_dict()["notes"] == [UNSTREAMED_TOOLS]
    assert second.notes == () and "notes" not in second.to_dict()
    assert first.to_dict()["unstreamed_requests"] == 2 and second.to_dict()["unstreamed_requests"] == 1
    assert all(problem(body) is None for body in fake.chat_requests)
    assert [body.get("stream", False) for body in fake.chat_requests] == [True, False, False, False]


async def test_the_switch_to_unstreamed_is_on_the_receipt_even_when_the_first_whole_try_fails() -> None:
    # The streamed request gets nothing; asked again unstreamed, the server fails once (a 503),
    # then proposes the call: it runs, and the receipt says how its replies came.
    script = {
        "profile": "no_streamed_tools",
        "replies": [{"status": 503}, echo_call("hi"), {"text": "It said hi."}],
    }
    async with agent_on(script) as (fake, agent):
        receipt = await agent.ask("what does echo say?")
    assert receipt.stopped_because is Exit.ANSWERED and [step.result for step in receipt.steps] == ["hi"]
    assert receipt.notes == (UNSTREAMED_TOOLS,)
    assert receipt.to_dict()["unstreamed_requests"] == 2  # the call, and the answer after it
    assert [body.get("stream", False) for body in fake.chat_requests] == [True, False, False, False]


async def test_the_switch_to_unstreamed_is_on_the_receipt_of_a_question_that_then_failed() -> None:
    async with agent_on({"profile": "no_streamed_tools", "replies": [{"status": 400}]}) as (_, agent):
        receipt = await agent.ask("what does echo say?")
    assert receipt.stopped_because is Exit.MODEL_ERROR and receipt.notes == (UNSTREAMED_TOOLS,)
    assert "unstreamed_requests" not in receipt.to_dict()  # no reply came whole


async def test_a_server_that_sends_nothing_is_told_apart_from_a_reply_cut_off() -> None:
    async with client_on([{"empty": True}] * 3) as (_, client):
        with pytest.raises(ModelError) as nothing:
            await client.complete("m", USER)
    async with client_on([{"text": "half an answer", "cut": 2}] * 3) as (_, client):
        with pytest.raises(ModelError) as cut:
            await client.complete("m", USER)
    assert nothing.value.message == f"{EMPTY_REPLY} (gave up after 3 attempts)"
    assert "cut off" not in nothing.value.message
    assert cut.value.message.startswith("the model's reply was cut off")


def test_a_question_with_tools_works_on_a_server_like_llama_cpp_python(tmp_path: Path) -> None:
    with fake_venice({"profile": "llama-cpp-python", "replies": [{"text": "Hello!"}]}, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", "Hello!")
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "Hello!"
    assert done.stderr.count(UNSTREAMED_TOOLS) == 1
    assert [body.get("stream", False) for body in bodies] == [True, False] and bodies[0]["tools"]


def test_a_tool_call_goes_through_on_a_server_like_llama_cpp_python(tmp_path: Path) -> None:
    # Asked again unstreamed, the server proposes the call; its turn goes back to it (`content:
    # null`, as it sent it, is a 500 there; so is no content), the call runs, and the receipt
    # says all of it.
    call = {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}]}
    script = {"profile": "llama-cpp-python", "replies": [call, {"text": "It is late in Tokyo."}]}
    config = mcp_config(tmp_path, paid_server=False)
    with fake_venice(script, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--mcp-config", str(config), "--json", "Time in Tokyo?")
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert receipt["answer"] == "It is late in Tokyo." and [s["tool"] for s in receipt["steps"]] == [
        "get_current_time"
    ]
    assert receipt["notes"] == [UNSTREAMED_TOOLS] and receipt["unstreamed_requests"] == 2
    assert done.stderr.count(UNSTREAMED_TOOLS) == 1  # the line, once
    assert [body.get("stream", False) for body in bodies] == [True, False, False]
    assert bodies[-1]["messages"][-2]["content"] == ""  # the call's turn, as that server takes it


# Fault 2: an answer cut at the output limit -------------------------------------------------


async def test_an_answer_cut_at_the_output_limit_is_partial_with_its_own_exit() -> None:
    script = {"profile": "output_limit", "replies": [{"text": "one two three four five"}, {"text": "go on"}]}
    async with agent_on(script, max_completion_tokens=3) as (fake, agent):
        receipt = await agent.ask("count to five")
        await agent.ask("go on")
    assert receipt.stopped_because is Exit.OUTPUT_LIMIT and receipt.partial
    assert receipt.answer == "one two three "
    assert receipt.refusal == (
        "the answer was cut at the model's output limit of 3 tokens (raise MAX_COMPLETION_TOKENS for a longer one)"
    )
    assert receipt.exit_status == EXIT_STATUS[Exit.OUTPUT_LIMIT] == 9
    assert receipt.summary().startswith("stopped: output_limit (partial answer)")
    # The cut answer stays in the conversation, so "go on" can go on from it.
    assert fake.chat_requests[1]["messages"][-2] == {"role": "assistant", "content": "one two three "}


async def test_tool_calls_cut_at_the_output_limit_do_not_run_are_on_the_receipt_and_told_to_the_model() -> (
    None
):
    cut = {**echo_call("hi"), "finish_reason": "length", "usage": {"completion_tokens": 64}}
    async with agent_on([cut, {"text": "ok"}]) as (fake, agent):
        receipt = await agent.ask("echo hi")
        await agent.ask("again")
    assert receipt.stopped_because is Exit.OUTPUT_LIMIT and receipt.steps == ()
    assert receipt.refusal == (
        "the answer was cut at the model's output limit of 64 tokens; 1 proposed call did not run (echo)"
    )
    assert receipt.to_dict()["proposed"] == [
        {"tool": "echo", "arguments": {"text": "hi"}, "outcome": "not_run", "why": CUT_CALL}
    ]
    assert all(problem(body) is None for body in fake.chat_requests)  # no unanswered call left behind
    # The next question's request carries the cut call, answered: the model hears it did not run.
    *_, proposing, answered, again = fake.chat_requests[1]["messages"]
    assert [call["function"]["name"] for call in proposing["tool_calls"]] == ["echo"]
    assert answered == {
        "role": "tool",
        "tool_call_id": proposing["tool_calls"][0]["id"],
        "content": json.dumps({"error": CUT_CALL}),
    }
    assert again == {"role": "user", "content": "again"}


def test_a_call_cut_mid_arguments_goes_back_so_the_conversation_goes_on(tmp_path: Path) -> None:
    # The limit cut the call's JSON; a server that parses it (llama-server) refuses any request
    # that carries it, so the cut call goes back with `{}`, and the next question is answered.
    cut = {
        "tool_calls": [{"name": "get_current_time", "arguments": '{"timezone": "Asi'}],
        "finish_reason": "length",
        "usage": {"completion_tokens": 25},
    }
    script = {"profile": "json_arguments", "replies": [cut, {"text": "You are welcome."}]}
    config = mcp_config(tmp_path, paid_server=False)
    with fake_venice(script, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--mcp-config", str(config), stdin="Time in Tokyo?\nThank you.\n")
        bodies = fake.chat_bodies()
    assert done.returncode == 0, done.stderr
    first, second = [line for line in done.stdout.splitlines() if line.startswith("stopped: ")]
    assert first.startswith("stopped: output_limit") and second.startswith("stopped: answered")
    *_, turn, answered, thanks = bodies[-1]["messages"]
    assert turn["tool_calls"][0]["function"] == {"name": "get_current_time", "arguments": "{}"}
    assert json.loads(answered["content"]) == {"error": CUT_CALL} and thanks["content"] == "Thank you."


async def test_calls_proposed_in_the_last_request_for_an_answer_are_on_the_receipt_as_not_run() -> None:
    # The budget (one call) stops the second round; the last request offers no tools, and a
    # server that proposes a call anyway gets its text taken as the partial answer.
    last = {"text": "Echo said 1.", "tool_calls": [{"name": "echo", "arguments": {"text": "3"}}]}
    async with agent_on([echo_call("1"), echo_call("2"), last]) as (_, agent):
        receipt = await agent.ask("echo 1, 2 and 3", budget=1)
    assert receipt.stopped_because is Exit.BUDGET and receipt.partial and receipt.answer == "Echo said 1."
    assert receipt.refusal == (
        "stopped before call 2: the budget of 1 tool call is spent; 1 proposed call did not run (echo)"
    )
    assert [
        (item["arguments"], item["outcome"], item.get("why")) for item in receipt.to_dict()["proposed"]
    ] == [
        ({"text": "1"}, "ran", None),
        ({"text": "2"}, "not_run", "stopped before call 2: the budget of 1 tool call is spent"),
        ({"text": "3"}, "not_run", LAST_CALL),
    ]


# A paid tool (shop's charge), which would need a yes: the cut call is asked about nowhere.
CUT_CHARGE = {
    "tool_calls": [{"name": "charge", "arguments": {"amount": 5}}],
    "finish_reason": "length",
    "usage": {"completion_tokens": 12},
}


@pytest.mark.parametrize("how", ["no terminal", "--yes", "terminal"])
def test_a_call_the_output_limit_cut_is_on_the_receipt_with_why_wherever_it_is_asked(
    tmp_path: Path, how: str
) -> None:
    config = mcp_config(tmp_path, time_server=False)
    with fake_venice([CUT_CHARGE], tmp_path) as fake:
        if how == "terminal":
            term = Terminal(tmp_path, fake, "--json", "charge 5", config=config)
            term.child.expect(pexpect.EOF)
            said, status = ANSI.sub("", term.child.before), term.finish()
            receipt = json.loads(said[said.index("{") : said.rindex("}") + 1])
        else:
            yes = ["--yes"] if how == "--yes" else []
            done = run(tmp_path, fake.base_url, "--mcp-config", str(config), *yes, "--json", "charge 5")
            said, status, receipt = done.stderr, done.returncode, json.loads(done.stdout)
    assert status == EXIT_STATUS[Exit.OUTPUT_LIMIT], said
    assert "[y/N]" not in said and "charged" not in said  # never asked, never run
    assert "1 proposed call did not run (charge)" in said  # the line that says why it stopped
    assert receipt["steps"] == [] and receipt["proposed"] == [
        {"tool": "charge", "arguments": {"amount": 5}, "outcome": "not_run", "why": CUT_CALL}
    ]


def test_a_cut_answer_says_so_on_the_terminal_and_in_the_status(tmp_path: Path) -> None:
    script = {"profile": "output_limit", "replies": [{"text": "one two three four five"}]}
    with fake_venice(script, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", "count", MAX_COMPLETION_TOKENS="3")
    assert done.returncode == 9, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "one two three "  # as the model sent it
    assert lines[1].startswith("stopped: output_limit (partial answer) · 0 calls")
    assert "cut at the model's output limit of 3 tokens" in done.stderr  # why it stopped: stderr


# Fault 5: max_tokens for the servers that read only it --------------------------------------


def test_the_output_limit_works_on_a_server_that_reads_only_max_tokens(tmp_path: Path) -> None:
    script = {"profile": "max_tokens_only", "replies": [{"text": "one two three four five"}]}
    with fake_venice(script, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", "count", MAX_COMPLETION_TOKENS="3")
        (body,) = fake.chat_bodies()
    assert done.returncode == 9, done.stdout + done.stderr
    assert body["max_tokens"] == body["max_completion_tokens"] == 3


async def test_openai_itself_gets_max_completion_tokens_alone() -> None:
    # Its reasoning models refuse max_tokens; the strict fake and Venice take both.
    async with VeniceClient("k", "https://api.openai.com/v1") as client:
        body = client.request("gpt-x", USER, max_completion_tokens=9)
    assert body["max_completion_tokens"] == 9 and "max_tokens" not in body


# Faults 3 and 4: unknown stays unknown ------------------------------------------------------


@pytest.mark.parametrize("failing", [{"status": 400}, {"text": "half", "cut": 2}], ids=["refused", "cut off"])
async def test_a_failed_question_on_a_server_with_no_prices_costs_unknown(failing: dict) -> None:
    async with agent_on([failing] * 3) as (_, agent):
        receipt = await agent.ask("hi")
    assert receipt.stopped_because is Exit.MODEL_ERROR
    assert receipt.cost_usd is None and "cost unknown" in receipt.summary()
    # Refused outright, it took no tokens; cut off, nobody knows how many.
    assert ("tokens unknown" in receipt.summary()) is ("cut" in failing)


async def test_a_cancelled_question_costs_unknown() -> None:
    async with agent_on([{"text": "slow", "hang": True}]) as (_, agent):
        started = asyncio.Event()
        receipts: list = []

        def sink(event) -> None:
            if isinstance(event, TextDelta):
                started.set()

        task = asyncio.create_task(agent.ask("hi", events=sink))
        async with asyncio.timeout(10):
            await started.wait()
        task.cancel()
        receipts.append(await task)
    (receipt,) = receipts
    assert receipt.stopped_because is Exit.CANCELLED
    assert receipt.cost_usd is None and receipt.summary().endswith("tokens unknown · cost unknown")


async def test_a_request_refused_by_a_server_with_prices_costs_nothing() -> None:
    async with agent_on({"model_spec": PRICED, "replies": [{"status": 400}]}) as (_, agent):
        receipt = await agent.ask("hi")
    assert receipt.stopped_because is Exit.MODEL_ERROR and receipt.cost_usd == 0.0


async def test_no_usage_from_the_server_is_tokens_unknown_never_zero() -> None:
    async with agent_on({"profile": "no_usage", "replies": [{"text": "hello"}]}) as (_, agent):
        receipt = await agent.ask("hi")
    assert receipt.usage == {} and receipt.unmeasured == 1
    assert receipt.to_dict()["unmeasured_requests"] == 1
    assert "tokens unknown" in receipt.summary() and "0 tokens" not in receipt.summary()
    assert receipt.cached_tokens is None and receipt.to_dict()["cached_tokens"] is None


def test_a_server_that_sends_no_usage_gets_a_receipt_that_counts_nothing_as_measured(tmp_path: Path) -> None:
    with fake_venice({"profile": "llama-cpp-python", "replies": [{"text": "Hello!"}]}, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", "--json", "Hello!")
    receipt = json.loads(done.stdout)
    assert receipt["usage"] == {} and receipt["unmeasured_requests"] == 1
    assert receipt["cached_tokens"] is None and receipt["cost_usd"] is None  # unknown, never 0


# A question refused for its length before the model took it: by the agent (the window known
# from llama.cpp's /props), or by the server's own 400 (the window unknown to the agent).
LENGTH_JUDGES = {
    "agent": {
        "entry": {"owned_by": "llamacpp"},
        "props": {"default_generation_settings": {"n_ctx": 300}},
        "replies": [],
    },
    "server": {"context_window": 300, "replies": []},
}


@pytest.mark.parametrize("judge", LENGTH_JUDGES)
def test_a_question_too_long_costs_unknown_on_a_server_with_no_prices(tmp_path: Path, judge: str) -> None:
    with fake_venice(LENGTH_JUDGES[judge], tmp_path) as fake:
        said = run(tmp_path, fake.base_url, "--no-mcp", "word " * 400)
        done = run(tmp_path, fake.base_url, "--no-mcp", "--json", "word " * 400)
    assert said.returncode == done.returncode == EXIT_STATUS[Exit.CONTEXT_FULL], said.stderr
    line = said.stdout.splitlines()[-1]
    assert line.startswith("stopped: context_full") and " · cost unknown" in line and "$" not in line
    assert json.loads(done.stdout)["cost_usd"] is None


async def test_an_editor_hears_cost_unknown_for_a_question_too_long_on_a_server_with_no_prices(
    tmp_path: Path,
) -> None:
    from acp import text_block

    from test_acp import allow, editor_on

    with fake_venice(LENGTH_JUDGES["agent"], tmp_path) as fake:
        async with editor_on(tmp_path, fake, allow, "--no-mcp") as (editor, conn):
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("word " * 400)])
    receipt = done.field_meta["venice-agent/receipt"]
    assert receipt["stopped_because"] == "context_full" and receipt["cost_usd"] is None
    updates = [u for u in editor.updates if u.session_update == "usage_update"]
    assert updates and all(update.cost is None for update in updates)  # never a $0 that looks known


def test_a_question_too_long_costs_nothing_on_a_server_with_prices(tmp_path: Path) -> None:
    with fake_venice({**LENGTH_JUDGES["agent"], "model_spec": PRICED}, tmp_path) as fake:
        done = run(tmp_path, fake.base_url, "--no-mcp", "--json", "word " * 400)
    assert json.loads(done.stdout)["cost_usd"] == 0.0  # nothing was sent, at known prices


@pytest.mark.parametrize("profile", [["no_usage"], []], ids=["no usage", "usage"])
async def test_the_money_cap_counts_a_response_without_usage_at_its_worst(profile: list) -> None:
    # Each request may cost $0.10 at most; the cap is $0.15. Measured, the first round costs
    # $0.005 and the second fits; unmeasured, it counts as $0.10 and the second does not.
    script = {"profile": profile, "model_spec": PRICED, "replies": [echo_call("hi"), {"text": "done"}]}
    async with agent_on(script, max_usd=0.15) as (fake, agent):
        receipt = await agent.ask("echo hi")
    if profile:
        assert receipt.stopped_because is Exit.COST_CAP and receipt.cost_usd is None
        assert "$0.05 of the $0.15 cap is left" in (receipt.refusal or "")
        assert len(fake.chat_requests) == 1
    else:
        assert receipt.stopped_because is Exit.ANSWERED and receipt.cost_usd == pytest.approx(0.01)


# Fault 6: a base URL without /v1 ------------------------------------------------------------


async def test_a_404_on_the_model_list_names_the_url_and_suggests_v1() -> None:
    async with client_on({"profile": "v1_routes"}, base_url=HOST) as (_, client):
        with pytest.raises(ModelError) as caught:
            await client.discovery.resolve_model(None)
    assert caught.value.message == (
        f"cannot list models: GET {HOST}/models answered 404 Not Found: Not Found; OpenAI-compatible "
        f"servers serve their API under /v1: try {HOST}/v1 as the base URL (--base-url or VENICE_BASE_URL)"
    )


async def test_a_404_on_chat_completions_names_the_url_and_suggests_v1() -> None:
    async with client_on({"profile": "v1_routes"}, base_url=HOST + "/") as (_, client):
        with pytest.raises(ModelError) as caught:
            await client.complete("fake-model", USER)
    assert caught.value.message.startswith(
        f"POST {HOST}/chat/completions answered 404 Not Found: Not Found; OpenAI-compatible servers"
    )
    assert f"try {HOST}/v1 as the base URL" in caught.value.message


async def test_with_v1_the_model_is_found_and_a_404_suggests_nothing_more() -> None:
    async with client_on({"profile": "v1_routes", "replies": [{"status": 404}]}) as (fake, client):
        assert await client.discovery.resolve_model(None) == "fake-model"  # no traits: the only model listed
        with pytest.raises(ModelError) as caught:
            await client.complete("fake-model", USER)
    assert caught.value.message.startswith(f"POST {fake.base_url}/chat/completions answered 404 Not Found")
    assert "/v1 as the base URL" not in caught.value.message


def test_a_base_url_without_v1_says_so_at_start_up(tmp_path: Path) -> None:
    with fake_venice({"profile": "v1_routes"}, tmp_path) as fake:
        root = fake.base_url.removesuffix("/v1")
        done = run(tmp_path, root, "--no-mcp", "hi", VENICE_MODEL=None)
    assert done.returncode == EXIT_STATUS[Exit.MODEL_ERROR], done.stdout + done.stderr
    assert f"GET {root}/models answered 404 Not Found" in done.stderr
    assert f"try {root}/v1 as the base URL" in done.stderr
    assert json.dumps("suggests none") not in done.stderr
