"""Consent at the terminal: default no, Ctrl+C and EOF are no, no terminal is no, --yes is yes."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from venice_terminal_agent.core.consent import Why
from venice_terminal_agent.core.receipt import Call, CallOutcome
from venice_terminal_agent.core.toolbox import ToolSpec
from venice_terminal_agent.core.wording import NO_TERMINAL_CONSENT, NO_TERMINAL_SAMPLING
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
