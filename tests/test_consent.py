"""Consent decided in one place (`consent.Consent`): every rule, through `run_loop` and the agent,
on real MCP servers in memory and real files."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from mcp.server import MCPServer
from mcp.types import ToolAnnotations

from venice_terminal_agent import Call, Exit, run_loop
from venice_terminal_agent.core.consent import Consent, Why
from venice_terminal_agent.core.events import ConsentAsked, ConsentGiven
from venice_terminal_agent.core.receipt import CallOutcome
from venice_terminal_agent.core.toolbox import CombinedToolbox, FunctionToolbox, ToolSpec
from venice_terminal_agent.core.wording import NO_TERMINAL_LOCAL
from venice_terminal_agent.fronts.terminal.approver import LOCAL_DATA, TerminalApprover
from venice_terminal_agent.fronts.terminal.render import make_console
from venice_terminal_agent.mcp.server_config import ServerConfig
from venice_terminal_agent.mcp.toolbox import McpToolbox
from venice_terminal_agent.tools.builtin import builtin_toolbox


class Asked:
    """An approver that answers from a script and records what it was asked."""

    def __init__(self, answer: object = True) -> None:
        self.answer = answer
        self.asked: list[tuple[str, Why]] = []

    async def __call__(self, call, spec, why) -> bool:
        self.asked.append((call.tool, why))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer  # type: ignore[return-value]


def local_tools(ran: list[str]) -> FunctionToolbox:
    def look(q: str = "") -> str:
        ran.append("look")
        return "seen"

    def charge(amount: int = 1) -> str:
        ran.append("charge")
        return "charged"

    return FunctionToolbox({"look": look, "charge": charge}, read_only={"look"})


def search_server() -> MCPServer:
    server = MCPServer("search", version="0.1")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search(keywords: str) -> str:
        """Search the web (read-only, but it leaves the machine)."""
        return f"results for {keywords}"

    return server


async def test_a_read_only_tool_runs_without_asking() -> None:
    ran: list[str] = []
    approver = Asked(False)
    receipt = await run_loop([Call("look")], Consent(local_tools(ran), approver=approver))
    assert ran == ["look"] and approver.asked == []
    assert receipt.stopped_because is Exit.BUDGET  # the plan ran out after its one call


@pytest.mark.parametrize(("answer", "runs"), [(True, True), (False, False)])
async def test_a_paid_tool_asks_and_runs_only_on_a_yes(answer: bool, runs: bool) -> None:
    ran: list[str] = []
    approver = Asked(answer)
    events: list = []
    tools = Consent(local_tools(ran), approver=approver)
    await run_loop([Call("charge")], tools, events=events.append)
    assert approver.asked == [("charge", Why.PAID)]
    assert ran == (["charge"] if runs else [])


@pytest.mark.parametrize(
    "answer", [RuntimeError("the terminal went away"), KeyboardInterrupt(), "yes", 1, None]
)
async def test_an_approver_that_raises_or_says_anything_but_true_is_a_no(answer: object) -> None:
    ran: list[str] = []
    tools = Consent(local_tools(ran), approver=Asked(answer))
    assert await tools.approve(Call("charge")) is False
    assert ran == []


async def test_no_approver_means_no_and_yes_means_yes_without_asking() -> None:
    ran: list[str] = []
    assert await Consent(local_tools(ran)).approve(Call("charge")) is False
    approver = Asked(False)
    events: list = []
    yes = Consent(local_tools(ran), approver=approver, auto_approve=True)
    assert await yes.approve(Call("charge"), events=events.append) is True
    assert approver.asked == [] and [type(e) for e in events] == [ConsentGiven]


SAMPLING_REQUEST = Call("sampling", {"server": "everything", "request": "name a colour", "max_tokens": 40})


@pytest.mark.parametrize(("answer", "approved"), [(True, True), (False, False), (None, False)])
async def test_sampling_needs_a_persons_yes_and_yes_is_not_one(answer: object, approved: bool) -> None:
    """`--yes` approves the model's own calls, never a server's request to ask the model (rule
    5): with it, the person is still asked, and nobody to ask is a no."""
    approver = Asked(answer) if answer is not None else None
    for auto in (False, True):
        consent = Consent(local_tools([]), approver=approver, auto_approve=auto)
        got = await consent.approve_sampling(SAMPLING_REQUEST, "everything")
        assert got is approved, f"auto_approve={auto}"
    if approver is not None:
        assert [why for _, why in approver.asked] == [Why.SAMPLING, Why.SAMPLING]


async def test_a_sampling_request_is_shown_to_the_approver_as_the_request_of_its_server() -> None:
    seen = []

    async def approver(call, spec, why) -> bool:
        seen.append((call, spec.name, spec.server, why))
        return True

    assert await Consent(local_tools([]), approver=approver).approve_sampling(SAMPLING_REQUEST, "everything")
    assert seen == [(SAMPLING_REQUEST, "sampling", "everything", Why.SAMPLING)]


async def test_a_tool_the_toolbox_does_not_describe_asks() -> None:
    class Undescribed(FunctionToolbox):
        def specs(self):
            return []

    approver = Asked(False)
    tools = Consent(Undescribed({"mystery": lambda: "ran"}), approver=approver)
    assert await tools.approve(Call("mystery")) is False
    assert approver.asked == [("mystery", Why.PAID)]


async def test_run_loop_asks_the_wrapper_even_when_no_approve_is_passed() -> None:
    ran: list[str] = []
    receipt = await run_loop([Call("charge")], Consent(local_tools(ran), approver=Asked(False)))
    assert ran == [] and receipt.steps == ()


async def test_the_events_say_consent_was_asked_and_what_came_of_it() -> None:
    events: list = []
    tools = Consent(local_tools([]), approver=Asked(False))
    await tools.approve(Call("charge"), events=events.append)
    assert [type(e) for e in events] == [ConsentAsked, ConsentGiven] and events[1].approved is False
    assert [e.call for e in events] == [Call("charge")] * 2  # what the ACP front shows as pending
    events.clear()
    await Consent(local_tools([]), approver=Asked(True)).approve(Call("charge"), events=events.append)
    assert [type(e) for e in events] == [ConsentAsked, ConsentGiven] and events[1].approved is True


async def test_after_a_file_is_read_every_mcp_tool_asks_even_read_only(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("the launch code", encoding="utf-8")
    server = ServerConfig("search", in_memory=search_server(), trusted=True)
    approver = Asked(False)
    async with McpToolbox.open([server]) as box:
        tools = Consent(CombinedToolbox(builtin_toolbox(tmp_path), box), approver=approver)
        assert next(s for s in tools.specs() if s.name == "search").read_only
        # Before any file is read, the read-only search runs freely; a failed read brings nothing in.
        plan = [Call("search", {"keywords": "a"}), Call("read_file", {"path": "missing.txt"})]
        await run_loop(plan, tools)
        assert approver.asked == [] and tools.local_data is False
        plan = [Call("read_file", {"path": "secret.txt"}), Call("search", {"keywords": "the launch code"})]
        receipt = await run_loop(plan, tools)
    assert approver.asked == [("search", Why.LOCAL_DATA)]
    assert [s.tool for s in receipt.steps] == ["read_file"]  # declined: the search never ran
    assert tools.local_data is True
    tools.forget_local_data()
    assert tools.why(Call("search", {"keywords": "x"})) is None


async def test_the_local_data_rule_leaves_built_in_tools_alone(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    approver = Asked(False)
    tools = Consent(builtin_toolbox(tmp_path), approver=approver)
    receipt = await run_loop([Call("list_files"), Call("read_file", {"path": "a.txt"})], tools)
    assert [s.result for s in receipt.steps] == [["a.txt"], "a"] and approver.asked == []


async def test_the_terminal_says_why_a_read_only_tool_asks() -> None:
    out = io.StringIO()
    questions: list[str] = []

    async def ask(question: str) -> str:
        questions.append(question)
        return "n"

    approver = TerminalApprover(make_console(file=out, width=200), interactive=True, ask_line=ask)
    call = Call("search-actors", {"keywords": "secret"})
    assert await approver(call, None, Why.LOCAL_DATA) is False
    assert questions == [f'search-actors({{"keywords": "secret"}}) {LOCAL_DATA}. Run it? [y/N] ']
    assert LOCAL_DATA == "may send local file contents off this machine"


async def test_without_a_terminal_the_local_data_call_is_refused_and_says_why() -> None:
    out = io.StringIO()
    approver = TerminalApprover(make_console(file=out, width=200), interactive=False)
    assert await approver(Call("search-actors", {}), None, Why.LOCAL_DATA) is CallOutcome.NO_ONE_TO_ASK
    assert f"skipped search-actors: {NO_TERMINAL_LOCAL}" in out.getvalue()


async def test_a_yes_for_the_session_covers_that_tool_and_never_a_sampling_request() -> None:
    from venice_terminal_agent.core.consent import Grant

    approver = Asked(Grant.SESSION)
    tools = Consent(local_tools([]), approver=approver)
    assert await tools.decide(Call("charge", {"amount": 1})) is True
    assert await tools.decide(Call("charge", {"amount": 2})) is True  # not asked again
    assert approver.asked == [("charge", Why.PAID)] and tools.granted_for_session("charge")
    approver.answer = False
    assert await tools.approve_sampling(Call("sampling", {}), "srv") is False  # never granted for good
    approver.answer = Grant.SESSION
    assert await tools.approve_sampling(Call("sampling", {}), "srv") is False
    assert await tools.approve_sampling(Call("sampling", {}), "srv") is False
    assert [why for _, why in approver.asked].count(Why.SAMPLING) == 3


@pytest.mark.parametrize(
    ("tools", "outcome", "refusal"),
    [
        (
            lambda ran: Consent(local_tools(ran), approver=Asked(False)),
            "declined",
            "the user declined this call",
        ),
        (
            lambda ran: Consent(local_tools(ran), approver=Asked("yes")),
            "declined",
            "the user declined this call",
        ),
        (
            lambda ran: Consent(local_tools(ran)),
            "no_one_to_ask",
            "this call needs the user's yes and there was no one to ask",
        ),
        (
            lambda ran: Consent(local_tools(ran), approver=Asked(CallOutcome.NO_ONE_TO_ASK)),
            "no_one_to_ask",
            "this call needs the user's yes and there was no one to ask",
        ),
        (
            lambda ran: Consent(local_tools(ran), policy="this service asks nobody"),
            "refused_by_policy",
            "this call needs the user's yes, and this service asks nobody",
        ),
    ],
    ids=["declined", "not True", "no approver", "approver without a terminal", "policy"],
)
async def test_a_plan_stopped_by_a_no_says_which_no_it_was(tools, outcome: str, refusal: str) -> None:
    ran: list[str] = []
    receipt = await run_loop([Call("charge"), Call("look")], tools(ran))
    assert receipt.stopped_because is Exit.TOOL_ERROR and ran == []
    assert receipt.refusal == f"charge did not run: {refusal}, so the plan stops here"
    assert receipt.to_dict()["proposed"][0]["outcome"] == outcome


class Verdicts(FunctionToolbox):
    """A toolbox of its own consent (run_loop asks `approve` of any toolbox that has one), saying
    no with `verdict`, and no wording of its own: the loop words it."""

    def __init__(self, verdict: object) -> None:
        super().__init__({"charge": lambda amount=1: "charged"})
        self.verdict = verdict

    async def approve(self, call: Call, **_: object) -> object:
        return self.verdict


@pytest.mark.parametrize(
    ("verdict", "refusal"),
    [
        (False, "the user declined this call"),
        (CallOutcome.DECLINED, "the user declined this call"),
        (CallOutcome.INVALID, "the user declined this call"),  # any other no is a no, never a crash
        (CallOutcome.NOT_RUN, "the user declined this call"),
        (CallOutcome.NO_ONE_TO_ASK, "this call needs the user's yes and there was no one to ask"),
        (CallOutcome.REFUSED_BY_POLICY, "this call needs the user's yes, and this setup runs no such call"),
    ],
)
async def test_a_toolbox_saying_no_its_own_way_gets_the_same_words(verdict: object, refusal: str) -> None:
    receipt = await run_loop([Call("charge")], Verdicts(verdict))
    assert receipt.stopped_because is Exit.TOOL_ERROR
    assert receipt.refusal == f"charge did not run: {refusal}, so the plan stops here"


async def test_only_a_file_tools_result_is_local_data_not_another_built_in_tools(tmp_path: Path) -> None:
    server = ServerConfig("search", in_memory=search_server(), trusted=True)
    approver = Asked(False)
    ran: list[str] = []
    async with McpToolbox.open([server]) as box:
        tools = Consent(CombinedToolbox(local_tools(ran), box), approver=approver)
        receipt = await run_loop([Call("look"), Call("search", {"keywords": "seen"})], tools)
    assert approver.asked == [] and ran == ["look"]  # `look` stays on this machine: no file read
    assert [s.tool for s in receipt.steps] == ["look", "search"]


async def test_a_servers_own_tool_in_its_sampling_request_asks_by_its_own_description() -> None:
    """The model, answering a server's sampling request, may call the server's own tools (the
    server runs them): described by the server, not by this toolbox, they ask like any call."""
    approver = Asked(False)
    tools = Consent(local_tools([]), approver=approver)
    free = ToolSpec("weather", server="srv", read_only=True)
    assert await tools.approve(Call("weather", {"city": "Paris"}), spec=free) is True
    assert approver.asked == []  # read-only by the server's own description: no question
    paid = ToolSpec("book", server="srv")
    assert await tools.approve(Call("book"), spec=paid) is False
    assert approver.asked == [("book", Why.PAID)]


@pytest.mark.parametrize(
    ("consent", "approved"),
    [
        (lambda: Consent(local_tools([]), approver=Asked(False), auto_approve=True), True),  # --yes
        (lambda: Consent(local_tools([]), approver=Asked(True), policy="this service asks nobody"), False),
    ],
    ids=["--yes", "policy"],
)
async def test_a_call_decided_without_asking_says_so_in_one_event(consent, approved: bool) -> None:
    events: list = []
    await consent().approve(Call("charge"), events=events.append)
    assert events == [ConsentGiven(Call("charge"), approved)]


async def test_a_yes_for_the_session_is_an_event_of_a_yes_each_later_time() -> None:
    from venice_terminal_agent.core.consent import Grant

    tools = Consent(local_tools([]), approver=Asked(Grant.SESSION))
    await tools.approve(Call("charge", {"amount": 1}))
    events: list = []
    await tools.approve(Call("charge", {"amount": 2}), events=events.append)
    assert events == [ConsentGiven(Call("charge", {"amount": 2}), True)]


class Listed(FunctionToolbox):
    """A server's tools as a cached list first showed them (all asking), until `settle` (the
    server started and listed) or `refresh` (it said its list changed) reads the real one."""

    def __init__(self) -> None:
        super().__init__({"lookup": lambda: "found"})
        self.real = False

    def specs(self):
        return [spec.replace(read_only=self.real) for spec in super().specs()]

    async def settle(self) -> None:
        self.real = True

    async def refresh(self) -> bool:
        self.real = True
        return True


async def test_consent_goes_by_the_servers_own_list_once_it_has_started() -> None:
    approver = Asked(False)
    receipt = await run_loop([Call("lookup")], Consent(Listed(), approver=approver))
    assert approver.asked == [] and [s.result for s in receipt.steps] == ["found"]


async def test_a_list_the_server_changed_reaches_consent_through_the_wrapper() -> None:
    tools = Consent(Listed(), approver=Asked(False))
    assert tools.why(Call("lookup")) is Why.PAID
    assert await tools.refresh() is True
    assert tools.why(Call("lookup")) is None
