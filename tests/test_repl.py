"""The REPL's own logic against a small stand-in agent: slash commands, questions, Ctrl+C.

The real agent, fake Venice server and a real MCP server drive the REPL in a pseudo-terminal
in `test_repl_pty.py`; these tests pin down what the loop itself decides.
"""

from __future__ import annotations

import asyncio
import io
import json
import signal

from venice_terminal_agent.core.events import EventSink, Finished, TextDelta
from venice_terminal_agent.core.receipt import Exit, Receipt
from venice_terminal_agent.core.toolbox import FunctionToolbox
from venice_terminal_agent.fronts.terminal.render import make_console
from venice_terminal_agent.fronts.terminal.repl import Repl


class StandInAgent:
    """Answers by echoing; `hold` makes a question wait until cancelled (then it rolls back)."""

    def __init__(self) -> None:
        self.tools = FunctionToolbox({"echo": lambda text: text})
        self.history: list[dict[str, str]] = []
        self.started = asyncio.Event()
        self.hold = False

    async def ask(
        self, question: str, *, events: EventSink | None = None, budget: int | None = None
    ) -> Receipt:
        before = list(self.history)
        self.history.append({"role": "user", "content": question})
        self.started.set()
        try:
            if self.hold:
                await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.history[:] = before
            receipt = Receipt((), Exit.CANCELLED, refusal="cancelled before an answer", rounds=1)
        else:
            answer = f"you said [{question}]"
            self.history.append({"role": "assistant", "content": answer})
            if events:
                events(TextDelta(answer))
            receipt = Receipt((), Exit.ANSWERED, answer=answer, rounds=1)
        if events:
            events(Finished(receipt))
        return receipt

    def clear(self) -> None:
        self.history.clear()


def lines_from(*lines: str | BaseException):
    queue = list(lines)

    async def read_line() -> str:
        if not queue:
            raise EOFError
        item = queue.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    return read_line


def repl(*lines: str | BaseException, **kwargs) -> tuple[Repl, StandInAgent, io.StringIO]:
    agent = StandInAgent()
    out = io.StringIO()
    return Repl(agent, make_console(file=out, width=100), lines_from(*lines), **kwargs), agent, out


async def test_a_question_is_answered_and_its_receipt_kept_for_slash_receipt() -> None:
    loop, agent, out = repl("hello [there]", "/receipt")
    await loop.run()
    text = out.getvalue()
    assert "you said [hello [there]]\nstopped: answered · 0 calls · 1 round\n" in text
    receipt_json = text[text.index("{") :]
    assert json.loads(receipt_json)["answer"] == "you said [hello [there]]"
    assert len(agent.history) == 2


async def test_slash_commands() -> None:
    loop, agent, out = repl(
        "one", "/tools", "/clear", "/receipt", "/nope", "/recipt", "/help", "/quit", "never asked"
    )
    await loop.run()
    text = out.getvalue()
    assert "asks echo" in text  # the stand-in's tool is not read-only
    assert "conversation cleared" in text and agent.history == []
    assert "no question asked yet" in text
    assert "unknown command /nope; /help lists them" in text
    assert "unknown command /recipt; did you mean /receipt? (/help lists them)" in text
    assert "/reload" in text and "Ctrl+C while a question runs cancels it" in text
    assert "never asked" not in text


async def test_blank_lines_are_ignored_and_end_of_input_or_ctrl_c_at_the_prompt_leaves() -> None:
    loop, agent, _ = repl("", "   ", KeyboardInterrupt(), "never asked")
    await loop.run()
    assert agent.history == []


async def test_reload_reports_new_tools_and_survives_a_failure() -> None:
    agent = StandInAgent()
    out = io.StringIO()
    calls = 0

    async def reload() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            agent.tools = FunctionToolbox({"echo": str, "new-actor": str})
        else:
            raise RuntimeError("apify stopped")

    loop = Repl(agent, make_console(file=out, width=100), lines_from("/reload", "/reload"), reload=reload)
    await loop.run()
    text = out.getvalue()
    assert "2 tools; new: new-actor" in text
    assert "reload failed: apify stopped" in text


async def test_ctrl_c_during_a_question_cancels_it_and_the_next_question_works() -> None:
    agent = StandInAgent()
    agent.hold = True
    out = io.StringIO()
    asked = asyncio.Event()
    queue: list[str] = ["long question", "second"]

    async def read_line() -> str:
        if not queue:
            raise EOFError
        if len(queue) == 1:
            agent.hold = False
        asked.set()
        return queue.pop(0)

    async def press_ctrl_c() -> None:
        await agent.started.wait()
        signal.raise_signal(signal.SIGINT)  # what the terminal sends; the REPL must survive it

    loop = Repl(agent, make_console(file=out, width=100), read_line)
    await asyncio.gather(loop.run(), press_ctrl_c())
    text = out.getvalue()
    assert "cancelled before an answer\nstopped: cancelled · 0 calls · 1 round" in text
    assert "you said [second]" in text
    assert [m["content"] for m in agent.history] == ["second", "you said [second]"]
