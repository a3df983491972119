"""Consent at the terminal: default no, Ctrl+C and EOF are no, no terminal is no, --yes is yes."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from venice_terminal_agent.core.consent import Grant, Why
from venice_terminal_agent.core.receipt import Call, CallOutcome
from venice_terminal_agent.core.toolbox import ToolSpec
from venice_terminal_agent.core.wording import (
    LOCAL_DATA,
    NO_TERMINAL_CONSENT,
    NO_TERMINAL_LOCAL,
    NO_TERMINAL_SAMPLING,
)
from venice_terminal_agent.fronts.terminal.approver import TerminalApprover
from venice_terminal_agent.fronts.terminal.render import make_console

ASKING_PAGE = Path(__file__).resolve().parent.parent / "docs" / "asking.md"

CALL = Call("call-actor", {"actor": "apify/rag-web-browser", "input": {"query": "x" * 500}})
SPEC = ToolSpec("call-actor", server="apify", paid=True)


class Answers:
    """Scripted answers to the prompt; records each question asked."""

    def __init__(self, *answers: str | BaseException) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    async def __call__(self, question: str) -> str:
        self.questions.append(question)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def approver(
    *answers: str | BaseException, **options: object
) -> tuple[TerminalApprover, Answers, io.StringIO]:
    out = io.StringIO()
    ask = Answers(*answers)
    options.setdefault("interactive", True)
    return TerminalApprover(make_console(file=out, width=200), ask_line=ask, **options), ask, out  # type: ignore[arg-type]


@pytest.mark.parametrize("answer", ["y", "Y", "yes", " yes "])
async def test_yes_approves(answer: str) -> None:
    approve, _, _ = approver(answer)
    assert await approve(CALL, SPEC) is True


@pytest.mark.parametrize("answer", ["", "n", "no", "sure", "yy"])
async def test_anything_but_yes_declines_and_says_so(answer: str) -> None:
    approve, _, out = approver(answer)
    assert await approve(CALL, SPEC) is False
    assert "declined call-actor" in out.getvalue()


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt(), EOFError()])
async def test_ctrl_c_or_end_of_input_at_the_prompt_means_no(interrupt: BaseException) -> None:
    approve, _, _ = approver(interrupt)
    assert await approve(CALL, SPEC) is False


async def test_the_prompt_names_the_tool_and_previews_240_characters_of_arguments() -> None:
    approve, ask, out = approver("n")
    await approve(CALL, SPEC)
    question = ask.questions[0]
    assert question.startswith("Run call-actor(")
    assert question.endswith(")? [y/N] ")
    shown = question[len("Run call-actor(") : -len(")? [y/N] ")]
    assert len(shown) == 240 and shown.endswith("…")
    assert "call-actor on apify is not known to be free" in out.getvalue()


async def test_control_characters_in_arguments_do_not_reach_the_prompt_raw() -> None:
    approve, ask, _ = approver("n")
    await approve(Call("x\x1b[2J", {"a": "\x1b]0;title\x07"}), None)
    assert "\x1b" not in ask.questions[0] and "\x07" not in ask.questions[0]


async def test_without_a_terminal_paid_tools_are_refused_in_the_words_the_manual_quotes() -> None:
    approve, ask, out = approver(interactive=False)
    assert await approve(CALL, SPEC) is CallOutcome.NO_ONE_TO_ASK
    assert ask.questions == []
    said = "skipped call-actor: it needs your consent, and there is no terminal to ask on (or use --yes)"
    assert said in out.getvalue() and said.endswith(NO_TERMINAL_CONSENT)
    assert f'"{said}"' in " ".join(ASKING_PAGE.read_text(encoding="utf-8").split())


async def test_without_a_terminal_a_tool_not_known_to_cost_money_needs_consent_not_money() -> None:
    approve, _, out = approver(interactive=False)
    assert await approve(Call("echo", {}), ToolSpec("echo", server="everything")) is CallOutcome.NO_ONE_TO_ASK
    assert "skipped echo: it needs your consent, and there is no terminal to ask on (or use --yes)" in (
        out.getvalue()
    )
    assert "paid" not in out.getvalue()


async def test_prompts_come_one_at_a_time() -> None:
    release = asyncio.Event()
    active = 0
    most = 0

    async def slow(question: str) -> str:
        nonlocal active, most
        active += 1
        most = max(most, active)
        await release.wait()
        active -= 1
        return "y"

    out = io.StringIO()
    approve = TerminalApprover(make_console(file=out), interactive=True, ask_line=slow)
    both = asyncio.gather(approve(CALL, SPEC), approve(Call("other", {}), None))
    await asyncio.sleep(0)
    release.set()
    assert await both == [True, True]
    assert most == 1


SAMPLING = Call("sampling", {"request": "name a colour", "max_tokens": 40})


@pytest.mark.parametrize(
    ("spec", "who"), [(ToolSpec("sampling", server="everything"), "everything"), (None, "a server")]
)
async def test_without_a_terminal_a_sampling_request_is_declined_naming_the_server(
    spec: ToolSpec | None, who: str
) -> None:
    approve, ask, out = approver(interactive=False)
    assert await approve(SAMPLING, spec, Why.SAMPLING) is CallOutcome.NO_ONE_TO_ASK
    assert ask.questions == []
    assert f"declined {who}'s sampling request: {NO_TERMINAL_SAMPLING}" in out.getvalue()


async def test_on_a_colour_terminal_a_refusal_without_a_terminal_to_ask_on_is_yellow() -> None:
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="standard", width=200)
    approve = TerminalApprover(console, interactive=False)
    await approve(SAMPLING, None, Why.SAMPLING)
    await approve(CALL, SPEC)
    refusals = [line for line in out.getvalue().splitlines() if line.strip()]
    assert len(refusals) == 2 and all(line.startswith("\x1b[33m") for line in refusals), refusals


# -- a server's sampling request, asked in a terminal ---------------------------------------


@pytest.mark.parametrize(("answer", "approved"), [("y", True), ("yes", True), ("", False), ("n", False)])
async def test_a_sampling_request_says_who_asks_what_and_how_many_tokens_then_asks(
    answer: str, approved: bool
) -> None:
    approve, ask, out = approver(answer)
    assert await approve(SAMPLING, ToolSpec("sampling", server="everything"), Why.SAMPLING) is approved
    assert ask.questions == ["Send it to the model? [y/N] "]  # a yes for the session is never offered
    said = out.getvalue().splitlines()
    assert said[:2] == [
        "everything asks the model (up to 40 tokens, on this question's account):",
        "  name a colour",
    ]
    assert ("declined everything's sampling request" in out.getvalue()) is not approved


async def test_a_sampling_request_from_no_named_server_is_from_a_server() -> None:
    approve, _, out = approver("n", for_session=True)
    assert await approve(SAMPLING, ToolSpec("sampling", server=""), Why.SAMPLING) is False
    assert out.getvalue().startswith("a server asks the model (up to 40 tokens")
    assert "declined a server's sampling request" in out.getvalue()


async def test_a_yes_for_the_session_never_covers_sampling() -> None:
    approve, ask, _ = approver("a", for_session=True)
    assert await approve(SAMPLING, None, Why.SAMPLING) is False
    assert "(a = yes" not in ask.questions[0]


async def test_a_sampling_request_shows_400_characters_on_one_line_with_no_control_characters() -> None:
    request = Call("sampling", {"request": "line one\n" + "x" * 500, "max_tokens": 7})
    approve, _, out = approver("n")
    await approve(request, ToolSpec("sampling", server="evil\x1b[2J"), Why.SAMPLING)
    header, shown = out.getvalue().splitlines()[:2]
    assert header == "evil\\x1b[2J asks the model (up to 7 tokens, on this question's account):"
    assert shown.startswith("  line one xxx") and len(shown) == 2 + 400 and shown.endswith("…")


async def test_a_sampling_request_waits_for_a_call_being_asked_about() -> None:
    release = asyncio.Event()
    asked: list[str] = []

    async def slow(question: str) -> str:
        asked.append(question)
        if len(asked) == 1:
            await release.wait()
        return "n"

    approve = TerminalApprover(make_console(file=io.StringIO()), interactive=True, ask_line=slow)
    both = asyncio.gather(approve(CALL, SPEC), approve(SAMPLING, None, Why.SAMPLING))
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(asked) == 1  # the sampling question waits its turn
    release.set()
    assert await both == [False, False]
    assert asked[1] == "Send it to the model? [y/N] "


# -- local data, where the tool runs, and a yes for the session -----------------------------


async def test_a_call_that_may_send_local_data_says_so_in_its_question_not_that_it_is_paid() -> None:
    approve, ask, out = approver("y")
    assert await approve(Call("fetch", {"url": "https://x"}), SPEC, Why.LOCAL_DATA) is True
    assert ask.questions == [f'fetch({{"url": "https://x"}}) {LOCAL_DATA}. Run it? [y/N] ']
    assert "not known to be free" not in out.getvalue()


@pytest.mark.parametrize(("spec", "line"), [
    (ToolSpec("echo", server="everything"), "echo on everything is not known to be free"),
    (ToolSpec("echo", server="ev\x1bil"), "echo on ev\\x1bil is not known to be free"),
    (ToolSpec("echo", server=None), "echo is not known to be free"),
    (ToolSpec("echo", server=""), "echo is not known to be free"),
    (None, "echo is not known to be free"),
])  # fmt: skip
async def test_the_paid_line_names_the_server_the_tool_runs_on_when_there_is_one(
    spec: ToolSpec | None, line: str
) -> None:
    approve, _, out = approver("n")
    await approve(Call("echo", {}), spec)
    assert out.getvalue().splitlines()[0] == f"{line}: it may spend money or change things."


@pytest.mark.parametrize("answer", ["a", "A", " always "])
async def test_in_a_session_a_is_yes_for_the_rest_of_it_and_says_so(answer: str) -> None:
    approve, ask, out = approver(answer, for_session=True)
    assert await approve(CALL, SPEC) is Grant.SESSION
    assert ask.questions[0].endswith("? [y/N] (a = yes to it for this session) ")
    assert "yes to call-actor for the rest of this session" in out.getvalue()
    assert "declined" not in out.getvalue()


@pytest.mark.parametrize(("answer", "result"), [("y", True), ("n", False), ("", False)])
async def test_in_a_session_y_and_n_still_answer_for_this_call_only(answer: str, result: bool) -> None:
    approve, _, out = approver(answer, for_session=True)
    assert await approve(CALL, SPEC) is result
    assert "for the rest of this session" not in out.getvalue()
    assert ("declined call-actor" in out.getvalue()) is not result


async def test_in_a_session_a_local_data_call_offers_a_yes_for_the_session_too() -> None:
    approve, ask, _ = approver("always", for_session=True)
    assert await approve(Call("fetch", {}), None, Why.LOCAL_DATA) is Grant.SESSION
    assert ask.questions == [f"fetch({{}}) {LOCAL_DATA}. Run it? [y/N] (a = yes to it for this session) "]


async def test_outside_a_session_a_is_not_a_yes() -> None:
    approve, ask, out = approver("a")
    assert await approve(CALL, SPEC) is False
    assert "(a = yes" not in ask.questions[0] and "declined call-actor" in out.getvalue()


async def test_without_a_terminal_a_local_data_call_is_refused_saying_why() -> None:
    approve, ask, out = approver(interactive=False)
    assert await approve(Call("fetch", {}), None, Why.LOCAL_DATA) is CallOutcome.NO_ONE_TO_ASK
    assert ask.questions == []
    assert f"skipped fetch: {NO_TERMINAL_LOCAL}" in out.getvalue()


async def test_on_a_colour_terminal_what_a_question_is_about_is_yellow() -> None:
    """The line that says why a call or a server's sampling request is asked about stands out
    in yellow above its question; the preview and the question are plain."""
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="standard", width=200)
    approve = TerminalApprover(console, interactive=True, ask_line=Answers("n", "n"))
    await approve(SAMPLING, None, Why.SAMPLING)
    await approve(CALL, SPEC)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    yellow = [line for line in lines if line.startswith("\x1b[33m")]
    assert len(yellow) == 2, lines
    assert "asks the model" in yellow[0] and "is not known to be free" in yellow[1]
    assert lines[1].startswith("  name a colour")


async def test_on_a_colour_terminal_a_no_and_a_yes_for_the_session_are_dim() -> None:
    """What follows an answer (declined, or a yes for the rest of the session) is said quietly."""
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="standard", width=200)
    approve = TerminalApprover(console, interactive=True, ask_line=Answers("n", "a"), for_session=True)
    assert await approve(CALL, SPEC) is False
    assert await approve(Call("other", {}), None) is Grant.SESSION
    dim = [line for line in out.getvalue().splitlines() if line.startswith("\x1b[2m")]
    assert len(dim) == 2 and "declined call-actor" in dim[0], out.getvalue()
    assert "yes to other for the rest of this session" in dim[1]


async def test_a_refusal_without_a_terminal_to_ask_on_is_one_line_on_a_narrow_terminal() -> None:
    """The refusal is the line docs/asking.md quotes for grep: never wrapped, whatever the width."""
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system=None, width=40)
    approve = TerminalApprover(console, interactive=False)
    await approve(CALL, SPEC)
    assert out.getvalue() == f"skipped call-actor: {NO_TERMINAL_CONSENT}\n"
