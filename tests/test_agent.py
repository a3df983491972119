"""The agent over real HTTP against the fake Venice server: rounds, consent, exits, rollback."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
from contextlib import asynccontextmanager

import pytest

from venice_terminal_agent import Exit, ToolError
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.consent import Consent
from venice_terminal_agent.core.costs import Prices
from venice_terminal_agent.core.defaults import MAX_ROUNDS
from venice_terminal_agent.core.events import ConsentAsked, ConsentGiven, Finished, TextDelta
from venice_terminal_agent.core.toolbox import CombinedToolbox, FunctionToolbox
from venice_terminal_agent.model import RetryPolicy, VeniceClient
from venice_terminal_agent.model.models import ModelFacts
from venice_terminal_agent.model.planner import NOT_RUN
from venice_terminal_agent.testing import MockVenice
from venice_terminal_agent.testing.checks import problem
from venice_terminal_agent.tools.builtin import builtin_toolbox


async def no_wait(_seconds: float) -> None:
    return None


def toolbox(**extra) -> FunctionToolbox:
    def echo(text: str) -> str:
        """Say it back."""
        return text

    def fail(reason: str = "") -> str:
        raise ToolError(f"cannot do that {reason}".strip())

    def charge(amount: int) -> str:
        """Costs money."""
        return f"charged {amount}"

    functions = {"echo": echo, "fail": fail, "charge": charge, **extra}
    return FunctionToolbox(functions, read_only={"echo", "fail", *extra})


def calls(*pairs, same_index: bool = False) -> dict:
    reply = {"tool_calls": [{"name": name, "arguments": arguments} for name, arguments in pairs]}
    return {**reply, "same_index": True} if same_index else reply


@asynccontextmanager
async def agent_on(script, tools=None, **options):
    async with MockVenice(script) as fake:
        policy = RetryPolicy(sleep=no_wait, jitter=lambda: 0.5)
        async with VeniceClient("k", fake.base_url, retry=policy, http_client=fake.http_client()) as client:
            yield fake, Agent(client, tools or toolbox(), AgentOptions(model="fake-model", **options))


def roles(messages: list[dict]) -> list[str]:
    return [m["role"] for m in messages]


async def test_a_tool_round_then_an_answer() -> None:
    async with agent_on([calls(("echo", {"text": "hi"})), {"text": "It said hi."}]) as (fake, agent):
        receipt = await agent.ask("what does echo say?")
    assert receipt.stopped_because is Exit.ANSWERED and receipt.answer == "It said hi."
    assert roles(agent.history) == ["system", "user", "assistant", "tool", "assistant"]
    assert agent.history[3]["content"] == "hi"
    assert [s.tool for s in receipt.steps] == ["echo"]
    assert receipt.model == "fake-model" and receipt.usage == {"prompt_tokens": 20, "completion_tokens": 10,
                                                               "total_tokens": 30}  # fmt: skip
    assert roles(fake.chat_requests[1]["messages"]) == ["system", "user", "assistant", "tool"]


async def test_three_parallel_calls_with_one_repeated_index() -> None:
    three = calls(("echo", {"text": "a"}), ("echo", {"text": "b"}), ("echo", {"text": "c"}), same_index=True)
    async with agent_on([three, {"text": "abc"}]) as (fake, agent):
        receipt = await agent.ask("three at once")
    assert receipt.stopped_because is Exit.ANSWERED
    assert [s.arguments for s in receipt.steps] == [{"text": "a"}, {"text": "b"}, {"text": "c"}]
    sent = fake.chat_requests[1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == ["a", "b", "c"]
    assert [c["function"]["name"] for c in sent[2]["tool_calls"]] == ["echo", "echo", "echo"]


async def test_approved_calls_run_in_parallel() -> None:
    started = 0
    both = asyncio.Event()

    async def wait_for_both(name: str) -> str:
        nonlocal started
        started += 1
        if started == 2:
            both.set()
        await both.wait()  # a runner that ran calls one at a time would never get here
        return name

    script = [calls(("meet", {"name": "x"}), ("meet", {"name": "y"})), {"text": "met"}]
    async with agent_on(script, tools=toolbox(meet=wait_for_both)) as (_, agent):
        receipt = await asyncio.wait_for(agent.ask("meet"), timeout=10)
    assert receipt.stopped_because is Exit.ANSWERED and [s.result for s in receipt.steps] == ["x", "y"]


async def test_reasoning_fields_go_back_as_received() -> None:
    details = [{"type": "reasoning.encrypted", "data": "opaque", "index": 0}]
    first = {**calls(("echo", {"text": "x"})), "reasoning_content": "let me think", "reasoning_details": details,
             "thought_signature": "sig-1", "extra": {"provider_field": {"kept": True}}}  # fmt: skip
    async with agent_on([first, {"text": "done", "reasoning_content": "easy"}]) as (fake, agent):
        await agent.ask("think")
    sent = fake.chat_requests[1]["messages"][2]
    assert sent["content"] is None
    assert sent["reasoning_content"] == "let me think"
    assert sent["reasoning_details"] == details
    assert sent["thought_signature"] == "sig-1"
    assert sent["provider_field"] == {"kept": True}
    assert agent.history[-1] == {"role": "assistant", "content": "done", "reasoning_content": "easy"}


async def test_a_declined_call_does_not_run_and_the_model_is_told() -> None:
    asked = []

    async def say_no(call, spec, why) -> bool:
        asked.append((call.tool, spec.name))
        return False

    events = []
    script = [calls(("charge", {"amount": 5})), {"text": "You declined, so nothing was charged."}]
    async with agent_on(script, approver=say_no) as (fake, agent):
        receipt = await agent.ask("charge me", events=events.append)
    assert receipt.stopped_because is Exit.ANSWERED and receipt.steps == ()
    assert asked == [("charge", "charge")]
    tool_message = fake.chat_requests[1]["messages"][3]
    assert "declined" in json.loads(tool_message["content"])["error"]
    consent = [e for e in events if isinstance(e, ConsentAsked | ConsentGiven)]
    assert [type(e).__name__ for e in consent] == ["ConsentAsked", "ConsentGiven"]
    assert consent[1].approved is False
    assert [item.to_dict() for item in receipt.proposed] == [
        {"tool": "charge", "arguments": {"amount": 5}, "outcome": "declined"}
    ]


async def test_without_an_approver_the_model_is_told_nobody_was_asked_not_that_they_declined() -> None:
    # The Python API with no approver: nobody can be asked, so nobody declined (issue 22, 9).
    script = [calls(("charge", {"amount": 5}), ("echo", {"text": "free"})), {"text": "Nothing was charged."}]
    async with agent_on(script) as (fake, agent):
        receipt = await agent.ask("charge me")
    told = json.loads(fake.chat_requests[1]["messages"][3]["content"])["error"]
    assert told == "this call needs the user's yes and there was no one to ask; it did not run"
    assert [(item.tool, str(item.outcome)) for item in receipt.proposed] == [
        ("charge", "no_one_to_ask"),
        ("echo", "ran"),
    ]
    assert [step.tool for step in receipt.steps] == ["echo"]
    assert receipt.summary().startswith(
        "stopped: answered · 2 calls proposed: 1 ran, 1 not run (no one to ask)"
    )


async def test_a_read_only_tool_runs_even_when_the_approver_says_no() -> None:
    asked = []

    async def say_no(call, spec, why) -> bool:
        asked.append(call.tool)
        return False

    async with agent_on([calls(("echo", {"text": "free"})), {"text": "ok"}], approver=say_no) as (_, agent):
        receipt = await agent.ask("echo")
    assert [s.result for s in receipt.steps] == ["free"] and asked == []


async def test_an_approver_that_raises_is_a_no() -> None:
    async def broken(call, spec) -> bool:
        raise RuntimeError("the terminal went away")

    script = [calls(("charge", {"amount": 5})), {"text": "Nothing was charged."}]
    async with agent_on(script, approver=broken) as (fake, agent):
        receipt = await agent.ask("charge me")
    assert receipt.stopped_because is Exit.ANSWERED and receipt.steps == ()  # charge never ran
    assert "declined" in json.loads(fake.chat_requests[1]["messages"][3]["content"])["error"]


async def test_auto_approve_runs_paid_tools_without_asking() -> None:
    async with agent_on([calls(("charge", {"amount": 1})), {"text": "ok"}], auto_approve=True) as (_, agent):
        receipt = await agent.ask("charge")
    assert [s.result for s in receipt.steps] == ["charged 1"]


async def test_malformed_arguments_go_back_to_the_model_which_recovers() -> None:
    script = [
        {"tool_calls": [{"name": "echo", "arguments": '{"text": "unclosed'}]},
        calls(("echo", {"text": "fixed"})),
        {"text": "fixed it"},
    ]
    async with agent_on(script) as (fake, agent):
        receipt = await agent.ask("go")
    assert receipt.stopped_because is Exit.ANSWERED and [s.result for s in receipt.steps] == ["fixed"]
    error = json.loads(fake.chat_requests[1]["messages"][3]["content"])["error"]
    assert "not valid JSON" in error


ANSWERED_FIRST = [calls(("echo", {"text": "warm"})), {"text": "warmed up"}]
TWO_ECHOES = [calls(("echo", {"text": "1"})), calls(("echo", {"text": "2"}))]
ROLLED_BACK = {  # exit: (script after the first question, agent options, the question's budget)
    Exit.TOOL_ERROR: ([calls(("fail", {"reason": "a"})), calls(("fail", {"reason": "b"}))], {}, None),
    Exit.MODEL_ERROR: ([{"status": 400, "error": "Invalid request parameters"}], {}, None),
}
PARTIAL = {  # exit: (script up to the last request, agent options, budget, tool results kept)
    Exit.BUDGET: (TWO_ECHOES, {}, 1, ["1", NOT_RUN]),
    Exit.REPEATED_CALL: (
        [calls(("echo", {"text": "1"})), calls(("echo", {"text": "1"}))],
        {},
        None,
        ["1", NOT_RUN],
    ),
    Exit.MAX_ROUNDS: ([calls(("echo", {"text": "1"}))], {"max_rounds": 2}, None, ["1"]),
}


@pytest.mark.parametrize("exit", list(ROLLED_BACK))
async def test_a_failed_question_leaves_the_history_unchanged(exit: Exit) -> None:
    script, options, budget = ROLLED_BACK[exit]
    async with agent_on([*ANSWERED_FIRST, *script], **options) as (_, agent):
        first = await agent.ask("warm up")
        before = copy.deepcopy(agent.history)
        receipt = await agent.ask("this one fails", budget=budget)
    assert first.stopped_because is Exit.ANSWERED
    assert receipt.stopped_because is exit
    assert receipt.refusal and receipt.answer is None and not receipt.partial
    assert agent.history == before
    assert roles(before) == ["system", "user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize("exit", list(PARTIAL))
async def test_an_early_stop_keeps_what_was_paid_for_and_answers_from_it(exit: Exit) -> None:
    script, options, budget, results = PARTIAL[exit]
    last = {"text": "Echo said 1; I could not check 2."}
    async with agent_on([*ANSWERED_FIRST, *script, last, {"text": "going on"}], **options) as (fake, agent):
        await agent.ask("warm up")
        before = copy.deepcopy(agent.history)
        receipt = await agent.ask("echo 1 then 2", budget=budget)
        kept = copy.deepcopy(agent.history)
        await agent.ask("go on")
    assert receipt.stopped_because is exit and receipt.refusal
    assert receipt.partial and receipt.answer == last["text"] and receipt.to_dict()["partial"] is True
    assert "(partial answer)" in receipt.summary()
    # The last request had no tools and asked for an answer from what was gathered.
    final = fake.chat_requests[-2]
    assert "tools" not in final and "tool_choice" not in final
    assert "Answer now from what you have gathered" in final["messages"][-1]["content"]
    # Kept: the question, each round with every call answered, the partial answer; not the note.
    added = kept[len(before) :]
    assert added[0] == {"role": "user", "content": "echo 1 then 2"}
    assert [m["content"] for m in added if m["role"] == "tool"][: len(results)] == [
        r if r == "1" else json.dumps({"error": r}) for r in results
    ]
    assert added[-1] == {"role": "assistant", "content": last["text"]}
    assert problem({"model": "m", "messages": kept}) is None
    # The next question builds on it, and the strict server took every request.
    assert fake.chat_requests[-1]["messages"][: len(kept)] == kept
    assert all(seen.status == 200 for seen in fake.requests)


async def test_a_venice_400_ends_the_question_with_a_readable_refusal() -> None:
    body = {
        "error": "Invalid request parameters",
        "details": {"_errors": [], "model": {"_errors": ["Required"]}},
    }
    async with agent_on([{"status": 400, "error": body}]) as (_, agent):
        receipt = await agent.ask("hi")
    assert receipt.stopped_because is Exit.MODEL_ERROR
    assert receipt.refusal.startswith("the model server answered 400 Bad Request: Invalid request parameters")
    assert "model: Required" in receipt.refusal


async def test_429_is_retried_then_answered() -> None:
    script = [{"status": 429, "headers": {"Retry-After": "1"}}, {"text": "after the wait"}]
    async with agent_on(script) as (fake, agent):
        receipt = await agent.ask("hi")
    assert receipt.stopped_because is Exit.ANSWERED and receipt.answer == "after the wait"
    assert [seen.status for seen in fake.requests] == [429, 200]


async def test_cancelling_mid_stream_rolls_back_and_the_next_question_works() -> None:
    streaming = asyncio.Event()
    finished = []

    def sink(event) -> None:
        if isinstance(event, TextDelta):
            streaming.set()
        if isinstance(event, Finished):
            finished.append(event.receipt)

    script = [*ANSWERED_FIRST, {"text": "this never ends", "hang": True}, {"text": "back again"}]
    async with agent_on(script) as (_, agent):
        await agent.ask("warm up")
        before = copy.deepcopy(agent.history)
        task = asyncio.create_task(agent.ask("slow", events=sink))
        await streaming.wait()
        task.cancel()
        receipt = await task
        assert receipt.stopped_because is Exit.CANCELLED
        assert agent.history == before
        again = await agent.ask("again")
    assert finished[-1].stopped_because is Exit.CANCELLED
    assert again.stopped_because is Exit.ANSWERED and again.answer == "back again"
    assert roles(agent.history)[-2:] == ["user", "assistant"]


async def test_cancelling_mid_tool_rolls_back() -> None:
    running = asyncio.Event()

    async def forever(seconds: int) -> str:
        running.set()
        await asyncio.Event().wait()
        return "never"

    async with agent_on([calls(("wait", {"seconds": 9}))], tools=toolbox(wait=forever)) as (_, agent):
        task = asyncio.create_task(agent.ask("wait"))
        await running.wait()
        task.cancel()
        receipt = await task
    assert receipt.stopped_because is Exit.CANCELLED
    assert [s.error for s in receipt.steps] == ["cancelled while running"]
    assert roles(agent.history) == ["system"]


async def test_an_exception_leaves_the_history_unchanged() -> None:
    class Broken:
        async def complete(self, *args, **kwargs):
            raise RuntimeError("a bug")

    agent = Agent(Broken(), toolbox(), AgentOptions(model="m"))
    with pytest.raises(RuntimeError):
        await agent.ask("hi")
    assert roles(agent.history) == ["system"]


async def test_clear_keeps_only_the_system_prompt() -> None:
    async with agent_on([{"text": "hello"}], system_prompt="Be terse.") as (_, agent):
        await agent.ask("hi")
        history = agent.history
        agent.clear()
    assert agent.history is history and agent.history == [{"role": "system", "content": "Be terse."}]


def test_max_rounds_is_checked() -> None:
    with pytest.raises(ValueError, match="between 1 and 40"):
        Agent(object(), toolbox(), AgentOptions(model="m", max_rounds=41))


@pytest.mark.parametrize("cap", ["max_usd", "session_max_usd"])
@pytest.mark.parametrize(
    ("usd", "shown"), [(float("inf"), "inf"), (float("nan"), "nan"), (0.0, "0.0"), (-1.0, "-1.0")]
)
def test_a_money_cap_that_caps_nothing_or_everything_is_refused_as_the_settings_refuse_it(
    cap: str, usd: float, shown: str
) -> None:
    """The Python API's caps as the command line's: `max_usd=inf` once answered uncapped, and
    nan, 0 or a negative cap stopped every question before its first request ("$NaN cap")."""
    with pytest.raises(ValueError, match=rf"^{cap} must be a finite number more than 0, not {shown}$"):
        Agent(object(), toolbox(), AgentOptions(model="m", **{cap: usd}))
    priced = ModelFacts(prices=Prices(input=1.0, output=2.0))
    assert (
        getattr(Agent(object(), toolbox(), AgentOptions(model="m", facts=priced, **{cap: 1e-9})), cap) == 1e-9
    )


async def test_a_tool_the_catalogue_does_not_describe_asks_before_it_runs() -> None:
    # A toolbox that can run a name its specs() does not list: nothing says it is read-only,
    # so it must not run without a yes.
    from venice_terminal_agent.agent import Agent, AgentOptions
    from venice_terminal_agent.core.toolbox import FunctionToolbox

    ran: list[str] = []

    class Undescribed(FunctionToolbox):
        def specs(self):
            return []

    tools = Undescribed({"charge": lambda: ran.append("charge") or "charged"})
    asked: list[str] = []

    async def approver(call, spec, why):
        asked.append(spec.name)
        return False

    class OneCallModel:
        calls = 0

        async def complete(self, model, messages, tools=(), *, temperature=None, events=None):
            from venice_terminal_agent.model.stream import Completion

            self.calls += 1
            if self.calls == 1:
                return Completion(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "charge", "arguments": "{}"},
                            }
                        ],
                    }
                )
            return Completion({"role": "assistant", "content": "ok"})

    agent = Agent(OneCallModel(), tools, AgentOptions(model="m", approver=approver))
    receipt = await agent.ask("charge me")
    assert asked == ["charge"]
    assert ran == []
    assert receipt.steps == ()


async def test_a_long_result_reaches_the_model_with_its_page_note() -> None:
    # The model must learn which page ids hold the rest, or the cut part is lost to it.
    script = [calls(("echo", {"text": "x" * 2500})), calls(("page", {"id": 2})), {"text": "read it"}]
    async with agent_on(script, max_tool_result_chars=1000) as (fake, agent):
        agent.tools = Consent(CombinedToolbox(toolbox(), builtin_toolbox(pager=agent.pager)))
        receipt = await agent.ask("read the long thing")
    assert receipt.stopped_because is Exit.ANSWERED
    first_tool_message = fake.chat_requests[1]["messages"][-1]
    assert first_tool_message["role"] == "tool"
    assert first_tool_message["content"].startswith("x" * 1000)
    assert "1500 more characters in page ids 2-3: call page(id=2)" in first_tool_message["content"]
    second = fake.chat_requests[2]["messages"][-1]["content"]
    assert second.startswith("x" * 1000) and "call page(id=3)" in second


@pytest.mark.parametrize("shape", ["list", "object"])
async def test_a_long_list_or_object_reaches_the_model_paged_like_text(shape: str) -> None:
    """A tool's long list or object is paged as its JSON text is, or it would reach the model
    whole, past the page the model's window was sized for."""
    value = [f"row {n}" for n in range(400)] if shape == "list" else {f"k{n}": n for n in range(400)}

    def rows() -> object:
        """A long structured result."""
        return value

    script = [calls(("rows", {})), {"text": "read it"}]
    async with agent_on(script, toolbox(rows=rows), max_tool_result_chars=1000) as (fake, agent):
        receipt = await agent.ask("list the rows")
    assert receipt.stopped_because is Exit.ANSWERED
    sent = fake.chat_requests[1]["messages"][-1]
    text = json.dumps(value, ensure_ascii=False)
    assert sent["role"] == "tool" and len(text) > 2000
    assert sent["content"].startswith(text[:1000])
    assert text[1000:1100] not in sent["content"]  # the rest waits in its pages
    assert "call page(id=2)" in sent["content"]


async def test_local_data_asks_for_the_rest_of_the_conversation_until_clear(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("private", encoding="utf-8")
    asked = []

    async def say_no(call, spec, why) -> bool:
        asked.append((call.tool, str(why)))
        return False

    def search(q: str) -> str:
        """Leaves the machine (it has a server), though read-only."""
        return "found"

    class Remote(FunctionToolbox):
        def specs(self):
            return [spec.replace(server="web") for spec in super().specs()]

    tools = CombinedToolbox(builtin_toolbox(tmp_path), Remote({"search": search}, read_only={"search"}))
    script = [
        calls(("read_file", {"path": "notes.txt"})),
        {"text": "read it"},
        calls(("search", {"q": "private"})),
        {"text": "declined"},
        calls(("search", {"q": "ok"})),
        {"text": "searched"},
    ]
    async with agent_on(script, tools=tools, approver=say_no) as (_, agent):
        await agent.ask("read my notes")
        second = await agent.ask("now search")  # a later question of the same conversation
        assert asked == [("search", "local_data")] and second.steps == ()
        agent.clear()
        third = await agent.ask("search again")
    assert [s.result for s in third.steps] == ["found"] and len(asked) == 1


async def test_a_question_that_brings_local_data_makes_a_remote_tool_ask_from_its_first_call() -> None:
    """Piped text is local data from the start (README, Local data leaves only with a yes): a
    read-only tool that leaves the machine asks before its first call, none read yet."""
    asked = []

    async def say_no(call, spec, why) -> bool:
        asked.append((call.tool, str(why)))
        return False

    class Remote(FunctionToolbox):
        def specs(self):
            return [spec.replace(server="web") for spec in super().specs()]

    tools = Remote({"search": lambda q: "found"}, read_only={"search"})
    script = [
        calls(("search", {"q": "my notes"})),
        {"text": "declined"},
        calls(("search", {"q": "x"})),
        {"text": "ok"},
    ]
    async with agent_on(script, tools=tools, approver=say_no) as (_, agent):
        piped = await agent.ask("summarise this: my private notes", local_data=True)
        assert asked == [("search", "local_data")] and piped.steps == ()
        agent.clear()
        plain = await agent.ask("search x")
    assert [s.result for s in plain.steps] == ["found"] and len(asked) == 1


async def test_a_rolled_back_question_takes_its_local_data_with_it(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("private", encoding="utf-8")
    script = [calls(("read_file", {"path": "notes.txt"})), {"status": 400}]
    async with agent_on(script, tools=builtin_toolbox(tmp_path)) as (_, agent):
        receipt = await agent.ask("read my notes")
    assert receipt.stopped_because is Exit.MODEL_ERROR and receipt.steps[0].result == "private"
    assert agent.tools.local_data is False  # rolled back: the contents are not in the conversation


def test_one_options_record_makes_many_conversations_and_none_changes_it() -> None:
    """`AgentOptions` is frozen: a front that makes a conversation per editor session or per
    chat hands each the same record, and each gets its own history, pager and consent."""
    options = AgentOptions(model="m", budget=2, max_tool_result_chars=500)
    first, second = Agent(object(), toolbox(), options), Agent(object(), toolbox(), options)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.budget = 3  # type: ignore[misc]
    assert first.pager is not second.pager and first.pager.page_chars == 500
    assert first.history is not second.history and first.tools is not second.tools
    assert (first.budget, first.max_rounds, first.model) == (2, MAX_ROUNDS, "m")
    assert options.replace(budget=5).budget == 5 and options.budget == 2


@pytest.mark.parametrize("exit", [Exit.COST_CAP, Exit.INTERRUPTED])
async def test_a_request_refused_outside_the_loop_ends_on_the_exit_it_names(exit: Exit) -> None:
    """A client that will not send a request (a batch's shared cap, a durable run's request
    found in flight after a crash) raises `Refused`: the question ends on its exit, said, and
    rolls back like any question that did not answer."""
    from venice_terminal_agent.core.errors import Refused

    class Ledgered:
        async def complete(self, *args, **kwargs):
            raise Refused(f"not sent: {exit}", exit=exit)

    agent = Agent(Ledgered(), toolbox(), AgentOptions(model="m"))
    receipt = await agent.ask("hi")
    assert receipt.stopped_because is exit and receipt.refusal == f"not sent: {exit}"
    assert roles(agent.history) == ["system"]


async def test_a_lone_surrogate_in_what_is_sent_goes_as_a_replacement_character_not_a_crash() -> None:
    """UTF-8 cannot carry half of a surrogate pair (a program's text cut in the middle of an
    emoji, an argument decoded under a non-UTF-8 locale): the request sends U+FFFD in its
    place instead of failing to encode, and the question is answered."""
    async with agent_on([{"text": "hello"}], system_prompt="Be terse \ud83d.") as (fake, agent):
        receipt = await agent.ask("hi \udcc3")
    assert receipt.stopped_because is Exit.ANSWERED
    sent = [message["content"] for message in fake.chat_requests[0]["messages"]]
    assert sent == ["Be terse \ufffd.", "hi \ufffd"]
