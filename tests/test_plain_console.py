"""Into a pipe or a file, make_console's console is a plain one that never imports Rich
(issue 21): it must write exactly the bytes Rich wrote there, for every kind of text."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from venice_terminal_agent.core.events import (
    Finished,
    Notice,
    RoundStarted,
    TextDelta,
    TextDiscarded,
    ToolFinished,
    ToolStarted,
)
from venice_terminal_agent.core.receipt import Call, Exit, Receipt, Step
from venice_terminal_agent.core.toolbox import ToolSpec
from venice_terminal_agent.fronts.terminal.plain_console import PlainConsole, say
from venice_terminal_agent.fronts.terminal.render import Renderer, banner, make_console, tools_table

TRICKY = [
    "",
    "plain words",
    "bell\x07 backspace\x08 vtab\x0b formfeed\x0c return\r end",  # Rich's Text drops these five
    "\rcarriage at the start",
    "tab\there\tand\t\tmore",  # expanded to the next stop of 8 cells
    "\tleading tab, 日本\tafter wide",
    "trailing spaces   ",
    "   leading spaces",
    "wide 日本語 and emoji 🎉✨ and ✓ ✗ → ·",
    "a" * 700 + " " + "b" * 300,  # no wrap in a pipe, whatever the width
    "[bold]not markup[/bold] [red] :smile: :thumbs_up: http://example.com/x?y=1 0x1f 123 True None",
    "escape \x1b[31mred\x1b[0m and \x1b]0;title\x07 and C1 \x9b",  # what safe() missed, if any
    "nul \x00 del \x7f unit \x1f",
    "lines\nof\ntext\n",
    "\n",
    "\n\n",
    "ends without newline\nsecond",
    "line separators \u2028 \u2029 \x85 stay",
    "combining e\u0301 zero width\u200b joiner 👩\u200d💻",
]


def rich_for_a_pipe(out: io.StringIO, width: int = 80) -> Console:
    """Rich's console as make_console built it for a pipe before the plain one existed."""
    console = Console(file=out, width=width, markup=False, emoji=False, highlight=False)
    assert not console.is_terminal
    console.soft_wrap = not console.is_terminal
    return console


def both(draw: Callable[[Any], None], width: int = 80) -> tuple[str, str]:
    """What `draw` writes through Rich's console for a pipe, and through make_console's."""
    rich_out, plain_out = io.StringIO(), io.StringIO()
    draw(rich_for_a_pipe(rich_out, width))
    plain = make_console(file=plain_out, width=width)
    assert isinstance(plain, PlainConsole)
    draw(plain)
    return rich_out.getvalue(), plain_out.getvalue()


def styled_line(console: Any, text: str, style: str | None, **options: Any) -> None:
    """One call site of ours as it printed before (a Rich Text) and as it prints now (say)."""
    if isinstance(console, PlainConsole):
        say(console, text, style or "", **options)
    else:
        console.print(Text(text, style=style or ""), **options)


@pytest.mark.parametrize("text", TRICKY, ids=range(len(TRICKY)))
@pytest.mark.parametrize(
    "how",
    [
        {"style": None},
        {"style": "dim"},
        {"style": "yellow", "soft_wrap": True},
        {"style": "dim", "end": ""},
        {"style": None, "end": "", "soft_wrap": True},
    ],
    ids=["text", "dim", "warning", "no-end", "no-end-soft"],
)
def test_a_line_of_ours_is_the_same_bytes_as_rich_wrote(text: str, how: dict[str, Any]) -> None:
    options = dict(how)
    style = options.pop("style")
    rich, plain = both(lambda console: styled_line(console, text, style, **options), width=40)
    assert plain == rich


@pytest.mark.parametrize("text", TRICKY, ids=range(len(TRICKY)))
def test_streamed_text_is_the_same_bytes_as_rich_wrote(text: str) -> None:
    def stream(console: Any) -> None:  # Renderer._write: a piece of the answer as it comes
        for piece in (text[:3], text[3:], text):
            console.print(piece, end="", markup=False, emoji=False, highlight=False, soft_wrap=True)

    rich, plain = both(stream)
    assert plain == rich


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.print(),
        lambda c: c.print(end=""),
        lambda c: c.print(""),
        lambda c: c.print("", end=""),
        lambda c: c.print("one", "two", "three"),
        lambda c: c.print("one", "two", sep=""),
        lambda c: c.print("one", "two", sep="\x07|\r"),  # the separator is a Text too: stripped
        lambda c: c.print("one", "\ttwo", sep=" "),
        lambda c: c.print("kept", "as", sep="\t"),
        lambda c: c.print("x\r", end="\r\n"),  # `end` is written as given
        lambda c: c.print("a" * 200, soft_wrap=False),  # wrapped at the width, as Rich does
        lambda c: c.print("a" * 200, overflow="ellipsis", no_wrap=True),
        lambda c: c.print(Text("a rich Text", style="bold")),
        lambda c: c.print("[b]x[/b] :smile:", markup=True, emoji=True),
        lambda c: say(c, [("free ", ""), ("read_file  ", ""), ("x" * 200, "dim")], "green", no_wrap=True),
    ],
    ids=[
        "newline", "nothing", "empty", "empty-no-end", "several", "no-sep", "control-sep", "tab-object",
        "tab-sep", "end-as-given", "no-soft-wrap", "ellipsis", "rich-text", "markup-asked", "pieces",
    ],
)  # fmt: skip
def test_every_form_of_print_is_the_same_bytes_as_rich_wrote(call: Callable[[Any], None]) -> None:
    rich, plain = both(call, width=50)
    assert plain == rich


def test_a_whole_question_renders_the_same_bytes_as_rich_wrote() -> None:
    call = Call("fetch", {"url": "https://example.com/\t[x]", "note": "日本 " * 40})
    receipt = Receipt(
        steps=(Step("fetch", {}, "r"),),
        stopped_because=Exit.BUDGET,
        answer="Paris\r\n\tis\x07 it",
        rounds=2,
        refusal="stopped: the budget of 1 call is used \x1b[0m",
        sources=({"title": "A [title]\x0c", "url": "https://a.example/x"},),
    )
    specs = [
        ToolSpec("read_file", "Read\ta file " * 20, read_only=True),
        ToolSpec("call-actor", server="apify"),
    ]

    def question(console: Any) -> None:
        banner(console, model="m[1]\x08", apify="anonymous", tools=specs, files="/tmp/x\ty", context="8k")
        show = Renderer(console)
        show(RoundStarted(1))
        show(TextDelta("Let me look \x07\t"))
        show(ToolStarted(call))
        show(ToolFinished(call, result={"body": "x" * 300}))
        show(ToolFinished(call, error="boom\r"))
        show(Notice("the model said \x0bsomething"))
        show(TextDelta("cut"))
        show(TextDiscarded())
        show(Finished(receipt))
        show.close()
        tools_table(console, specs)

    rich, plain = both(question, width=60)
    assert "Paris" in plain and "stopped:" in plain
    assert plain == rich


def test_pieces_print_on_a_terminal_as_the_text_built_before() -> None:
    """On a terminal `say` hands Rich a Text; a line of pieces is the Text tools_table built."""

    def terminal(out: io.StringIO) -> Console:
        return Console(file=out, force_terminal=True, color_system="truecolor", width=30, markup=False)

    before, now = io.StringIO(), io.StringIO()
    line = Text("asks ", style="yellow")
    line.append("call-actor  ")
    line.append("Run an Actor that costs money", style="dim")
    terminal(before).print(line, overflow="ellipsis", no_wrap=True)
    pieces = [("asks ", ""), ("call-actor  ", ""), ("Run an Actor that costs money", "dim")]
    say(terminal(now), pieces, "yellow", overflow="ellipsis", no_wrap=True)
    assert "\x1b[" in now.getvalue()  # really coloured
    assert now.getvalue() == before.getvalue()


def test_a_terminal_and_rich_s_own_overrides_keep_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal (a real pseudo-terminal here) the console is Rich's: colour, wrapping, the
    spinner. So it is when an environment variable makes Rich treat a pipe as a terminal."""
    leader, follower = os.openpty()
    with open(follower, "w", encoding="utf-8") as terminal:
        console = make_console(file=terminal)
        assert isinstance(console, Console) and console.is_terminal
    os.close(leader)
    for name, value in (("FORCE_COLOR", "1"), ("TTY_COMPATIBLE", "1")):
        with monkeypatch.context() as env:
            env.setenv(name, value)
            forced = make_console(file=io.StringIO())
            assert isinstance(forced, Console) and forced.is_terminal
    assert isinstance(make_console(file=io.StringIO()), PlainConsole)


def test_the_plain_console_leaves_the_rest_to_rich() -> None:
    """Anything it does not do itself is a real Rich console's, made as make_console makes it."""
    out = io.StringIO()
    console = make_console(file=out, width=33)
    assert not console.is_terminal and console.soft_wrap and not console.stderr
    assert console.width == 33 and "rich" in type(console.options).__module__
    assert make_console(stderr=True).file is sys.stderr


PROBE = """
import sys
from venice_terminal_agent.fronts.terminal.render import make_console
console = {console}
sys.stdin.readline()  # the reader has gone away by now
for _ in range(1000):
    console.print("a line of the answer " * 10)
print("not reached", file=sys.stderr)
"""


@pytest.mark.parametrize("kind", ["rich", "plain"])
def test_a_reader_that_goes_away_ends_the_command_as_rich_did(kind: str) -> None:
    """`venice-agent q | head -1`: Rich ended quietly with status 1; so does the plain console."""
    console = (
        "make_console()"
        if kind == "plain"
        else "__import__('rich.console').console.Console(markup=False, emoji=False, highlight=False)"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", PROBE.format(console=console)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    process.stdout.close()
    _, errors = process.communicate("go\n", timeout=60)
    assert (process.returncode, errors) == (1, "")
