"""Property tests: any plan, any tool behaviour, the loop keeps its promises.

The oracle is the specification written plainly and on its own terms: two calls are equal when
their tools match and their arguments are equal dicts (keys in any order); it never asks the
code it checks (`Call.key()`). Plans hold parallel batches as well as single calls.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from hypothesis import example, given, settings
from hypothesis import strategies as st

from venice_terminal_agent import Answer, Call, Exit, Outcome, ToolError, run_loop

TOOL_NAMES = ["ok", "ok_async", "refuses", "raises", "missing"]
FAILING = ("refuses", "raises")

arguments = st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 2), max_size=2)
calls = st.builds(Call, tool=st.sampled_from(TOOL_NAMES), arguments=arguments)
batches = st.lists(calls, min_size=2, max_size=3)
moves = st.one_of(calls, calls, calls, batches, st.builds(Answer, st.text(max_size=5)))
plans = st.lists(moves, max_size=10)
budgets = st.integers(0, 8)


class Moves:
    """A fixed plan whose moves may be parallel batches (a list of calls); with `recovers`, tool
    errors come back to it as outcomes, as they do to the LLM planner."""

    def __init__(self, plan: list, recovers: bool = False) -> None:
        self.plan = list(plan)
        self.recovers = recovers

    async def next(self, outcomes: Sequence[Outcome]) -> object:
        return self.plan.pop(0) if self.plan else None


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


def same(a: Call, b: Call) -> bool:
    return a.tool == b.tool and a.arguments == b.arguments  # dict equality: key order is irrelevant


def oracle(plan: list, budget: int, recovers: bool = False) -> tuple[Exit, int]:
    """DESIGN §1, as plainly as possible: the exit and the number of steps."""
    done = 0
    previous: Call | None = None
    failing: set[str] = set()  # tools that failed in the previous round (a recovering planner)
    for move in plan:
        if isinstance(move, Answer):
            return Exit.ANSWERED, done
        batch = [move] if isinstance(move, Call) else move
        ran: list[Call] = []
        refused: list[str] = []  # unknown tools handed back to a recovering planner
        stop = None
        for call in batch:  # each call of a batch is checked in turn, before any of them runs
            if previous is not None and same(call, previous):
                stop = Exit.REPEATED_CALL
                break
            if done + len(ran) >= budget:
                stop = Exit.BUDGET
                break
            previous = call
            if call.tool == "missing":
                if not recovers:
                    stop = Exit.TOOL_ERROR  # refused before it counts: not a step
                    break
                refused.append(call.tool)
                continue
            ran.append(call)
        done += len(ran)  # the calls that passed run (in parallel) and are steps
        failed = {call.tool for call in ran if call.tool in FAILING} | set(refused)
        if failed and not recovers:
            return Exit.TOOL_ERROR, done
        # The same tool failing in two consecutive rounds ends it; a success of it in a round clears it.
        now = failed - {call.tool for call in ran if call.tool not in FAILING}
        if now & failing:
            return Exit.TOOL_ERROR, done
        failing = now
        if stop is not None:
            return stop, done
    return Exit.BUDGET, done


@settings(max_examples=300, deadline=None)
@given(plan=plans, budget=budgets)
# The same arguments written in another key order are the same call.
@example(plan=[Call("ok", {"a": 1, "b": 2}), Call("ok", {"b": 2, "a": 1}), Answer("x")], budget=5)
@example(plan=[[Call("ok", {"a": 0, "b": 1}), Call("ok", {"b": 1, "a": 0})], Answer("x")], budget=5)
# Exit order: a repeat is named before the budget, the budget before an unknown tool.
@example(plan=[Call("ok", {"a": 1}), Call("ok", {"a": 1})], budget=1)
@example(plan=[Call("ok", {}), Call("missing", {})], budget=1)
@example(plan=[[Call("ok", {}), Call("missing", {}), Call("ok_async", {})]], budget=5)
# A failure inside a batch still lets the calls before it run, and ends the run.
@example(plan=[[Call("ok", {}), Call("refuses", {})], Answer("x")], budget=5)
def test_every_run_keeps_the_promises(plan: list, budget: int) -> None:
    log: list[str] = []
    receipt = asyncio.run(run_loop(Moves(plan), make_tools(log), budget=budget))

    # Exactly one named exit, the one the specification gives, with the same steps.
    assert (receipt.stopped_because, len(receipt.steps)) == oracle(plan, budget)

    # Never more than the budget; no tool ran that is not a step (nothing after the exit).
    assert len(receipt.steps) <= budget
    assert sorted(log) == sorted(step.tool for step in receipt.steps)

    # Only an answer has an answer; every other exit has a refusal that says why.
    if receipt.stopped_because is Exit.ANSWERED:
        assert receipt.answer is not None and receipt.refusal is None
    else:
        assert receipt.answer is None and receipt.refusal

    # The receipt round-trips through JSON.
    data = receipt.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["stopped_because"] == str(receipt.stopped_because)


@settings(max_examples=300, deadline=None)
@given(plan=plans, budget=budgets)
# Fail, succeed, fail: never two consecutive rounds of failure.
@example(plan=[Call("refuses", {"a": 0}), Call("ok", {}), Call("refuses", {"a": 1}), Answer("x")], budget=5)
# Fail, fail (another round): tool_error. Two failures in one round are one round.
@example(plan=[Call("refuses", {"a": 0}), Call("refuses", {"a": 1}), Answer("x")], budget=5)
@example(plan=[[Call("raises", {"a": 0}), Call("raises", {"a": 1})], Answer("x")], budget=5)
# An unknown tool is handed back, not a step; twice in a row, it ends the run.
@example(plan=[Call("missing", {"a": 0}), Call("missing", {"a": 1})], budget=5)
def test_a_recovering_planner_keeps_the_promises(plan: list, budget: int) -> None:
    log: list[str] = []
    receipt = asyncio.run(run_loop(Moves(plan, recovers=True), make_tools(log), budget=budget))
    assert (receipt.stopped_because, len(receipt.steps)) == oracle(plan, budget, recovers=True)
    assert len(receipt.steps) <= budget
    assert sorted(log) == sorted(step.tool for step in receipt.steps)
