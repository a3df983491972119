"""The loop's exits, one test each, and the rules that order them."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import time
from collections.abc import Callable, Iterator, Sequence

import pytest

from venice_terminal_agent import Answer, Call, Exit, Outcome, Receipt, Step, Stop, ToolError, run_loop
from venice_terminal_agent.core import observe
from venice_terminal_agent.core.events import (
    Finished,
    RoundStarted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    tool_progress,
)
from venice_terminal_agent.core.pager import Pager
from venice_terminal_agent.core.receipt import CallOutcome, Proposed


class Recorder:
    """Tools that record every call they get."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def tools(self) -> dict:
        def echo(text: str = "") -> str:
            self.calls.append(("echo", {"text": text}))
            return text

        async def add(a: int, b: int) -> int:
            self.calls.append(("add", {"a": a, "b": b}))
            return a + b

        def refuse(reason: str = "no") -> str:
            self.calls.append(("refuse", {"reason": reason}))
            raise ToolError(f"refused: {reason}")

        def crash() -> str:
            self.calls.append(("crash", {}))
            raise RuntimeError("disk on fire")

        return {"echo": echo, "add": add, "refuse": refuse, "crash": crash}


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


async def test_answered_after_calls(rec: Recorder) -> None:
    plan = [Call("echo", {"text": "hi"}), Call("add", {"a": 1, "b": 2}), Answer("3")]
    receipt = await run_loop(plan, rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.ANSWERED
    assert receipt.answer == "3"
    assert receipt.refusal is None
    assert [s.result for s in receipt.steps] == ["hi", 3]
    assert rec.calls == [("echo", {"text": "hi"}), ("add", {"a": 1, "b": 2})]


async def test_answer_is_never_counted_as_a_call(rec: Recorder) -> None:
    receipt = await run_loop([Answer("right away")], rec.tools(), budget=0)
    assert receipt.stopped_because is Exit.ANSWERED
    assert receipt.steps == ()
    assert rec.calls == []


async def test_repeated_call_stops_before_the_second_identical_call(rec: Recorder) -> None:
    plan = [Call("add", {"a": 1, "b": 2}), Call("add", {"b": 2, "a": 1}), Answer("3")]
    receipt = await run_loop(plan, rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.REPEATED_CALL
    assert len(receipt.steps) == 1
    assert len(rec.calls) == 1
    assert (
        receipt.refusal
        == "stopped before calling add again with the same arguments as the call just before it"
    )


async def test_same_call_not_consecutive_is_not_a_repeat(rec: Recorder) -> None:
    plan = [
        Call("echo", {"text": "a"}),
        Call("echo", {"text": "b"}),
        Call("echo", {"text": "a"}),
        Answer("ok"),
    ]
    receipt = await run_loop(plan, rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.ANSWERED
    assert len(rec.calls) == 3


async def test_answer_after_a_repeat_is_still_a_repeat(rec: Recorder) -> None:
    # The repeat comes first in the plan, so the answer after it is never reached.
    plan = [Call("echo", {"text": "x"}), Call("echo", {"text": "x"}), Answer("late")]
    receipt = await run_loop(plan, rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.REPEATED_CALL
    assert receipt.answer is None


async def test_repeat_wins_over_a_spent_budget(rec: Recorder) -> None:
    # Budget 1 is spent after the first call; the repeat is tested before the budget.
    plan = [Call("echo", {"text": "x"}), Call("echo", {"text": "x"})]
    receipt = await run_loop(plan, rec.tools(), budget=1)
    assert receipt.stopped_because is Exit.REPEATED_CALL


async def test_budget_is_checked_before_the_call(rec: Recorder) -> None:
    plan = [Call("echo", {"text": str(i)}) for i in range(10)] + [Answer("never")]
    receipt = await run_loop(plan, rec.tools(), budget=3)
    assert receipt.stopped_because is Exit.BUDGET
    assert len(receipt.steps) == 3
    assert len(rec.calls) == 3  # never one call too many
    assert receipt.refusal == "stopped before call 4: the budget of 3 tool calls is spent"


async def test_budget_zero_makes_no_call(rec: Recorder) -> None:
    receipt = await run_loop([Call("echo", {"text": "x"}), Answer("no")], rec.tools(), budget=0)
    assert receipt.stopped_because is Exit.BUDGET
    assert receipt.steps == ()
    assert rec.calls == []


async def test_budget_wins_over_an_unknown_tool(rec: Recorder) -> None:
    receipt = await run_loop([Call("echo", {}), Call("nope", {})], rec.tools(), budget=1)
    assert receipt.stopped_because is Exit.BUDGET


async def test_plan_exhausted_without_answer_stops_on_budget(rec: Recorder) -> None:
    receipt = await run_loop([Call("echo", {"text": "x"})], rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.BUDGET
    assert len(receipt.steps) == 1
    assert receipt.refusal == "the plan ran out without an answer after 1 call"


async def test_empty_plan_stops_on_budget() -> None:
    receipt = await run_loop([], {}, budget=5)
    assert receipt.stopped_because is Exit.BUDGET
    assert receipt.steps == ()


async def test_unknown_tool_is_refused_before_it_counts(rec: Recorder) -> None:
    receipt = await run_loop(
        [Call("echo", {}), Call("search", {"q": "x"}), Answer("no")], rec.tools(), budget=5
    )
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert [s.tool for s in receipt.steps] == ["echo"]  # the unknown call is not a step
    # It says which tools there are, so the model (or the person) can pick a real one.
    assert receipt.refusal == "there is no tool named 'search' (tools: add, crash, echo, refuse)"


@pytest.mark.parametrize(
    ("count", "listed"),
    [
        (0, "none"),
        (20, ", ".join(f"t{n:02}" for n in range(20))),
        (21, ", ".join(f"t{n:02}" for n in range(20)) + " …"),  # the first 20, in order, and more
    ],
)
async def test_an_unknown_tools_refusal_lists_at_most_twenty_tools(count: int, listed: str) -> None:
    tools = {f"t{n:02}": (lambda: "ok") for n in reversed(range(count))}
    receipt = await run_loop([Call("search", {})], tools)
    assert receipt.refusal == f"there is no tool named 'search' (tools: {listed})"


async def test_tool_that_refuses_is_the_last_step(rec: Recorder) -> None:
    receipt = await run_loop([Call("refuse", {"reason": "quota"}), Answer("no")], rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert receipt.steps[-1] == Step("refuse", {"reason": "quota"}, None, "refused: quota")
    assert receipt.refusal.startswith("refuse ")
    assert "quota" in receipt.refusal


async def test_tool_that_raises_anything_is_a_refusal_not_a_crash(rec: Recorder) -> None:
    receipt = await run_loop([Call("crash", {})], rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert receipt.steps[-1].error == "RuntimeError: disk on fire"
    assert "crash" in receipt.refusal


async def test_bad_arguments_are_a_refusal(rec: Recorder) -> None:
    receipt = await run_loop([Call("add", {"a": 1})], rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert "invalid arguments" in receipt.steps[-1].error
    assert rec.calls == []


async def test_sync_and_async_tools_both_run(rec: Recorder) -> None:
    receipt = await run_loop(
        [Call("echo", {"text": "s"}), Call("add", {"a": 2, "b": 2}), Answer("ok")], rec.tools()
    )
    assert [s.result for s in receipt.steps] == ["s", 4]


async def test_receipt_to_dict_is_json_ready(rec: Recorder) -> None:
    receipt = await run_loop([Call("add", {"a": 1, "b": 2}), Answer("3")], rec.tools())
    data = json.loads(json.dumps(receipt.to_dict()))
    assert {"steps", "stopped_because", "answer", "refusal"} <= set(data)
    assert data["stopped_because"] == "answered"
    assert data["steps"] == [{"tool": "add", "arguments": {"a": 1, "b": 2}, "result": 3, "error": None}]


async def test_the_receipt_says_how_long_the_run_took(rec: Recorder) -> None:
    before = time.perf_counter()
    receipt = await run_loop([Call("echo", {"text": "a"}), Answer("done")], rec.tools())
    took = time.perf_counter() - before
    assert receipt.duration is not None and 0 <= receipt.duration <= took


async def test_events_report_each_call_and_the_end(rec: Recorder) -> None:
    seen: list = []
    receipt = await run_loop([Call("echo", {"text": "a"}), Answer("done")], rec.tools(), events=seen.append)
    kinds = [type(e) for e in seen]
    assert kinds == [RoundStarted, ToolStarted, ToolFinished, RoundStarted, Finished]
    assert seen[-1] == Finished(receipt)


async def test_each_finished_call_event_carries_its_result_or_its_error(rec: Recorder) -> None:
    # What the fronts show of a call as it ends (the terminal's result line, "failed").
    seen: list = []
    echo, refuse = Call("echo", {"text": "a"}), Call("refuse", {"reason": "quota"})
    await run_loop(ScriptedPlanner([[echo, refuse]], recovers=True), rec.tools(), events=seen.append)
    assert [e for e in seen if isinstance(e, ToolFinished)] == [
        ToolFinished(echo, "a", None),
        ToolFinished(refuse, None, "refused: quota"),
    ]


async def test_a_running_tools_progress_reaches_the_events_as_reported() -> None:
    # As an MCP server's progress notifications do: the toolbox reports through `tool_progress`.
    async def index(path: str) -> str:
        report = tool_progress.get()
        assert report is not None
        report(2, 5, "Analyzing content")
        return "indexed"

    seen: list = []
    call = Call("index", {"path": "."})
    await run_loop([call, Answer("ok")], {"index": index}, events=seen.append)
    assert [e for e in seen if isinstance(e, ToolProgress)] == [ToolProgress(call, 2, 5, "Analyzing content")]


async def test_long_results_are_cut_into_pages(rec: Recorder) -> None:
    pager = Pager(page_chars=100)
    receipt = await run_loop([Call("echo", {"text": "x" * 250}), Answer("ok")], rec.tools(), pager=pager)
    first = receipt.steps[0].result
    assert first.startswith("x" * 100)
    assert "150 more characters in page ids 2-3" in first
    assert pager.get(3).startswith("x" * 50)


class ScriptedPlanner:
    """A planner that proposes batches and records the outcomes it is shown."""

    def __init__(self, moves: list, recovers: bool = False) -> None:
        self.moves = list(moves)
        self.recovers = recovers
        self.seen: list[list[Outcome]] = []

    async def next(self, outcomes: Sequence[Outcome]):
        self.seen.append(list(outcomes))
        return self.moves.pop(0) if self.moves else None


async def test_batch_runs_in_parallel_and_outcomes_come_back_in_order() -> None:
    started = asyncio.Event()
    both = asyncio.Event()
    running = 0

    async def slow(n: int) -> int:
        nonlocal running
        running += 1
        if running == 2:
            both.set()
        await both.wait()  # only returns when both calls run at the same time
        started.set()
        return n

    planner = ScriptedPlanner([[Call("slow", {"n": 1}), Call("slow", {"n": 2})], Answer("ok")])
    receipt = await asyncio.wait_for(run_loop(planner, {"slow": slow}, budget=5), timeout=5)
    assert receipt.stopped_because is Exit.ANSWERED
    assert [o.result for o in planner.seen[1]] == [1, 2]


async def test_batch_checked_call_by_call_repeat_inside_batch(rec: Recorder) -> None:
    batch = [Call("echo", {"text": "a"}), Call("echo", {"text": "a"}), Call("echo", {"text": "b"})]
    receipt = await run_loop(ScriptedPlanner([batch, Answer("no")]), rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.REPEATED_CALL
    assert rec.calls == [("echo", {"text": "a"})]
    # The repeat and the rest of its batch are on the receipt, not run, with the reason.
    why = "stopped before calling echo again with the same arguments as the call just before it"
    assert [(p.arguments["text"], p.outcome, p.why) for p in receipt.proposed] == [
        ("a", CallOutcome.RAN, None),
        ("a", CallOutcome.NOT_RUN, why),
        ("b", CallOutcome.NOT_RUN, why),
    ]


async def test_batch_budget_checked_before_each_call(rec: Recorder) -> None:
    batch = [Call("echo", {"text": str(i)}) for i in range(4)]
    receipt = await run_loop(ScriptedPlanner([batch]), rec.tools(), budget=2)
    assert receipt.stopped_because is Exit.BUDGET
    assert len(rec.calls) == 2
    # The receipt lists the calls the budget left out, each with the reason (docs/loop.md).
    why = "stopped before call 3: the budget of 2 tool calls is spent"
    assert receipt.refusal == why
    assert [(p["arguments"]["text"], p["outcome"], p.get("why")) for p in receipt.to_dict()["proposed"]] == [
        ("0", "ran", None),
        ("1", "ran", None),
        ("2", "not_run", why),
        ("3", "not_run", why),
    ]


async def test_recovering_planner_sees_errors_and_stops_on_second_failure_in_a_row(rec: Recorder) -> None:
    planner = ScriptedPlanner(
        [[Call("refuse", {"reason": "1"})], [Call("refuse", {"reason": "2"})], Answer("never")], recovers=True
    )
    receipt = await run_loop(planner, rec.tools(), budget=5)
    assert planner.seen[1][0].error == "refused: 1"  # the first failure went back to the planner
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert "twice in a row" in receipt.refusal


async def test_a_success_in_between_starts_the_failure_count_over(rec: Recorder) -> None:
    # fail, succeed, fail: the same tool never failed in two consecutive rounds.
    planner = ScriptedPlanner(
        [
            [Call("refuse", {"reason": "1"})],
            [Call("echo", {"text": "fine"})],
            [Call("refuse", {"reason": "2"})],
            Answer("recovered"),
        ],
        recovers=True,
    )
    receipt = await run_loop(planner, rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.ANSWERED, receipt.refusal
    assert [s.tool for s in receipt.steps] == ["refuse", "echo", "refuse"]


async def test_a_planner_is_told_which_calls_ran_failed_ones_included(rec: Recorder) -> None:
    # `Outcome.ran`: the call ran and is a step, whether it worked, refused or raised; a call
    # to no such tool never ran.
    batch = [Call("echo", {"text": "a"}), Call("refuse", {}), Call("crash", {}), Call("nope", {})]
    planner = ScriptedPlanner([batch, Answer("seen")], recovers=True)
    receipt = await run_loop(planner, rec.tools(), budget=5)
    assert [(o.call.tool, o.ran, o.failed) for o in planner.seen[1]] == [
        ("echo", True, False),
        ("refuse", True, True),
        ("crash", True, True),
        ("nope", False, True),
    ]
    assert [s.tool for s in receipt.steps] == ["echo", "refuse", "crash"]


async def test_recovering_planner_recovers_from_one_failure(rec: Recorder) -> None:
    planner = ScriptedPlanner(
        [[Call("nope", {})], [Call("refuse", {})], [Call("echo", {"text": "ok"})], Answer("fine")],
        recovers=True,
    )
    receipt = await run_loop(planner, rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.ANSWERED
    assert "no tool named 'nope'" in planner.seen[1][0].error
    assert [s.tool for s in receipt.steps] == ["refuse", "echo"]  # the unknown call was not a step


async def test_malformed_call_goes_back_to_a_recovering_planner(rec: Recorder) -> None:
    bad = Call("echo", {}, malformed="arguments are not valid JSON")
    planner = ScriptedPlanner([[bad], Answer("sorry")], recovers=True)
    receipt = await run_loop(planner, rec.tools(), budget=5)
    assert receipt.stopped_because is Exit.ANSWERED
    assert "not valid JSON" in planner.seen[1][0].error
    assert rec.calls == []


async def test_declined_call_does_not_run_and_is_reported(rec: Recorder) -> None:
    asked: list[Call] = []

    async def approve(call: Call) -> bool:
        asked.append(call)
        return call.tool != "add"

    planner = ScriptedPlanner(
        [[Call("add", {"a": 1, "b": 1}), Call("echo", {"text": "y"})], Answer("ok")], recovers=True
    )
    receipt = await run_loop(planner, rec.tools(), budget=5, approve=approve)
    assert [c.tool for c in asked] == ["add", "echo"]
    assert rec.calls == [("echo", {"text": "y"})]
    assert planner.seen[1][0].declined
    assert planner.seen[1][0].error == "the user declined this call; it did not run"  # what the model reads
    assert [s.tool for s in receipt.steps] == ["echo"]
    assert [p.outcome for p in receipt.proposed] == [CallOutcome.DECLINED, CallOutcome.RAN]


@pytest.mark.parametrize(
    ("middle", "outcome", "why"),
    [
        (Call("nope", {}), CallOutcome.INVALID, "there is no tool named 'nope' (tools: add, crash, echo, refuse)"),
        (Call("add", {"a": 1, "b": 1}), CallOutcome.DECLINED, "add did not run: the user declined this call, so the plan stops here"),
    ],
)  # fmt: skip
async def test_a_call_that_stops_a_fixed_plans_batch_leaves_the_rest_not_run(
    rec: Recorder, middle: Call, outcome: CallOutcome, why: str
) -> None:
    # An unknown tool, or a declined call: the calls after it in the batch are listed not run.
    async def approve(call: Call) -> bool:
        return call.tool != "add"

    batch = [Call("echo", {"text": "a"}), middle, Call("echo", {"text": "b"})]
    receipt = await run_loop(ScriptedPlanner([batch, Answer("no")]), rec.tools(), approve=approve)
    assert (receipt.stopped_because, receipt.refusal) == (Exit.TOOL_ERROR, why)
    assert [(p.tool, p.outcome, p.why) for p in receipt.proposed] == [
        ("echo", CallOutcome.RAN, None),
        (middle.tool, outcome, None),
        ("echo", CallOutcome.NOT_RUN, why),
    ]
    assert rec.calls == [("echo", {"text": "a"})]


@pytest.mark.parametrize("verdict", [False, CallOutcome.RAN])
async def test_an_approver_that_does_not_say_yes_never_gets_a_call_run(
    rec: Recorder, verdict: object
) -> None:
    # Only `True` is a yes: an approver answering "ran" (no reason why not) is a no as well.
    async def approve(call: Call) -> object:
        return verdict

    receipt = await run_loop([Call("echo", {"text": "x"}), Answer("as if")], rec.tools(), approve=approve)
    assert (receipt.stopped_because, rec.calls) == (Exit.TOOL_ERROR, [])
    assert receipt.refusal == "echo did not run: the user declined this call, so the plan stops here"
    assert [p.outcome for p in receipt.proposed] == [CallOutcome.DECLINED]


async def test_a_planner_that_does_not_say_it_recovers_stops_at_the_first_tool_error(rec: Recorder) -> None:
    class Bare:  # only `next`: the Planner protocol, nothing more
        def __init__(self) -> None:
            self.moves = [[Call("refuse", {"reason": "quota"})], Answer("never")]

        async def next(self, outcomes: Sequence[Outcome]) -> object:
            return self.moves.pop(0)

    receipt = await run_loop(Bare(), rec.tools(), budget=5)
    assert (receipt.stopped_because, receipt.refusal) == (Exit.TOOL_ERROR, "refuse refused: refused: quota")


async def test_a_declined_call_ends_a_fixed_plan_on_tool_error_instead_of_answering(rec: Recorder) -> None:
    async def approve(call: Call) -> bool:
        return call.tool != "add"

    plan = [Call("echo", {"text": "x"}), Call("add", {"a": 1, "b": 1}), Answer("as if it ran")]
    receipt = await run_loop(plan, rec.tools(), budget=5, approve=approve)
    assert receipt.stopped_because is Exit.TOOL_ERROR and receipt.answer is None
    assert receipt.refusal == "add did not run: the user declined this call, so the plan stops here"
    assert rec.calls == [("echo", {"text": "x"})]


async def test_max_rounds(rec: Recorder) -> None:
    planner = ScriptedPlanner([[Call("echo", {"text": str(i)})] for i in range(10)], recovers=True)
    receipt = await run_loop(planner, rec.tools(), budget=50, max_rounds=3)
    assert receipt.stopped_because is Exit.MAX_ROUNDS
    assert receipt.rounds == 3
    assert len(rec.calls) == 3
    assert receipt.refusal == "no answer after 3 rounds (the round limit is 3)"


class ConcludingPlanner(ScriptedPlanner):
    """A planner that, like the model's, gets one last round to answer from what it gathered
    when the run stops on `budget`, `max_rounds` or `repeated_call`: `last` is what it gives."""

    def __init__(self, moves: list, last: object, recovers: bool = True) -> None:
        super().__init__(moves, recovers)
        self.last = last
        self.reasons: list[str] = []

    async def conclude(self, outcomes: Sequence[Outcome], reason: str) -> object:
        self.reasons.append(reason)
        return self.last


BUDGET_1 = "stopped before call 2: the budget of 1 tool call is spent"


async def test_after_a_budget_stop_the_planner_answers_from_what_it_has_marked_partial(rec: Recorder) -> None:
    seen: list = []
    planner = ConcludingPlanner(
        [[Call("echo", {"text": "a"})], [Call("echo", {"text": "b"})]], Answer("a, so far")
    )
    receipt = await run_loop(planner, rec.tools(), budget=1, events=seen.append)
    assert (receipt.stopped_because, receipt.answer, receipt.partial) == (Exit.BUDGET, "a, so far", True)
    assert receipt.refusal == BUDGET_1  # the receipt still says why it stopped
    assert planner.reasons == [BUDGET_1]  # and the planner is told, to say so in its answer
    # The last request is a round like the others: counted, and numbered in turn for the fronts.
    assert [e.round for e in seen if isinstance(e, RoundStarted)] == [1, 2, 3]
    assert receipt.rounds == 3


async def test_a_last_answer_cut_short_keeps_both_reasons_and_the_calls_it_left_out(rec: Recorder) -> None:
    left_out = Proposed("echo", {"text": "c"}, CallOutcome.NOT_RUN, "not run: no round was left")
    cut = Stop(Exit.ANSWERED, "1 proposed call did not run (echo)", answer="a, so", unrun=(left_out,))
    planner = ConcludingPlanner([[Call("echo", {"text": "a"})], [Call("echo", {"text": "b"})]], cut)
    receipt = await run_loop(planner, rec.tools(), budget=1)
    assert (receipt.stopped_because, receipt.answer, receipt.partial) == (Exit.BUDGET, "a, so", True)
    assert receipt.refusal == f"{BUDGET_1}; 1 proposed call did not run (echo)"
    assert receipt.proposed[-1] == left_out
    assert receipt.rounds == 3


@pytest.mark.parametrize(
    ("last", "rounds"),
    [
        (None, 2),  # no request was made (the money cap): not a round
        (Stop(Exit.MODEL_ERROR, "the server failed"), 3),  # the request failed: no answer to keep
    ],
)
async def test_without_a_last_answer_the_run_ends_on_its_own_exit_and_reason(
    rec: Recorder, last: object, rounds: int
) -> None:
    planner = ConcludingPlanner([[Call("echo", {"text": "a"})], [Call("echo", {"text": "b"})]], last)
    receipt = await run_loop(planner, rec.tools(), budget=1)
    assert (receipt.stopped_because, receipt.answer, receipt.partial) == (Exit.BUDGET, None, False)
    assert receipt.refusal == BUDGET_1
    assert receipt.rounds == rounds


async def test_the_last_round_is_kept_for_the_partial_answer(rec: Recorder) -> None:
    # A round limit of 3 with a planner that concludes: 2 rounds of calls, the third answers.
    planner = ConcludingPlanner([[Call("echo", {"text": str(i)})] for i in range(10)], Answer("so far"))
    receipt = await run_loop(planner, rec.tools(), budget=50, max_rounds=3)
    assert (receipt.stopped_because, receipt.answer, receipt.partial) == (Exit.MAX_ROUNDS, "so far", True)
    assert receipt.refusal == "no answer after 2 rounds (the round limit is 3)"
    assert (len(rec.calls), receipt.rounds) == (2, 3)


async def test_with_one_round_there_is_none_to_keep_and_no_call_runs_unread(rec: Recorder) -> None:
    # One round: nothing is kept back, and the calls it proposes would have no round to read
    # their results in, so they do not run (nor spend), and no last request is made.
    planner = ConcludingPlanner([[Call("echo", {"text": "a"}), Call("add", {"a": 1, "b": 1})]], Answer("x"))
    receipt = await run_loop(planner, rec.tools(), budget=50, max_rounds=1)
    why = (
        "stopped before running 2 proposed calls: the round limit is 1 round, "
        "so no round is left to read their results"
    )
    assert (receipt.stopped_because, receipt.refusal, receipt.answer) == (Exit.MAX_ROUNDS, why, None)
    assert (rec.calls, planner.reasons, receipt.rounds) == ([], [], 1)
    assert [(p.tool, p.outcome, p.why) for p in receipt.proposed] == [
        ("echo", CallOutcome.NOT_RUN, why),
        ("add", CallOutcome.NOT_RUN, why),
    ]


async def test_a_planner_without_a_last_round_runs_its_calls_in_every_round(rec: Recorder) -> None:
    # No `conclude`: nothing is kept back, and the calls of the last round run.
    planner = ScriptedPlanner([[Call("echo", {"text": str(i)})] for i in range(10)], recovers=True)
    receipt = await run_loop(planner, rec.tools(), budget=50, max_rounds=1)
    assert (receipt.stopped_because, len(rec.calls), receipt.rounds) == (Exit.MAX_ROUNDS, 1, 1)


async def test_planner_stop_ends_the_run() -> None:
    planner = ScriptedPlanner([Stop(Exit.MODEL_ERROR, "401: the key was rejected")])
    receipt = await run_loop(planner, {}, budget=5)
    assert receipt.stopped_because is Exit.MODEL_ERROR
    assert receipt.refusal == "401: the key was rejected"
    assert (receipt.answer, receipt.partial) == (None, False)


async def test_a_planner_stop_with_an_answer_keeps_it_marked_partial_with_the_calls_left_out() -> None:
    # The answer cut at the model's output limit: kept, partial, and the cut turn's calls listed.
    left_out = Proposed("echo", {"text": "a"}, CallOutcome.NOT_RUN, "not run: the answer was cut")
    planner = ScriptedPlanner([Stop(Exit.OUTPUT_LIMIT, "cut at 3 tokens", "Prag", unrun=(left_out,))])
    receipt = await run_loop(planner, {}, budget=5)
    assert (receipt.stopped_because, receipt.answer, receipt.partial) == (Exit.OUTPUT_LIMIT, "Prag", True)
    assert receipt.proposed == (left_out,)


async def test_cancellation_mid_tool_ends_with_a_cancelled_receipt() -> None:
    entered = asyncio.Event()

    async def hang() -> str:
        entered.set()
        await asyncio.Event().wait()
        return "never"

    task = asyncio.create_task(run_loop([Call("hang", {}), Answer("no")], {"hang": hang}, budget=5))
    await entered.wait()
    task.cancel()
    receipt: Receipt = await task
    assert receipt.stopped_because is Exit.CANCELLED
    assert receipt.steps[0].error == "cancelled while running"
    assert receipt.refusal == "cancelled before the answer was finished"


async def test_negative_budget_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match=r"^budget must be >= 0$"):
        await run_loop([], {}, budget=-1)


async def test_a_plan_step_that_is_neither_a_call_nor_an_answer_is_named_in_the_error(rec: Recorder) -> None:
    # A plan written by hand in Python: the error says what was found instead of a step.
    plan = [Call("echo", {"text": "a"}), {"tool": "echo", "arguments": {}}]
    with pytest.raises(TypeError, match=r"^a plan holds Call and Answer steps, not dict$"):
        await run_loop(plan, rec.tools(), budget=5)


def test_every_exit_has_its_own_documented_status() -> None:
    from venice_terminal_agent.core.receipt import EXIT_STATUS, USAGE_ERROR_STATUS

    assert set(EXIT_STATUS) == set(Exit)
    assert EXIT_STATUS[Exit.ANSWERED] == 0
    statuses = list(EXIT_STATUS.values())
    assert len(set(statuses)) == len(statuses)
    assert USAGE_ERROR_STATUS not in statuses and 1 not in statuses


async def test_two_differently_malformed_calls_are_not_a_repeat(rec: Recorder) -> None:
    first = Call("echo", {}, malformed='arguments are not valid JSON: {"text": ')
    second = Call("echo", {}, malformed="arguments are not valid JSON: {text: 'a'}")
    planner = ScriptedPlanner([[first], [second], Answer("gave up")], recovers=True)
    receipt = await run_loop(planner, rec.tools(), budget=5)
    # Not a repeat: the second failure of the same tool in a row is what ends the run.
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert "twice in a row" in receipt.refusal


def files_tools(ran: list[str]) -> dict:
    def read(path: str) -> str:
        ran.append(path)
        if path.startswith("missing"):
            raise ToolError(f"no such file: {path}")
        return f"contents of {path}"

    return {"read": read, **Recorder().tools()}


async def test_two_failures_of_one_tool_in_one_parallel_round_are_one_round() -> None:
    ran: list[str] = []
    batch = [Call("read", {"path": "missing-1"}), Call("read", {"path": "missing-2"})]
    planner = ScriptedPlanner([batch, [Call("read", {"path": "notes"})], Answer("found")], recovers=True)
    receipt = await run_loop(planner, files_tools(ran), budget=5)
    assert receipt.stopped_because is Exit.ANSWERED and ran == ["missing-1", "missing-2", "notes"]


async def test_the_same_tool_failing_in_two_consecutive_rounds_ends_the_run() -> None:
    planner = ScriptedPlanner(
        [[Call("read", {"path": "missing-1"})], [Call("read", {"path": "missing-2"})], Answer("never")],
        recovers=True,
    )
    receipt = await run_loop(planner, files_tools([]), budget=5)
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert receipt.refusal == "read failed twice in a row, in two consecutive rounds: no such file: missing-2"


async def test_a_success_of_that_tool_in_between_resets_the_count() -> None:
    moves = [
        [Call("read", {"path": "missing-1"})],
        [Call("read", {"path": "notes"})],
        [Call("read", {"path": "missing-2"})],
        [Call("read", {"path": "more"}), Call("read", {"path": "missing-3"})],  # it worked this round
        Answer("done"),
    ]
    receipt = await run_loop(ScriptedPlanner(moves, recovers=True), files_tools([]), budget=10)
    assert receipt.stopped_because is Exit.ANSWERED and receipt.calls == 5


async def test_other_tools_failing_in_between_do_not_add_up() -> None:
    moves = [
        [Call("read", {"path": "missing-1"})],
        [Call("refuse", {})],
        [Call("read", {"path": "missing-2"})],
    ]
    receipt = await run_loop(
        ScriptedPlanner([*moves, Answer("ok")], recovers=True), files_tools([]), budget=5
    )
    assert receipt.stopped_because is Exit.ANSWERED


async def test_a_plan_that_does_not_recover_stops_at_the_first_refusal() -> None:
    receipt = await run_loop([Call("read", {"path": "missing"}), Answer("no")], files_tools([]), budget=5)
    assert (
        receipt.stopped_because is Exit.TOOL_ERROR
        and receipt.refusal == "read refused: no such file: missing"
    )


def _sized(kind: str, size: int):
    """A result of JSON type `kind` whose JSON text is exactly `size` characters long."""
    if kind == "string":
        return "x" * size
    if kind == "list":  # ["x…x"]: 4 characters around the item
        return ["x" * (size - 4)]
    return {"k": "x" * (size - 9)}  # {"k": "x…x"}: 9 characters around the value


@pytest.mark.parametrize("kind", ["string", "list", "object"])
async def test_a_result_of_any_json_type_just_over_a_page_is_paged(kind: str) -> None:
    """Every long result is paged, not only text: a tool's long list or object would otherwise
    reach the model whole. One character over the page is cut; a page exactly is not."""
    pager = Pager(page_chars=100)
    results = {"over": _sized(kind, 101), "fits": _sized(kind, 100)}
    assert len(json.dumps(results["over"])) == 101 or kind == "string"  # the helper is right

    def give(which: str):
        return results[which]

    plan = [Call("give", {"which": "over"}), Call("give", {"which": "fits"}), Answer("ok")]
    receipt = await run_loop(plan, {"give": give}, pager=pager)
    over, fits = (step.result for step in receipt.steps)
    text = results["over"] if kind == "string" else json.dumps(results["over"], ensure_ascii=False)
    assert isinstance(over, str) and over.startswith(text[:100])
    assert "call page(id=2)" in over  # the note says where the rest is
    assert pager.get(2).startswith(text[100:])
    assert fits == results["fits"]  # a whole page is handed back as it came


async def test_a_result_is_measured_as_the_model_reads_it_in_characters_not_escapes() -> None:
    """Non-ASCII text in a list is counted as itself: 60 "é" fit a page of 100 characters (64
    with the brackets and quotes); counted as `\\u00e9` escapes they would not."""
    pager = Pager(page_chars=100)
    receipt = await run_loop([Call("give", {}), Answer("ok")], {"give": lambda: ["é" * 60]}, pager=pager)
    assert receipt.steps[0].result == ["é" * 60]


async def test_a_long_result_holding_a_value_json_cannot_write_is_paged_not_an_error() -> None:
    """A Python tool may hand back a date (or any object): a long result is still paged, the
    value written as text, instead of the call failing."""
    when = datetime.date(2026, 12, 4)
    pager = Pager(page_chars=100)
    plan = [Call("log", {}), Answer("ok")]
    receipt = await run_loop(plan, {"log": lambda: {"day": when, "text": "x" * 200}}, pager=pager)
    step = receipt.steps[0]
    assert step.error is None
    assert step.result.startswith('{"day": "2026-12-04", "text": "xxx')


@pytest.mark.parametrize("recovers", [True, False])
async def test_a_refusal_without_a_message_says_the_tool_gave_no_reason(recovers: bool) -> None:
    def read(path: str) -> str:
        raise ToolError("")

    moves = [[Call("read", {"path": "a"})], [Call("read", {"path": "b"})]]
    receipt = await run_loop(ScriptedPlanner(moves, recovers=recovers), {"read": read}, budget=5)
    assert receipt.refusal == (
        "read failed twice in a row, in two consecutive rounds: it gave no reason"
        if recovers
        else "read refused: it gave no reason"
    )


class Watching:
    """A watcher (`core.observe.Watcher`, as tracing installs one) that keeps what it is told."""

    def __init__(self) -> None:
        self.seen: list = []

    @contextlib.contextmanager
    def question(self, model: str | None, conversation: str | None) -> Iterator[Watching]:
        yield self

    def sink(self, emit: Callable[[object], None]) -> Callable[[object], None]:
        def seen(event: object) -> None:
            self.seen.append(("event", type(event).__name__))
            emit(event)

        return seen

    def finished(self, receipt: Receipt) -> None:
        self.seen.append(("question", receipt))

    @contextlib.contextmanager
    def tool(self, call: Call) -> Iterator[Callable[..., None]]:
        class Tool:
            def finished(_, result: object, error: str | None) -> None:
                self.seen.append(("tool", call.tool, result, error))

        yield Tool()


async def test_a_watcher_sees_each_calls_result_or_error_and_the_runs_receipt(rec: Recorder) -> None:
    watcher = Watching()
    previous = observe.install(watcher)
    try:
        mine: list = []
        plan = [Call("echo", {"text": "a"}), Call("refuse", {"reason": "quota"})]
        receipt = await run_loop(plan, rec.tools(), events=mine.append)
    finally:
        observe.install(previous)
    assert [item for item in watcher.seen if item[0] == "tool"] == [
        ("tool", "echo", "a", None),
        ("tool", "refuse", None, "refused: quota"),
    ]
    assert watcher.seen[-1] == ("question", receipt)
    # The events go through the watcher on their way to the caller's sink, all of them.
    assert [name for kind, name, *_ in watcher.seen if kind == "event"] == [type(e).__name__ for e in mine]
    assert mine[-1] == Finished(receipt)
