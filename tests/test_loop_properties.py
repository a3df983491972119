"""Property tests: any plan, any tool behaviour, the loop keeps its promises."""

from __future__ import annotations

import asyncio
import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from venice_terminal_agent import Answer, Call, Exit, ToolError, run_loop

TOOL_NAMES = ["ok", "ok_async", "refuses", "raises", "missing"]

calls = st.builds(
    Call,
    tool=st.sampled_from(TOOL_NAMES),
    arguments=st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 2), max_size=2),
)
steps = st.one_of(calls, calls, calls, st.builds(Answer, st.text(max_size=5)))
plans = st.lists(steps, max_size=12)
budgets = st.integers(0, 8)


def make_tools(log: list[str]) -> dict:
    def ok(**kwargs: int) -> dict:
        log.append("ok")
        return {"got": kwargs}

    async def ok_async(**kwargs: int) -> str:
        log.append("ok_async")
        return "fine"

    def refuses(**kwargs: int) -> str:
        log.append("refuses")
        raise ToolError("no")

    def raises(**kwargs: int) -> str:
        log.append("raises")
        raise ValueError("boom")

    return {"ok": ok, "ok_async": ok_async, "refuses": refuses, "raises": raises}


def oracle(plan: list, budget: int) -> tuple[Exit, int]:
    """The specification, written as plainly as possible: the exit and the number of steps."""
    done = 0
    previous = None
    for step in plan:
        if isinstance(step, Answer):
            return Exit.ANSWERED, done
        if previous is not None and step.key() == previous.key():
            return Exit.REPEATED_CALL, done
        if done >= budget:
            return Exit.BUDGET, done
        previous = step
        if step.tool == "missing":
            return Exit.TOOL_ERROR, done
        done += 1
        if step.tool in ("refuses", "raises"):
            return Exit.TOOL_ERROR, done
    return Exit.BUDGET, done


@settings(max_examples=300, deadline=None)
@given(plan=plans, budget=budgets)
def test_every_run_keeps_the_promises(plan: list, budget: int) -> None:
    log: list[str] = []
    receipt = asyncio.run(run_loop(plan, make_tools(log), budget=budget))

    # Exactly one named exit, the one the specification gives, with the same steps.
    expected_exit, expected_steps = oracle(plan, budget)
    assert receipt.stopped_because is expected_exit
    assert len(receipt.steps) == expected_steps

    # Never more than the budget; no tool ran that is not a step (nothing after the exit).
    assert len(receipt.steps) <= budget
    assert log == [step.tool for step in receipt.steps]

    # Only an answer has an answer; every other exit has a refusal that says why.
    if receipt.stopped_because is Exit.ANSWERED:
        assert receipt.answer is not None and receipt.refusal is None
    else:
        assert receipt.answer is None and receipt.refusal

    # The receipt round-trips through JSON.
    data = receipt.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["stopped_because"] == str(receipt.stopped_because)


@settings(max_examples=200, deadline=None)
@given(plan=plans, budget=budgets)
def test_repeated_call_only_on_consecutive_equal_calls(plan: list, budget: int) -> None:
    receipt = asyncio.run(run_loop(plan, make_tools([]), budget=budget))
    calls_only = [s for s in plan if isinstance(s, Call)]
    if receipt.stopped_because is Exit.REPEATED_CALL:
        assert any(a.key() == b.key() for a, b in itertools.pairwise(calls_only))
        assert receipt.refusal and receipt.steps  # a repeat needs a call before it
    if not any(a.key() == b.key() for a, b in itertools.pairwise(calls_only)):
        assert receipt.stopped_because is not Exit.REPEATED_CALL
