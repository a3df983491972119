"""Properties of the agent over any model behaviour, against the fake server (real HTTP).

Whatever the model does (answers, parallel calls, unknown tools, malformed arguments, paid
tools declined, server errors), a question ends with one named exit within its budget and
round limit, the server never sees a malformed conversation (it would answer 400), and the
history is either grown by a well-formed exchange (answered) or left exactly as it was.
"""

from __future__ import annotations

import asyncio
import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from venice_terminal_agent import Exit, ToolError
from venice_terminal_agent.agent import Agent, AgentOptions
from venice_terminal_agent.core.toolbox import FunctionToolbox
from venice_terminal_agent.model import RetryPolicy, VeniceClient
from venice_terminal_agent.testing import MockVenice
from venice_terminal_agent.testing.checks import problem


async def no_wait(_seconds: float) -> None:
    return None


def tools() -> FunctionToolbox:
    def echo(text: str = "") -> str:
        return text

    def fail(reason: str = "") -> str:
        raise ToolError(f"refused {reason}")

    def charge(amount: int = 0) -> str:
        return f"charged {amount}"

    return FunctionToolbox({"echo": echo, "fail": fail, "charge": charge}, read_only={"echo", "fail"})


a_call = st.one_of(
    st.builds(
        lambda n, t: {"name": n, "arguments": {"text": t}},
        st.sampled_from(["echo", "nope"]),
        st.text(max_size=3),
    ),
    st.builds(lambda r: {"name": "fail", "arguments": {"reason": r}}, st.sampled_from(["a", "b"])),
    st.builds(lambda a: {"name": "charge", "arguments": {"amount": a}}, st.integers(0, 2)),
    st.just({"name": "echo", "arguments": '{"text": '}),  # malformed JSON
)
a_reply = st.one_of(
    st.builds(lambda t: {"text": t}, st.text(min_size=1, max_size=8)),
    st.builds(lambda cs, same: {"tool_calls": cs, "same_index": same}, st.lists(a_call, min_size=1, max_size=3), st.booleans()),
    st.builds(lambda s: {"status": s}, st.sampled_from([402, 429, 500, 503])),
)  # fmt: skip


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    replies=st.lists(a_reply, min_size=1, max_size=6),
    budget=st.integers(0, 4),
    max_rounds=st.integers(1, 5),
    consent=st.booleans(),
)
def test_any_model_behaviour_ends_cleanly(replies: list, budget: int, max_rounds: int, consent: bool) -> None:
    asyncio.run(scenario(replies, budget, max_rounds, consent))


PARTIAL_EXITS = {Exit.BUDGET, Exit.MAX_ROUNDS, Exit.REPEATED_CALL}


async def scenario(replies: list, budget: int, max_rounds: int, consent: bool) -> None:
    async def approver(call, spec, why) -> bool:
        return consent

    async with MockVenice({"replies": [*replies, {"text": "warm"}], "loop": True}) as fake:
        policy = RetryPolicy(sleep=no_wait, jitter=lambda: 0.5)
        async with VeniceClient("k", fake.base_url, retry=policy, http_client=fake.http_client()) as client:
            agent = Agent(
                client,
                tools(),
                AgentOptions(model="m", budget=budget, max_rounds=max_rounds, approver=approver),
            )
            before = copy.deepcopy(agent.history)
            receipt = await agent.ask("go")
    assert receipt.stopped_because is not Exit.CANCELLED  # nothing cancelled it: it stopped by itself
    if receipt.stopped_because is Exit.BUDGET:
        assert receipt.calls == budget  # the budget ends a model's run only once it is spent
    assert receipt.calls <= budget and receipt.rounds <= max_rounds
    assert all(seen.status != 400 for seen in fake.requests), [
        s.body for s in fake.requests if s.status == 400
    ]
    if receipt.stopped_because is Exit.ANSWERED or receipt.partial:
        # Kept: well-formed, ending on the answer (partial after budget, max_rounds, repeated_call).
        assert problem({"model": "m", "messages": agent.history}) is None
        assert agent.history[-1]["role"] == "assistant" and agent.history[-1]["content"] == receipt.answer
        assert not receipt.partial or receipt.stopped_because in PARTIAL_EXITS
    else:
        assert agent.history == before and receipt.refusal
    assert not any(step.tool == "charge" for step in receipt.steps) or consent
