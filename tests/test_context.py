"""The context window, counted before each request: the agent over HTTP against the strict fake
Venice server with a window of its own (it answers a request longer than that with OpenAI's
400 and records each request's size)."""

from __future__ import annotations

import copy
import itertools
import json
import math
from contextlib import asynccontextmanager

import pytest

from venice_terminal_agent import Exit
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.context import (
    BYTES_PER_TOKEN,
    Compaction,
    Gauge,
    choose_window,
    compacted_line,
    cuts,
    full_refusal,
    leading_system,
    marker,
    page_limit,
    record_problem,
    replay,
    request_bytes,
    short,
    used,
    window_line,
)
from venice_terminal_agent.core.errors import ContextFullError
from venice_terminal_agent.core.events import Notice
from venice_terminal_agent.core.tokens import IMAGE_UNKNOWN_TOKENS
from venice_terminal_agent.core.toolbox import FunctionToolbox
from venice_terminal_agent.model import VeniceClient
from venice_terminal_agent.model.compaction import SUMMARY_HEAD
from venice_terminal_agent.model.errors import from_response
from venice_terminal_agent.testing import MockVenice
from venice_terminal_agent.testing.checks import problem

WINDOW = 3000  # tokens, the fake's and the model list's
FILLER = "lorem ipsum dolor " * 30  # about 180 tokens a question


def echo(text: str) -> str:
    """Say it back."""
    return text


def tools() -> FunctionToolbox:
    return FunctionToolbox({"echo": echo}, read_only={"echo"})


@asynccontextmanager
async def agent_on(script, *, listed: int | None = WINDOW, **options):
    script = {"context_window": WINDOW, **script}
    if listed is not None:
        script["model_spec"] = {"availableContextTokens": listed, **script.get("model_spec", {})}
    async with MockVenice(script) as fake:
        async with VeniceClient("k", fake.base_url, http_client=fake.http_client()) as client:
            facts = await client.discovery.model_facts("fake-model")
            yield fake, Agent(client, tools(), AgentOptions(model="fake-model", facts=facts, **options))


def chat(fake) -> list[dict]:
    return fake.chat_requests


def is_summary_request(body: dict) -> bool:
    last = body["messages"][-1]["content"]
    return "tools" not in body and "--- the conversation ---" in last


async def test_a_long_conversation_compacts_before_the_window_is_passed() -> None:
    said: list[str] = []
    script = {"replies": [{"text": "noted " * 20}], "loop": True}
    async with agent_on(script) as (fake, agent):
        receipts = []
        for number in range(12):
            events = lambda event: said.append(event.text) if isinstance(event, Notice) else None  # noqa: E731
            receipts.append(await agent.ask(f"question {number}: {FILLER}", events=events))
        bodies = chat(fake)
        statuses = [seen.status for seen in fake.requests if seen.path.endswith("/chat/completions")]

    assert all(receipt.stopped_because is Exit.ANSWERED for receipt in receipts)
    assert all(status == 200 for status in statuses)  # never a 400: no request passed the window
    assert max(fake.request_tokens) <= WINDOW * 0.8
    summaries = [i for i, body in enumerate(bodies) if is_summary_request(body)]
    assert len(summaries) == 1
    at = summaries[0]
    summary_request = bodies[at]
    # One request without tools: the system prompt and the transcript, well-formed on its own.
    assert problem(summary_request) is None and "tool_choice" not in summary_request
    assert [m["role"] for m in summary_request["messages"]] == ["system", "user"]
    assert summary_request["messages"][0] == bodies[0]["messages"][0]  # the system prompt whole
    # The question's own request went out right after, smaller, with the summary and the last turns.
    after = bodies[at + 1]
    assert fake.request_tokens[at + 1] < fake.request_tokens[at - 1]
    assert after["messages"][0] == bodies[0]["messages"][0]
    assert after["messages"][1]["content"].startswith(SUMMARY_HEAD)
    kept = [m["content"] for m in after["messages"] if m["role"] == "user"][1:]
    assert kept[-2:] == [f"question 10: {FILLER}", f"question 11: {FILLER}"]  # the last turns, whole
    assert kept == [f"question {n}: {FILLER}" for n in range(12 - len(kept), 12)]
    compacted = receipts[11].to_dict()["compacted"]
    assert compacted["rounds"] == 12 - len(kept) and compacted["tokens_after"] < compacted["tokens_before"]
    assert receipts[11].rounds == 2  # the compaction was a round of the question
    assert said == [
        compacted_line(compacted["rounds"], compacted["tokens_before"], compacted["tokens_after"])
    ]
    assert receipts[11].to_dict()["context_window"] == WINDOW
    assert 0 < receipts[11].to_dict()["context_tokens"] < WINDOW * 0.8
    assert agent.history == after["messages"] + [{"role": "assistant", "content": "noted " * 20}]


async def test_compaction_keeps_tool_calls_with_their_answers() -> None:
    # Every question calls a tool; the cut is before a user turn, never inside a round. The
    # sixth question passes the threshold after its tool ran: the compaction comes between its
    # two requests (request 12), and its tool call and answer stay whole after the summary.
    question = [{"tool_calls": [{"name": "echo", "arguments": {"text": FILLER}}]}, {"text": "done"}]
    replies = question * 5 + [question[0], {"text": "the summary"}, question[1]] + question * 2
    # A system prompt of a fixed size (the agent's own may get shorter), so the threshold
    # falls where this test counts it.
    async with agent_on({"replies": replies}, system_prompt="Be brief. " * 120) as (fake, agent):
        for number in range(8):
            receipt = await agent.ask(f"question {number}")
            assert receipt.stopped_because is Exit.ANSWERED, receipt.refusal
            assert (receipt.compacted is not None) == (number == 5)
        bodies = chat(fake)
    assert [i for i, body in enumerate(bodies) if is_summary_request(body)] == [11]
    resumed = bodies[12]["messages"]
    assert [m["role"] for m in resumed] == [
        "system",
        "user",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
    ]
    assert resumed[1]["content"] == SUMMARY_HEAD + "the summary"
    assert all(problem(body) is None for body in bodies)
    assert all(seen.status == 200 for seen in fake.requests)
    assert problem({"model": "m", "messages": agent.history}) is None


async def test_compaction_off_ends_context_full_with_no_request_sent() -> None:
    script = {"replies": [{"text": "noted " * 20}], "loop": True}
    async with agent_on(script, compact=False) as (fake, agent):
        receipt = None
        for number in range(20):
            receipt = await agent.ask(f"question {number}: {FILLER}")
            if receipt.stopped_because is not Exit.ANSWERED:
                break
        assert receipt is not None and receipt.stopped_because is Exit.CONTEXT_FULL
        sent = len(chat(fake))
        assert sent == number  # the last question sent nothing
        before = copy.deepcopy(agent.history)
        # The conversation is as it was before the question, and goes on from there.
        assert [m["content"] for m in before if m["role"] == "user"][-1] == f"question {number - 1}: {FILLER}"
        assert receipt.exit_status == 10
        needed, window = receipt.to_dict()["context_tokens"], receipt.to_dict()["context_window"]
        assert needed > window == WINDOW
        assert receipt.refusal == (
            f"the next request needs about {short(needed)} tokens and the model's window is "
            "3k; /compact, /clear, or a model with a larger window"
        )
        assert agent.history == before
        said = await agent.compact("the questions' numbers")  # on demand, compaction off or not
        assert said.startswith("compacted ")
        again = await agent.ask("one more")
        assert again.stopped_because is Exit.ANSWERED
        focus_request = chat(fake)[sent]
        assert is_summary_request(focus_request) and "the questions' numbers" in json.dumps(focus_request)


async def test_a_failed_compaction_leaves_the_history_as_it_was() -> None:
    script = {"replies": [{"text": "noted"}] * 3 + [{"status": 500, "headers": {"x-should-retry": "false"}}]}
    async with agent_on(script) as (_fake, agent):
        for number in range(3):
            assert (await agent.ask(f"question {number}")).stopped_because is Exit.ANSWERED
        before = copy.deepcopy(agent.history)
        said = await agent.compact()
        assert said.startswith("not compacted: the model server answered 500")
        assert agent.history == before


async def test_compaction_counts_against_the_round_limit() -> None:
    # One round per question: no round is left to compact in, so the question cannot fit.
    script = {"replies": [{"text": "noted " * 20}], "loop": True}
    async with agent_on(script, max_rounds=1) as (fake, agent):
        for number in range(20):
            receipt = await agent.ask(f"question {number}: {FILLER}")
            if receipt.stopped_because is not Exit.ANSWERED:
                break
        assert receipt.stopped_because is Exit.CONTEXT_FULL
        assert "no round was left to compact the conversation in" in (receipt.refusal or "")
        assert not any(is_summary_request(body) for body in chat(fake))


async def test_the_servers_own_400_for_length_becomes_context_full() -> None:
    # The window is unknown here (the model list does not say): the server is the judge.
    script = {"replies": [{"text": "never sent"}], "context_window": 600}
    async with agent_on(script, listed=None) as (fake, agent):
        assert agent.context_window is None
        receipt = await agent.ask(FILLER * 3)
        assert receipt.stopped_because is Exit.CONTEXT_FULL
        assert receipt.exit_status == 10
        assert "maximum context length is 600 tokens" in (receipt.refusal or "")
        assert len(agent.history) == 1  # rolled back
        assert fake.remaining == 1  # the reply was never used
        fake.add({"text": "fine"})  # the script's reply is still there; the next question goes on


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"message": "This model's maximum context length is 4096 tokens. However, you "
                   "requested 5000 tokens", "type": "invalid_request_error", "code": "context_length_exceeded"}},
        {"object": "error", "message": "This model's maximum context length is 8192 tokens. However, "
         "you requested 9000 tokens (9000 in the messages, 0 in the completion).", "type": "BadRequestError",
         "code": 400},  # vLLM
        {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                   "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}},  # llama.cpp
        {"error": "The prompt is too long for this model", "code": "TOO_MANY_TOKENS"},  # Venice's code
    ],
)  # fmt: skip
def test_each_servers_wording_for_a_too_long_request_is_recognised(body) -> None:
    error = from_response(400, {}, body)
    assert isinstance(error, ContextFullError) and error.exit_status == 10


def test_other_400s_stay_model_errors() -> None:
    error = from_response(400, {}, {"error": "Invalid request parameters"})
    assert not isinstance(error, ContextFullError)


def test_the_compaction_line() -> None:
    assert compacted_line(14, 61_000, 1_200) == "compacted 14 earlier rounds (61k tokens) into a 1.2k summary"


def test_the_estimate_is_corrected_by_the_server_and_stays_on_the_high_side() -> None:
    gauge = Gauge(10_000)
    messages = [{"role": "user", "content": "x" * 3000}]
    first = gauge.estimate(messages)
    assert first >= 1000  # 3 bytes a token before the server said anything
    size = len(json.dumps(messages).encode())
    gauge.measured(size, 2000)  # a denser tokenizer than assumed: its rate counts from now on
    more = [*messages, {"role": "assistant", "content": "y" * 300}]
    assert gauge.estimate(more) >= 2000 + 200


def test_a_cut_is_never_between_a_tool_call_and_its_answer() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
        {"role": "tool", "tool_call_id": "1", "content": "r"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "c"},
    ]
    assert cuts(messages) == [5]  # before the second-to-last user turn
    assert cuts(messages[:6]) == []  # two user turns: nothing before them to compact


async def test_one_cache_key_per_conversation_and_a_byte_stable_prefix() -> None:
    script = {
        "replies": [{"tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}]}, {"text": "done"}] * 3,
    }
    async with agent_on(script) as (fake, agent):
        for number in range(2):
            assert (await agent.ask(f"question {number}")).stopped_because is Exit.ANSWERED
        agent.clear()
        assert (await agent.ask("after clear")).stopped_because is Exit.ANSWERED
        bodies = chat(fake)
    keys = [body["prompt_cache_key"] for body in bodies]
    assert len(set(keys[:4])) == 1 and keys[4] == keys[5] != keys[0]  # a new conversation, a new key
    assert all(problem(body) is None for body in bodies)
    # Nothing in front of the conversation changes: the system prompt and the tools are the
    # same bytes in every request, and each request repeats the one before it, then adds.
    assert len({json.dumps([body["messages"][0], body["tools"]]) for body in bodies}) == 1
    for before, after in itertools.pairwise(bodies[:4]):  # the first conversation
        assert after["messages"][: len(before["messages"])] == before["messages"]


async def test_cached_input_is_on_the_receipt_and_priced_at_the_cache_price() -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 800}}
    pricing = {"input": {"usd": 1.0}, "cache_input": {"usd": 0.1}, "output": {"usd": 2.0}}
    script = {"replies": [{"text": "hi", "usage": usage}], "model_spec": {"pricing": pricing}}
    async with agent_on(script) as (_fake, agent):
        receipt = await agent.ask("hello")
    assert receipt.to_dict()["cached_tokens"] == 800
    assert receipt.cost_usd == pytest.approx((200 * 1.0 + 800 * 0.1 + 10 * 2.0) / 1_000_000)


def test_the_strict_fake_refuses_a_cache_key_that_is_not_a_string() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "prompt_cache_key": 5}
    assert problem(body) == ("prompt_cache_key", "Expected a non-empty string of at most 255 characters")
    assert problem({**body, "prompt_cache_key": "va-1"}) is None


async def test_pages_never_take_more_than_their_share_of_the_window() -> None:
    long = "x" * 20_000

    def dump() -> str:
        """A long result."""
        return long

    script = {"replies": [{"tool_calls": [{"name": "dump", "arguments": {}}]}, {"text": "done"}]}
    async with MockVenice(
        {"context_window": WINDOW, "model_spec": {"availableContextTokens": WINDOW}, **script}
    ) as fake:
        async with VeniceClient("k", fake.base_url, http_client=fake.http_client()) as client:
            facts = await client.discovery.model_facts("fake-model")
            agent = Agent(
                client,
                FunctionToolbox({"dump": dump}, read_only={"dump"}),
                AgentOptions(model="fake-model", facts=facts),
            )
            receipt = await agent.ask("dump it")
        assert receipt.stopped_because is Exit.ANSWERED
        result = fake.chat_requests[1]["messages"][-1]["content"]
    assert agent.pager.page_chars == 900  # 10% of 3,000 tokens at 3 bytes a token
    assert result.startswith("x" * 900) and "x" * 901 not in result


@pytest.mark.parametrize(
    ("script", "window", "source"),
    [
        ({"model_spec": {"availableContextTokens": 131_072}}, 131_072, "the model list"),  # Venice
        ({"entry": {"max_model_len": 8192, "model_spec": None}}, 8192, "the model list"),  # vLLM
        ({"entry": {"context_length": 32_768, "model_spec": None}}, 32_768, "the model list"),
        (
            {
                "entry": {"owned_by": "llamacpp", "model_spec": None},
                "props": {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1},
            },
            4096,
            "llama.cpp's /props",
        ),
        ({"entry": {"model_spec": None}}, None, None),  # nobody says: unknown, never guessed
    ],
)
async def test_the_window_is_read_from_what_the_server_says(script, window, source) -> None:
    async with MockVenice(script) as fake:
        async with VeniceClient("k", fake.base_url, http_client=fake.http_client()) as client:
            facts = await client.discovery.model_facts("fake-model")
    assert (facts.context_window, facts.context_source) == (window, source)
    asked_props = [seen.path for seen in fake.requests if seen.path == "/props"]
    assert asked_props == (["/props"] if "props" in script else [])  # only llama.cpp is asked


def test_a_setting_gives_or_narrows_the_window() -> None:
    assert choose_window(None, None, 16_000) == (16_000, "CONTEXT_TOKENS")
    assert choose_window(128_000, "the model list", 16_000) == (16_000, "CONTEXT_TOKENS")
    assert choose_window(8_000, "the model list", 16_000) == (8_000, "the model list")
    assert choose_window(None, None, None) == (None, None)


async def test_the_compaction_request_is_costed_and_capped_with_the_question() -> None:
    pricing = {"input": {"usd": 1.0}, "output": {"usd": 2.0}}
    script = {
        "replies": [{"text": "noted " * 20}],
        "loop": True,
        "model_spec": {"pricing": pricing, "maxCompletionTokens": 100},
    }
    async with agent_on(script) as (fake, agent):
        for number in range(12):
            receipt = await agent.ask(f"question {number}: {FILLER}")
        assert receipt.compacted is not None
        sizes = fake.request_tokens[-2:]  # the summary request and the question's own
    assert receipt.usage["prompt_tokens"] == sum(sizes)
    assert receipt.cost_usd == pytest.approx(
        (sum(sizes) * 1.0 + receipt.usage["completion_tokens"] * 2.0) / 1e6
    )
    # With the session's cap spent, the summary request is not made and nothing changes.
    async with agent_on(script, session_max_usd=0.05) as (fake, agent):
        for number in range(3):
            assert (await agent.ask(f"question {number}")).stopped_because is Exit.ANSWERED
        before, sent = copy.deepcopy(agent.history), len(chat(fake))
        agent.spent = 0.05
        said = await agent.compact()
        assert said.startswith("not compacted: stopped before model request 1: it could cost up to ")
        assert said.endswith("and $0.00 of the $0.05 session cap is left")
        assert agent.history == before and len(chat(fake)) == sent


async def test_under_a_cap_the_summary_request_asks_for_no_more_than_the_money_left_pays() -> None:
    # The model publishes no output limit (Venice's): each request, the summary's too, carries
    # what $0.004 pays at $2 a million output tokens after its worst-case input.
    pricing = {"input": {"usd": 1.0}, "output": {"usd": 2.0}}
    script = {"replies": [{"text": "noted"}], "loop": True, "model_spec": {"pricing": pricing}}
    async with agent_on(script, max_usd=0.004) as (fake, agent):
        for number in range(3):
            assert (await agent.ask(f"question {number}")).stopped_because is Exit.ANSWERED
        assert (await agent.compact()).startswith("compacted")
        summary = chat(fake)[-1]
    assert is_summary_request(summary)
    sent = json.dumps(summary["messages"], ensure_ascii=False, default=str)
    pays = int((0.004 - len(sent.encode()) * 1.0 / 1e6) * 1e6 / 2.0)
    assert pays - 1 <= summary["max_completion_tokens"] <= pays
    assert all(0 < body["max_completion_tokens"] < 2000 for body in chat(fake))


async def test_a_summary_request_that_fails_is_said_and_the_question_goes_on_uncompacted() -> None:
    # The twelfth question passes the threshold; its summary request fails, and the question,
    # which still fits the window, goes out with the conversation whole.
    replies = [{"text": "noted " * 20}] * 11 + [{"status": 500, "headers": {"x-should-retry": "false"}}]
    said: list[str] = []
    async with agent_on({"replies": [*replies, {"text": "still here"}]}) as (fake, agent):
        for number in range(11):
            assert (await agent.ask(f"question {number}: {FILLER}")).stopped_because is Exit.ANSWERED
        before = copy.deepcopy(agent.history)

        def events(event: object) -> None:
            if isinstance(event, Notice):
                said.append(event.text)

        receipt = await agent.ask(f"question 11: {FILLER}", events=events)
        last = chat(fake)[-1]
    assert receipt.stopped_because is Exit.ANSWERED and receipt.compacted is None
    assert said == [
        "not compacted: the model server answered 500 Internal Server Error: Inference failed [request fake-12]"
    ]
    assert last["messages"] == [*before, {"role": "user", "content": f"question 11: {FILLER}"}]


# The pure parts, each at its edges (issue 39's mutation run): what the gauge counts and refuses,
# the wordings people read, where a compaction may cut, and what a kept record must be.


def test_the_gauge_refuses_compacts_and_summarises_at_its_edges() -> None:
    gauge = Gauge(1000)  # compacts past 80%
    assert gauge.fits(1000) and not gauge.fits(1001)  # a request the window holds exactly is sent
    assert not gauge.over_threshold(800) and gauge.over_threshold(801)
    assert gauge.room_for_summary(800) and not gauge.room_for_summary(801)
    unknown = Gauge()  # the server is the judge
    assert unknown.fits(10**9) and not unknown.over_threshold(10**9) and unknown.room_for_summary(10**9)


def test_the_estimate_counts_three_bytes_a_token_until_the_server_measures() -> None:
    gauge = Gauge(100_000)
    assert (gauge.estimate_bytes(3000), gauge.estimate_bytes(3001)) == (1000, 1001)  # rounded up
    for odd in (True, 0, -5, "900", None):  # not a count the server made: nothing learnt
        gauge.measured(3000, odd)
        assert gauge.estimate_bytes(3000) == 1000
    gauge.measured(3000, 500)  # a sparser tokenizer: the measured part as measured, the rest at 3
    assert (gauge.estimate_bytes(3000), gauge.estimate_bytes(3300)) == (500, 600)
    gauge.measured(3300, 0)  # a response that counted nothing forgets nothing
    assert gauge.estimate_bytes(3300) == 600
    gauge.measured(3000, 1)
    assert gauge.estimate_bytes(3000) == 1
    gauge.measured(3000, 2000)  # a denser one: its rate from now on, before and after
    assert (gauge.estimate_bytes(3300), gauge.estimate_bytes(1500)) == (2200, 1000)
    # What is sent: the messages and the tools' schemas; an image as the tokens it is estimated at.
    messages, tools = [{"role": "user", "content": "héllo"}], [{"type": "function", "name": "x"}]
    assert request_bytes(messages, tools) == len(json.dumps([*messages, *tools], ensure_ascii=False).encode())
    url = "data:image/png;base64,AAAA"  # no size to read: the most an image can be
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    empty = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": ""}}]}]
    assert request_bytes(image) == len(json.dumps(empty)) + IMAGE_UNKNOWN_TOKENS * BYTES_PER_TOKEN
    assert Gauge().estimate(image, tools) == math.ceil(request_bytes(image, tools) / BYTES_PER_TOKEN)


def test_counts_and_windows_read_plainly() -> None:
    counts = (
        850,
        999,
        1000,
        1050,
        1200,
        4000,
        9999,
        61_000,
        128_000,
        999_000,
        1_000_000,
        1_500_000,
        3_350_000,
    )
    assert [short(count) for count in counts] == [
        "850", "999", "1k", "1.1k", "1.2k", "4k", "10k", "61k", "128k", "999k", "1M", "1.5M", "3.4M",
    ]  # fmt: skip
    assert used(43_520, 128_000) == "34% of 128k" and used(1000, 1000) == "100% of 1k"
    assert used(12_000, None) == "12k tokens of an unknown window"
    assert window_line(128_000, "from the model list") == "128k tokens (from the model list)"
    assert window_line(4096) == "4.1k tokens"
    assert window_line(None) == "unknown (the server does not say; set CONTEXT_TOKENS or --context-tokens)"
    assert full_refusal(130_000, 128_000, " (even after compacting)") == (
        "the next request needs about 130k tokens and the model's window is 128k (even after compacting); "
        "/compact, /clear, or a model with a larger window"
    )
    assert compacted_line(1, 2_000, 300) == "compacted 1 earlier round (2k tokens) into a 300 summary"


def test_a_page_takes_a_tenth_of_the_window_at_most_and_never_under_100_characters() -> None:
    assert page_limit(None, 5000) == 5000  # no window known: the page as set
    assert page_limit(10_000, 5000) == 3000  # 1,000 tokens of 3 bytes
    assert page_limit(100_000, 5000) == 5000
    assert page_limit(100, 5000) == 100


def test_the_servers_window_is_used_unless_a_setting_narrows_it() -> None:
    assert choose_window(16_000, "the model list", 16_000) == (
        16_000,
        "the model list",
    )  # the same: the server's
    assert choose_window(128_000, "/props", None) == (128_000, "/props")
    assert choose_window(0, "the model list", None) == (None, None)  # a window of 0 is none


def test_a_compaction_cuts_only_before_a_user_turn_after_the_head_and_the_latest_first() -> None:
    system = [{"role": "system", "content": "s"}, {"role": "developer", "content": "d"}]
    turns = [{"role": role, "content": role[0]} for role in ["user", "assistant"] * 4]
    assert cuts([*system, *turns]) == [6, 4]  # the last two user turns kept whole, the most first
    # A greeting before the first question is an earlier round too; the head never is.
    greeted = [*system, {"role": "assistant", "content": "hi"}, *turns[:4]]
    assert cuts(greeted) == [3]
    assert cuts(system) == [] and leading_system(system) == 2 and leading_system([]) == 0
    assert leading_system([*system, *turns, *system]) == 2 and leading_system([system[0], *turns]) == 1


def test_the_compactions_of_a_question_add_up_from_the_first_size_to_the_last() -> None:
    compaction = Compaction()
    assert compaction.to_dict() is None  # none: the receipt has no `compacted`
    compaction.add(3, 5000, 400)
    compaction.add(2, 3000, 300)
    assert compaction.to_dict() == {"rounds": 5, "tokens_before": 5000, "tokens_after": 300}
    assert compaction.times == [3, 2]


def test_a_record_replays_each_compaction_over_the_conversation_it_had_then() -> None:
    system, summary = {"role": "system", "content": "s"}, {"role": "user", "content": "summary"}
    one, two, three = ({"role": "user", "content": str(n)} for n in range(3))
    record = [system, one, two, marker(1, 3, summary, 2, 90, 10), three]
    assert replay(record) == [system, summary, three]
    again = {"role": "user", "content": "summary of the summary"}
    assert replay([*record, marker(1, 2, again, 1, 10, 5)]) == [system, again, three]
    assert record_problem([*record, marker(1, 2, again, 1, 10, 5)]) is None


CALL = {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
GOOD = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": [{"type": "text", "text": "q"}]},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "r"},
    {"role": "assistant", "content": "done"},
]
SUMMARY = {"role": "user", "content": "summary"}
MARKER = {
    "role": "compaction",
    "replaced": [1, 5],
    "summary": SUMMARY,
    "rounds": 1,
    "tokens_before": 9,
    "tokens_after": 1,
}


ROLE = "is not one of system, developer, user, assistant, tool or compaction"
RANGE = "a compaction's 'replaced' is [start, end] of the 5 messages before it"
COUNTS = "a compaction's 'rounds', 'tokens_before' and 'tokens_after' are counts"
KEPT = "a compaction's 'summary' is a message without tool calls"
CONTENT = "a user message's content is text or a list of parts"
CALLS = "only an assistant message has tool_calls, a list"
A_CALL = "a tool call has an 'id' and a 'function' with a 'name'"
ANSWERS = "a tool message names the call it answers ('tool_call_id')"


def asking(*calls: object) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


@pytest.mark.parametrize(
    ("record", "found"),
    [
        ([*GOOD, 42], (5, "a message is a JSON object, not int")),
        ([*GOOD, {"role": "wizard", "content": "x"}], (5, f"the role 'wizard' {ROLE}")),
        ([*GOOD, {"content": "x"}], (5, f"the role None {ROLE}")),
        *(([*GOOD, {**MARKER, "replaced": bad}], (5, RANGE)) for bad in ([1, 6], [3, 2], [-1, 2], [True, 2], [1, 2, 3], "1:5")),
        *(([*GOOD, {**MARKER, name: bad}], (5, COUNTS)) for name, bad in (("rounds", -1), ("tokens_before", "9"), ("tokens_after", None))),
        *(([*GOOD, {**MARKER, "summary": bad}], (5, KEPT)) for bad in ("summary", {"role": "compaction", "content": "s"}, {**asking(CALL), "content": "s"})),
        ([*GOOD, {**MARKER, "summary": {"role": "user", "content": None}}], (5, CONTENT)),
        *(([*GOOD, {"role": "user", "content": bad}], (5, CONTENT)) for bad in (7, [{"text": "q"}], ["q"])),
        ([*GOOD, {"role": "user", "content": "q", "tool_calls": []}], (5, CALLS)),
        ([*GOOD, {"role": "assistant", "content": "a", "tool_calls": CALL}], (5, CALLS)),
        *(([*GOOD, asking(bad)], (5, A_CALL)) for bad in ("c1", {**CALL, "id": 2}, {**CALL, "function": "echo"}, {**CALL, "function": {}})),
        ([*GOOD, {"role": "tool", "content": "r"}], (5, ANSWERS)),
        ([*GOOD[:2], *GOOD[3:]], (2, "a tool result ('c1') without its call just before it")),
        ([*GOOD, GOOD[3]], (5, "a tool result ('c1') without its call just before it")),
        ([*GOOD[:3], {**GOOD[3], "tool_call_id": "c2"}, *GOOD[4:]], (3, "a tool result ('c2') without its call just before it")),
        ([*GOOD[:3], *GOOD[4:]], (2, "the tool call 'c1' has no result after it")),
        (GOOD[:3], (2, "the tool call 'c1' has no result after it")),
        ([*GOOD[:3], MARKER], (3, "a compaction's 'replaced' is [start, end] of the 3 messages before it")),
    ],
)  # fmt: skip
def test_a_record_that_is_not_a_conversation_is_refused_naming_the_entry_and_why(record, found) -> None:
    assert record_problem(record) == found


def test_a_well_formed_record_is_a_conversation() -> None:
    assert record_problem(GOOD) is None and record_problem([]) is None
    assert record_problem([*GOOD, MARKER, {"role": "user", "content": "next"}]) is None
    # No system prompt: a compaction from the first message; of user turns alone: 0 rounds.
    asked = [{"role": "user", "content": "q"}, {"role": "user", "content": "again"}]
    assert record_problem([*asked, {**MARKER, "replaced": [0, 1], "rounds": 0, "tokens_after": 0}]) is None
    assert record_problem([*asked, {**MARKER, "replaced": [2, 2]}]) is None  # a summary that replaced none
    # An assistant turn with two calls, answered in order; an assistant's content may be null.
    two = [{**CALL, "id": "a"}, {**CALL, "id": "b"}]
    answered = [{"role": "tool", "tool_call_id": call, "content": "r"} for call in ("a", "b")]
    assert (
        record_problem([GOOD[0], {"role": "assistant", "content": None, "tool_calls": two}, *answered])
        is None
    )
    assert record_problem([{"role": "assistant", "content": None, "tool_calls": two}, *answered[::-1]]) == (
        1, "a tool result ('b') without its call just before it",
    )  # fmt: skip
